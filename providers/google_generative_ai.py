"""The ``google-generative-ai`` wire protocol (Gemini ``streamGenerateContent?alt=sse``).

Request: ``POST {baseUrl}/models/{id}:streamGenerateContent?alt=sse`` with ``contents``
(roles ``user``/``model``), ``systemInstruction``, ``tools[].functionDeclarations`` (full JSON
schema as ``parametersJsonSchema``), ``toolConfig`` and ``generationConfig`` (max output tokens,
temperature, ``thinkingConfig`` by model family: a level for Gemini 3, a budget for 2.x).
Thought signatures are replayed only to the same model and only when they are valid base64.

This module builds the request; :mod:`providers.google_generative_ai_stream` decodes the stream
(:class:`GeminiDecoder`, re-exported here with :func:`new_tool_call_id`).
"""

from __future__ import annotations

import binascii
import re

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
from baton.providers.google_generative_ai_stream import GeminiDecoder
from baton.providers.google_generative_ai_stream import new_tool_call_id as new_tool_call_id  # re-exported
from baton.providers.json_types import JsonArray, JsonObject, JsonValue
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import (
    Model,
    ThinkingLevel,
    accepted_efforts,
    clamp_thinking_level,
    least_effort,
    nearest_effort,
    supports_temperature,
)
from baton.providers.options import StreamOptions, ToolChoice
from baton.providers.tool_ids import IdNormalizer, normalize_safe64
from baton.providers.web_search import offers_search
from baton.providers.wire_cache import WireSlot, encode, encode_body
from baton.providers.wire_common import merge_headers
from baton.providers.wire_common import sanitize_surrogates as sanitize

API = "google-generative-ai"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_GEMINI_MAJOR = re.compile(r"^(?:models/)?gemini(?:-live)?-(\d+)")
_GEMINI3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
_JSON_SCHEMA_META = frozenset({"$schema", "$id", "$anchor", "$comment"})

_GEMINI_LEVELS = ("minimal", "low", "medium", "high")
"""The ``thinkingLevel`` values (upper-cased on the wire); 2.5's budget tables have the same keys."""
_BUDGETS: tuple[tuple[str, dict[str, int]], ...] = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
"""Gemini 2.5's thinking budgets by family, the first whose name the model id contains."""


def is_valid_signature(signature: str | None) -> bool:
    """Thought signatures are bytes on the wire: only well-formed base64 may be sent back."""
    if not signature or len(signature) % 4 or not _BASE64.fullmatch(signature):
        return False
    try:
        binascii.a2b_base64(signature)
    except binascii.Error:
        return False
    return True


SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""Google's sentinel for function calls Gemini 3 did not sign itself (pi sends it too)."""


def gemini_major_version(model_id: str) -> int | None:
    """``3`` for ``gemini-3-pro-preview``; ``None`` for non-Gemini ids."""
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


# ---------------------------------------------------------------------------------------------
# Request


class GoogleGenerativeAiAdapter:
    """The ``google-generative-ai`` :class:`~providers.adapter.WireAdapter`."""

    api = API

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        """``^[a-zA-Z0-9_-]{1,64}$``, as Anthropic's."""
        return normalize_safe64

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        """POST ``{baseUrl}/models/{id}:streamGenerateContent?alt=sse``."""
        base: dict[str, str] = {"content-type": "application/json", "accept": "text/event-stream"}
        if api_key:
            base["x-goog-api-key"] = api_key
        headers = merge_headers(base, model.headers, options.headers)
        encoded = _encoded_body(model, context, options)
        if encoded is None:
            return HttpRequest(url=stream_url(model), headers=headers, body=build_body(model, context, options))
        return HttpRequest(
            stream_url(model), headers, encoded=encoded, expand=lambda: build_body(model, context, options)
        )

    def create_decoder(self, model: Model, builder: MessageBuilder) -> GeminiDecoder:
        """A fresh decoder for one response."""
        return GeminiDecoder(model, builder)


def stream_url(model: Model) -> str:
    """``{baseUrl}/models/{id}:streamGenerateContent?alt=sse``."""
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    model_id = model.id.removeprefix("models/")
    return f"{base}/models/{model_id}:streamGenerateContent?alt=sse"


def build_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The ``GenerateContentRequest`` body (REST field names, camelCase) for ``context``."""
    return _body(model, context, options, list[JsonValue](convert_messages(model, context)))


def _body(model: Model, context: Context, options: StreamOptions, contents: JsonArray) -> JsonObject:
    """The body around its ``contents``."""
    body: JsonObject = {"contents": contents}
    if context.system_prompt:
        body["systemInstruction"] = {"role": "user", "parts": [{"text": sanitize(context.system_prompt)}]}
    if context.tools:
        body["tools"] = convert_tools(context.tools)
        config = tool_config(options.tool_choice, context.tools)
        if config is not None:
            body["toolConfig"] = config
    if offers_search(API, model.base_url, "generativelanguage.googleapis.com", model.compat, options.web_search) and (
        not context.tools or _SEARCH_WITH_FUNCTIONS.search(model.id) or (model.compat or {}).get("webSearch") is True
    ):
        tools = body.get("tools")
        body["tools"] = [*(tools if isinstance(tools, list) else []), {"googleSearch": {}}]
        if context.tools:  # a built-in tool beside functions: the API wants the server's calls shown
            present = body.get("toolConfig")
            body["toolConfig"] = {**(present if isinstance(present, dict) else {}),
                                  "includeServerSideToolInvocations": True}
    generation: JsonObject = {"maxOutputTokens": options.max_tokens or model.max_tokens}
    if options.temperature is not None and supports_temperature(model):
        generation["temperature"] = options.temperature
    thinking = thinking_config(model, options.thinking)
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    body["generationConfig"] = generation
    return body


_SEARCH_WITH_FUNCTIONS = re.compile(r"gemini-([3-9]|\d{2,})")
"""Models that take Google Search alongside function declarations ("tool combination", with
``toolConfig.includeServerSideToolInvocations``); earlier ones search only in a request without
tools."""


def thinking_config(model: Model, requested: ThinkingLevel | None) -> JsonObject | None:
    """``thinkingConfig`` as pi sets it: Gemini 3 Pro/Flash take a ``thinkingLevel``, Gemini 2.5 a
    ``thinkingBudget`` (-1 = dynamic for unknown models); "off" asks for the least thinking the
    model allows, without thought summaries."""
    if not model.reasoning:
        return None
    level = clamp_thinking_level(model, requested or "off")
    by_level = _level_config(model, level)
    if by_level is not None:
        return by_level
    if level == "off":
        return {"thinkingBudget": 0}
    return {"includeThoughts": True, "thinkingBudget": _thinking_budget(model, nearest_effort(_GEMINI_LEVELS, level))}


def _level_config(model: Model, level: ThinkingLevel) -> JsonObject | None:
    """A ``thinkingLevel`` for Gemini 3 and later: one the catalog says the model takes (3.1 Pro
    has medium, 3.8 Flash no minimal; "off" is the least), else its family's (3 Pro: low or
    high, 3 Flash: all four); ``None`` for a model that takes a budget."""
    for efforts in (_catalog_levels(model), _family_levels(model)):
        if efforts is None:
            continue
        chosen = least_effort(efforts) if level == "off" else nearest_effort(efforts, level)
        if chosen in _GEMINI_LEVELS:
            config: JsonObject = {"thinkingLevel": chosen.upper()}
            if level != "off":
                config["includeThoughts"] = True
            return config
    return None


def _catalog_levels(model: Model) -> list[str] | None:
    return accepted_efforts(model) if (gemini_major_version(model.id) or 0) >= 3 else None


def _family_levels(model: Model) -> tuple[str, ...] | None:
    model_id = model.id.lower()
    if _GEMINI3_PRO.search(model_id):
        return ("low", "high")
    if _GEMINI3_FLASH.search(model_id):
        return _GEMINI_LEVELS
    return None


def _thinking_budget(model: Model, effort: str | None) -> int:
    """Gemini 2.5's ``thinkingBudget`` for an effort: ``compat.thinkingBudgets``, else the
    family's table, else -1 (dynamic)."""
    custom = (model.compat or {}).get("thinkingBudgets") or {}
    if effort in custom:
        return int(custom[effort])
    model_id = model.id.lower()
    for family, budgets in _BUDGETS:
        if family in model_id:
            return budgets[effort or "high"]
    return -1


def tool_config(choice: ToolChoice | None, tools: list[Tool]) -> JsonObject | None:
    """``toolConfig.functionCallingConfig``: auto/any/none (``required`` = any), or one tool by
    name (``ANY`` restricted to it)."""
    if choice is None:
        return None
    name: JsonValue = None
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind == "function":
            function = choice.get("function")
            name = (function.get("name") if isinstance(function, dict) else None) or choice.get("name")
        elif kind == "tool":
            name = choice.get("name")
        elif isinstance(kind, str):
            choice = kind
        if name is None and isinstance(choice, dict):
            raise ProviderError(f"Unsupported tool_choice for Gemini: {choice!r}")
    if isinstance(choice, str):
        mode = {"auto": "AUTO", "any": "ANY", "required": "ANY", "none": "NONE"}.get(choice)
        if mode:
            return {"functionCallingConfig": {"mode": mode}}
        name = choice
    if name and any(tool.name == name for tool in tools):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}
    raise ProviderError(f"Unsupported tool_choice {choice!r}: use auto, any, none, required or a tool's name")


def convert_tools(tools: list[Tool]) -> JsonArray:
    """One ``functionDeclarations`` tool with each schema as ``parametersJsonSchema``."""
    declarations: JsonArray = []
    for tool in tools:
        schema = {
            k: _strip_nested_meta(v, names=k in ("properties", "patternProperties", "$defs", "definitions"))
            for k, v in tool.parameters.items()
            if k not in _JSON_SCHEMA_META
        }
        declarations.append(
            {"name": tool.name, "description": tool.description, "parametersJsonSchema": schema}
        )
    return [{"functionDeclarations": declarations}]


def _strip_nested_meta(value: JsonValue, *, names: bool = False) -> JsonValue:
    """A copy without ``$schema`` / ``$comment`` at any depth: Gemini rejects them even inside
    ``parametersJsonSchema``, and MCP servers (zod, Mintlify) emit them in nested schemas. The
    keys of a ``properties`` map are property names, kept whatever they are. The tool's stored
    schema is untouched."""
    if isinstance(value, dict):
        return {
            k: _strip_nested_meta(v, names=(k in ("properties", "patternProperties", "$defs", "definitions")
                                            and not names))
            for k, v in value.items()
            if names or k not in ("$schema", "$comment")
        }
    if isinstance(value, list):
        return [_strip_nested_meta(v) for v in value]
    return value


def requires_tool_call_id(model: Model) -> bool:
    """Gemini 3+ (and Claude / gpt-oss served through Google) match results to calls by id."""
    major = gemini_major_version(model.id)
    model_id = model.id.lower()
    return (major is not None and major >= 3) or model_id.startswith(("claude-", "gpt-oss-"))


def _supports_multimodal_function_response(model: Model) -> bool:
    major = gemini_major_version(model.id)
    return major is None or major >= 3


def convert_messages(model: Model, context: Context) -> list[JsonObject]:
    """``contents``: user turns, ``model`` turns, and tool results as ``functionResponse`` parts
    (consecutive results share one user turn)."""
    contents: list[JsonObject] = []
    with_ids = requires_tool_call_id(model)
    # Result images for models that cannot nest them go in one user turn after the whole batch
    # of function responses: splitting the batch would break Gemini's call/response pairing.
    pending_images: JsonArray = []
    for msg in context.messages:
        if pending_images and not isinstance(msg, ToolResultMessage):
            contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *pending_images]})
            pending_images = []
        if isinstance(msg, UserMessage):
            parts = _user_parts(msg)
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif isinstance(msg, AssistantMessage):
            parts = _model_parts(model, msg, with_ids)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif isinstance(msg, ToolResultMessage):
            pending_images += _append_tool_result(contents, model, msg, with_ids)
    if pending_images:
        contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *pending_images]})
    return contents


_NO_FORM = object()
_Form = tuple[str, bytes | None, tuple[bytes, ...]]
"""A message's encoded form: its kind (``u``ser, ``a``ssistant, ``t``ool result, ``x``: none),
its content (a tool result: its ``functionResponse`` part; ``None``: it sends nothing) and a tool
result's image parts still to be sent after the batch."""
_IMAGES_TURN = b'{"role":"user","parts":[{"text":"Tool result image:"},'


def _encoded_body(model: Model, context: Context, options: StreamOptions) -> bytes | None:
    """The body, each message's content taken from its :class:`~providers.wire_cache.WireSlot`
    when it was encoded before for the same model; ``None`` when the context has no slots or a
    value must go the uncached way."""
    slots = context._wire_slots
    if slots is None or len(slots) != len(context.messages):
        return None
    try:
        contents = _encoded_contents(model, context, slots)
    except ValueError:
        return None
    return encode_body(_body(model, context, options, []), {"contents": contents})


def _encoded_contents(model: Model, context: Context, slots: list[WireSlot | None]) -> bytes:
    """:func:`convert_messages`, encoded."""
    with_ids = requires_tool_call_id(model)
    key = (API, model.provider, model.id, model.supports_images, with_ids)
    out: list[bytes | list[bytes]] = []
    group: list[bytes] | None = None  # the last content, when it is a batch of function responses
    images: list[bytes] = []
    for message, slot in zip(context.messages, slots, strict=True):
        if slot is not None and slot.message is message:
            form = slot.forms.get(key, _NO_FORM)
            if form is _NO_FORM:
                form = slot.forms[key] = _form(model, message, with_ids)
        else:
            form = _form(model, message, with_ids)
        kind, content, image_parts = form
        if kind == "t":
            assert content is not None
            if group is None:
                group = [content]
                out.append(group)
            else:
                group.append(content)
            images += image_parts
            continue
        if images:
            out.append(_IMAGES_TURN + b",".join(images) + b"]}")
            images = []
            group = None
        if content is not None:
            out.append(content)
            group = None
    if images:
        out.append(_IMAGES_TURN + b",".join(images) + b"]}")
    return b"[" + b",".join(
        item if isinstance(item, bytes) else b'{"role":"user","parts":[' + b",".join(item) + b"]}" for item in out
    ) + b"]"


def _form(model: Model, message: Message, with_ids: bool) -> _Form:
    if isinstance(message, UserMessage):
        parts = _user_parts(message)
        return ("u", encode({"role": "user", "parts": parts}) if parts else None, ())
    if isinstance(message, AssistantMessage):
        parts = _model_parts(model, message, with_ids)
        return ("a", encode({"role": "model", "parts": parts}) if parts else None, ())
    if isinstance(message, ToolResultMessage):
        contents: list[JsonObject] = []
        image_parts = _append_tool_result(contents, model, message, with_ids)
        turn = contents[0]["parts"]  # a new turn holding the one functionResponse part
        assert isinstance(turn, list) and len(contents) == 1 and len(turn) == 1
        return ("t", encode(turn[0]), tuple(encode(image) for image in image_parts))
    return ("x", None, ())


def _user_parts(msg: UserMessage) -> JsonArray:
    if isinstance(msg.content, str):
        return [{"text": sanitize(msg.content)}] if msg.content else []
    parts: JsonArray = []
    for item in msg.content:
        if isinstance(item, TextContent):
            if item.text:
                parts.append({"text": sanitize(item.text)})
        else:
            parts.append({"inlineData": {"mimeType": item.mime_type, "data": item.data}})
    return parts


def _model_parts(model: Model, msg: AssistantMessage, with_ids: bool) -> JsonArray:
    same = model.same_model(msg.provider, msg.api, msg.model)

    def signature(value: str | None) -> str | None:
        return value if same and is_valid_signature(value) else None

    parts: JsonArray = []
    needs_call_signature = (gemini_major_version(model.id) or 0) >= 3
    for block in msg.content:
        if isinstance(block, TextContent):
            sig = signature(block.text_signature)
            if block.text.strip() or sig:
                part: JsonObject = {"text": sanitize(block.text)}
                if sig:
                    part["thoughtSignature"] = sig
                parts.append(part)
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                continue  # another vendor's opaque reasoning means nothing to Gemini
            sig = signature(block.thinking_signature)
            if same:
                if block.thinking.strip() or sig:
                    part = {"text": sanitize(block.thinking), "thought": True}
                    if sig:
                        part["thoughtSignature"] = sig
                    parts.append(part)
            elif block.thinking.strip():
                parts.append({"text": sanitize(block.thinking)})
        elif isinstance(block, ToolCall):
            call: JsonObject = {"name": block.name, "args": block.arguments}
            if with_ids:
                call["id"] = block.id
            part = {"functionCall": call}
            sig = signature(block.thought_signature)
            if sig:
                part["thoughtSignature"] = sig
                needs_call_signature = False  # later parallel calls of this step go unsigned
            elif needs_call_signature:
                # Gemini 3 refuses a function call without a signature (400); calls made by
                # another model (or unsigned) carry Google's documented skip sentinel instead.
                part["thoughtSignature"] = SKIP_THOUGHT_SIGNATURE
            parts.append(part)
    return parts


def _append_tool_result(
    contents: list[JsonObject], model: Model, msg: ToolResultMessage, with_ids: bool
) -> JsonArray:
    """Append the ``functionResponse`` part; returns the image parts still to be sent."""
    text = "\n".join(c.text for c in msg.content if isinstance(c, TextContent))
    images = [c for c in msg.content if isinstance(c, ImageContent)] if model.supports_images else []
    value = sanitize(text) if text else ("(see attached image)" if images else "")
    response: JsonObject = {
        "name": msg.tool_name,
        "response": {"error": value} if msg.is_error else {"output": value},
    }
    if with_ids:
        response["id"] = msg.tool_call_id
    image_parts: JsonArray = [{"inlineData": {"mimeType": i.mime_type, "data": i.data}} for i in images]
    nested = bool(image_parts) and _supports_multimodal_function_response(model)
    if nested:
        response["parts"] = image_parts
    part: JsonObject = {"functionResponse": response}
    last = contents[-1] if contents else None
    parts = last.get("parts") if last is not None and last["role"] == "user" else None
    if isinstance(parts, list) and any(isinstance(p, dict) and "functionResponse" in p for p in parts):
        parts.append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    return [] if nested else image_parts


ADAPTER = GoogleGenerativeAiAdapter()
"""The adapter instance :mod:`providers.dispatch` registers for ``google-generative-ai``."""

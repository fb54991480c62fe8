"""The ``openai-responses`` wire protocol: OpenAI's Responses API (``POST {baseUrl}/responses``).

Requests are stateless (``store: false``): the whole transcript goes out every turn. Reasoning
items come back with ``encrypted_content`` (requested via ``include``); the whole item is kept as
the thinking block's signature and replayed verbatim to the same model (the handoff transform
turns it into text, or drops it, for any other model). Tool-call ids are ``call_id|item_id``.

This module builds the request; :mod:`providers.openai_responses_stream` decodes the stream.
"""

from __future__ import annotations

import hashlib
import json
import re

from baton.providers.adapter import HttpRequest, MessageBuilder
from baton.providers.json_types import JsonArray, JsonObject
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
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
    effort_for_level,
    lowest_effort,
    supports_temperature,
)
from baton.providers.openai_responses_stream import ResponsesDecoder, parse_text_signature
from baton.providers.options import StreamOptions, ToolChoice
from baton.providers.tool_ids import IdNormalizer, normalize_responses
from baton.providers.web_search import offers_search
from baton.providers.wire_common import (
    default_max_tokens,
    image_data_url,
    join_url,
    merge_headers,
    prompt_cache_key,
    tool_result_images,
    tool_result_text,
)

API = "openai-responses"

MIN_OUTPUT_TOKENS = 16
"""The Responses API rejects ``max_output_tokens`` below 16."""

MAX_ITEM_ID = 64
TOOL_RESULT_IMAGES_TEXT = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT_TEXT = "(see attached image)"
NO_TOOL_OUTPUT = "(no tool output)"
"""The output of a tool result with neither text nor images (pi's)."""

_SURROGATES = re.compile("[\ud800-\udfff]")
_GPT5_POINT = re.compile(r"^gpt-5\.\d")


# =============================================================================================
# Request


def clean_text(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced (they cannot be encoded as UTF-8 JSON)."""
    if _SURROGATES.search(text) is None:
        return text
    return _SURROGATES.sub("\ufffd", text)


def build_request(
    model: Model, context: Context, options: StreamOptions, api_key: str | None
) -> HttpRequest:
    """The ``POST /responses`` request for an already transformed context."""
    auth = {"authorization": f"Bearer {api_key}"} if api_key else None
    return HttpRequest(
        url=join_url(model.base_url, "responses"),
        headers=merge_headers(auth, model.headers, options.headers),
        body=build_body(model, context, options),
    )


def build_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The JSON body of a streaming Responses request (``ResponseCreateParamsStreaming``)."""
    compat = model.compat or {}
    body: JsonObject = {
        "model": model.id,
        "input": convert_input(model, context),
        "stream": True,
        "store": False,
    }
    if options.cache_retention != "none" and options.session_id:
        body["prompt_cache_key"] = prompt_cache_key(options.session_id)
    if options.cache_retention == "long" and compat.get(
        "supportsLongCacheRetention", "api.openai.com" in model.base_url
    ):
        body["prompt_cache_retention"] = "24h"
    if compat.get("supportsMaxOutputTokens", True):
        body["max_output_tokens"] = max(default_max_tokens(model, options), MIN_OUTPUT_TOKENS)
    if options.temperature is not None and supports_temperature(model):
        body["temperature"] = options.temperature  # reasoning models refuse it
    if context.tools:
        body["tools"] = [convert_tool(tool) for tool in context.tools]
    if options.tool_choice is not None:
        body["tool_choice"] = _tool_choice(options.tool_choice)
    if model.reasoning:
        reasoning = _reasoning(model, options.thinking)
        if reasoning is not None:
            body["reasoning"] = reasoning
        body["include"] = ["reasoning.encrypted_content"]
    reasoning_now = body.get("reasoning")
    minimal = isinstance(reasoning_now, dict) and reasoning_now.get("effort") == "minimal"
    # OpenAI's web search refuses the minimal effort, so the search sits out such a request.
    if offers_search(API, model.base_url, "api.openai.com", model.compat, options.web_search) and not minimal:
        tools = body.get("tools")
        body["tools"] = [*(tools if isinstance(tools, list) else []), {"type": "web_search"}]
        include = body.get("include")
        body["include"] = [*(include if isinstance(include, list) else []), "web_search_call.action.sources"]
    return body


def _reasoning(model: Model, level: ThinkingLevel | None) -> JsonObject | None:
    """The ``reasoning`` parameter for ``level`` (``None``: leave the model's default)."""
    if level is None:
        return None
    level = clamp_thinking_level(model, level)
    mapped = (model.compat or {}).get("reasoningEffortMap")
    if isinstance(mapped, dict) and level in mapped:
        effort = mapped[level]
        if not isinstance(effort, str) or not effort:
            return None
        return {"effort": effort} if level == "off" else {"effort": effort, "summary": "auto"}
    if accepted_efforts(model) is not None:  # the catalog says which efforts the model takes
        if level == "off":
            lowest = lowest_effort(model)
            return {"effort": lowest} if lowest in ("none", "minimal") else None
        effort = effort_for_level(model, level)
        return {"effort": effort, "summary": "auto"} if effort else None
    if level == "off":
        effort = _off_effort(model)
        return {"effort": effort} if effort else None
    if level == "minimal" and not _supports_minimal(model):
        level = "low"
    return {"effort": level, "summary": "auto"}


def _supports_minimal(model: Model) -> bool:
    """``minimal`` effort exists for gpt-5, gpt-5-mini and gpt-5-nano only (not codex, not
    gpt-5.1 and later, which have ``none`` instead)."""
    model_id = model.id.lower()
    return not model_id.startswith("gpt-5") or (
        not _GPT5_POINT.match(model_id) and "codex" not in model_id and "pro" not in model_id.split("-")
    )


def _off_effort(model: Model) -> str | None:
    """The lowest effort a reasoning model accepts when thinking is off: ``none`` for gpt-5.1
    and later, ``minimal`` for the gpt-5 family; other models cannot turn reasoning down.
    ``compat.reasoningEffortOff`` overrides (``null``: send no reasoning parameter); so does
    ``compat.reasoningEffortMap`` (thinking level -> effort) for every level."""
    compat = model.compat or {}
    if "reasoningEffortOff" in compat:
        value = compat["reasoningEffortOff"]
        return value if isinstance(value, str) and value else None
    model_id = model.id.lower()
    if "codex" in model_id or "pro" in model_id.split("-"):
        return None
    if _GPT5_POINT.match(model_id):
        return "none"
    if model_id.startswith("gpt-5"):
        return "minimal"
    return None


def _tool_choice(choice: ToolChoice) -> ToolChoice:
    if isinstance(choice, str):
        if choice in ("auto", "none", "required"):
            return choice
        return {"type": "function", "name": choice}
    function = choice.get("function")
    if choice.get("type") == "function" and isinstance(function, dict) and "name" in function:
        return {"type": "function", "name": function["name"]}  # Chat Completions shape
    return choice


def convert_tool(tool: Tool) -> JsonObject:
    """A function tool (non-strict: baton validates arguments itself)."""
    return {
        "type": "function",
        "name": tool.name,
        "description": clean_text(tool.description),
        "parameters": tool.parameters,
        "strict": False,
    }


def convert_input(model: Model, context: Context) -> JsonArray:
    """The ``input`` items: system prompt, then the transcript in Responses shape.

    Every item id and every ``call_id`` in the result is unique (the API rejects a request
    with "Duplicate item found with id ..."): ids made up for text without a stored id are
    minted per output item (never per source message), a stored id is used once, and made-up
    ids are settled last, so none can meet a stored one (:meth:`_Ids.settle`)."""
    items: JsonArray = []
    if context.system_prompt:
        compat = model.compat or {}
        developer = model.reasoning and compat.get("supportsDeveloperRole", True)
        items.append({"role": "developer" if developer else "system", "content": clean_text(context.system_prompt)})
    images = model.supports_images
    ids = _Ids()
    for index, message in enumerate(context.messages):
        if isinstance(message, UserMessage):
            user = _user_item(message, images)
            if user is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(model, message, index, ids))
        elif isinstance(message, ToolResultMessage):
            items.extend(_tool_result_items(message, images, ids))
    ids.settle()
    return items


class _Ids:
    """Id bookkeeping for one :func:`convert_input` call."""

    __slots__ = ("call_ids", "minted", "sent_calls", "taken")

    def __init__(self) -> None:
        self.taken: set[str] = set()
        """Item ids in the input so far (stored ones as they come, made-up ones when settled)."""
        self.minted: list[JsonObject] = []
        """Message items whose id is made up here: named by :meth:`settle` once every stored id
        is known."""
        self.call_ids: dict[str, str] = {}
        """Stored tool-call id -> the ``call_id`` sent for its latest call (results follow it)."""
        self.sent_calls: set[str] = set()
        """Every ``call_id`` sent so far."""

    def claim(self, item_id: str) -> bool:
        """Take a stored item id; False when the input already holds it."""
        if item_id in self.taken:
            return False
        self.taken.add(item_id)
        return True

    def settle(self) -> None:
        """Give every made-up message id a suffix if a stored id (or an earlier made-up one)
        already has it."""
        taken = self.taken
        for item in self.minted:
            base = candidate = str(item["id"])
            n = 1
            while candidate in taken:
                n += 1
                candidate = f"{base}_{n}"
            taken.add(candidate)
            item["id"] = candidate

    def call_id(self, tool_call_id: str) -> str:
        """A ``call_id`` for a new function call: the stored one's call part, unless an earlier
        call of this input already used it (two calls sharing a ``call_id`` with different item
        ids, or a server that reuses ids across turns)."""
        call_id = tool_call_id.partition("|")[0]
        if call_id in self.sent_calls:
            base = call_id[: MAX_ITEM_ID - 11] or "call"
            n = 0
            while call_id in self.sent_calls:
                n += 1
                call_id = f"{base}_{_short_hash(f'{tool_call_id}#{n}')}"
        self.sent_calls.add(call_id)
        self.call_ids[tool_call_id] = call_id
        return call_id

    def result_call_id(self, tool_call_id: str) -> str:
        """The ``call_id`` of the call a tool result answers."""
        return self.call_ids.get(tool_call_id) or tool_call_id.partition("|")[0]


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _image_part(block: ImageContent) -> JsonObject:
    return {"type": "input_image", "detail": "auto", "image_url": image_data_url(block)}


def _user_item(message: UserMessage, images: bool) -> JsonObject | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": clean_text(message.content)}]}
    parts: JsonArray = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": clean_text(block.text)})
        elif images:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant_items(model: Model, message: AssistantMessage, index: int, ids: _Ids) -> list[JsonObject]:
    same_model = model.same_model(message.provider, message.api, message.model)
    skipped_thinking = False
    items: list[JsonObject] = []
    for position, block in enumerate(message.content):
        if isinstance(block, ThinkingContent):
            item = _reasoning_item(block) if same_model and model.reasoning else None
            if item is None or not ids.claim(str(item["id"])):  # a reasoning item goes in once
                skipped_thinking = True
            else:
                items.append(item)
        elif isinstance(block, TextContent):
            items.append(_output_message(block, index, position, ids))
        elif isinstance(block, ToolCall):
            item_id = block.id.partition("|")[2]
            call: JsonObject = {
                "type": "function_call",
                "call_id": ids.call_id(block.id),
                "name": block.name,
                "arguments": clean_text(json.dumps(block.arguments, ensure_ascii=False)),
            }
            # An fc_ id is paired server-side with the reasoning item that produced it: send it
            # only when that pairing is intact (same model, its reasoning replayed).
            if item_id and same_model and not skipped_thinking and ids.claim(item_id):
                call["id"] = item_id
            items.append(call)
    return items


def _reasoning_item(block: ThinkingContent) -> JsonObject | None:
    if not block.thinking_signature:
        return None
    try:
        item = json.loads(block.thinking_signature)
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("type") != "reasoning" or not isinstance(item.get("id"), str):
        return None
    if not isinstance(item.get("summary"), list):
        item["summary"] = []  # required by the API; absent from hand-made or truncated items
    return item

def _output_message(block: TextContent, index: int, position: int, ids: _Ids) -> JsonObject:
    """An output message item: block ``position`` of message ``index``. Its stored id is used
    when it has one not yet in the input; otherwise an id is made up for this output item."""
    message_id, phase = parse_text_signature(block.text_signature)
    if message_id and len(message_id) > MAX_ITEM_ID:
        message_id = "msg_" + hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    minted = not message_id or not ids.claim(message_id)
    if minted:
        message_id = f"msg_{index}_{position}"
    item: JsonObject = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": clean_text(block.text), "annotations": []}],
        "status": "completed",
        "id": message_id,
    }
    if phase:
        item["phase"] = phase
    if minted:
        ids.minted.append(item)
    return item


def _tool_result_items(message: ToolResultMessage, images: bool, ids: _Ids) -> list[JsonObject]:
    text = tool_result_text(message)
    pictures = tool_result_images(message)
    call_id = ids.result_call_id(message.tool_call_id)
    output = text or (IMAGE_ONLY_RESULT_TEXT if pictures else NO_TOOL_OUTPUT)
    items: list[JsonObject] = [{"type": "function_call_output", "call_id": call_id, "output": clean_text(output)}]
    if pictures and images:
        parts: JsonArray = [{"type": "input_text", "text": TOOL_RESULT_IMAGES_TEXT}]
        parts.extend(_image_part(b) for b in pictures)
        items.append({"role": "user", "content": parts})
    return items


# =============================================================================================
# The adapter


class OpenAIResponsesAdapter:
    """The :class:`~providers.adapter.WireAdapter` for ``openai-responses``."""

    api = API

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        """``call_id|item_id`` with a safe call id and an ``fc_`` item id."""
        return normalize_responses

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        """The HTTP request for an already transformed context."""
        return build_request(model, context, options, api_key)

    def create_decoder(self, model: Model, builder: MessageBuilder) -> ResponsesDecoder:
        """A fresh decoder for one response."""
        return ResponsesDecoder(model, builder)


ADAPTER = OpenAIResponsesAdapter()

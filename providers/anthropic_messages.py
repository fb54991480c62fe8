"""The ``anthropic-messages`` wire protocol (Anthropic's Messages API, streamed).

Request: ``POST {baseUrl}/v1/messages`` with ``stream: true``. The (already transformed) context
becomes Anthropic JSON: consecutive tool results merge into one user turn, images become base64
source blocks, thinking is replayed with its signature (redacted thinking as ``redacted_thinking``),
and ``cache_control`` marks the system prompt, the last tool and the last user block according to
the cache retention. Thinking levels map to a token budget, or to adaptive thinking with an effort
for the models that need it (as pi does).

Response: ``message_start`` / ``content_block_*`` / ``message_delta`` / ``message_stop`` events.
Server tool blocks and unknown block types are skipped; a ``refusal`` stop, an ``error`` event or a
stream cut before ``message_stop`` raise :class:`~providers.adapter.ProviderError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
from baton.providers.json_types import JsonArray, JsonObject, JsonValue
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    StopReason,
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
    clamp_thinking_level,
    effort_for_level,
    nearest_effort,
    supports_temperature,
)
from baton.providers.options import StreamOptions, ToolChoice
from baton.providers.tool_ids import IdNormalizer, normalize_safe64
from baton.providers.web_search import Citations, Source, offers_search, search_text, set_searches, sources_text
from baton.providers.wire_cache import WireMemo, WireSlot, encode, encode_body
from baton.providers.wire_common import loads_event, merge_headers
from baton.providers.wire_common import sanitize_surrogates as sanitize

API = "anthropic-messages"
DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"

THINKING_BUDGETS: dict[ThinkingLevel, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""pi's default budget per level (``xhigh`` uses ``high``'s unless the model supports more)."""
MIN_THINKING_BUDGET = 1024
"""Anthropic's smallest accepted ``budget_tokens``."""
MIN_OUTPUT_TOKENS = 1024
"""Room kept for the answer when the budget would eat the whole ``max_tokens``."""
REDACTED_THINKING_TEXT = "[Reasoning redacted]"
"""The visible text of a redacted thinking block (pi's)."""

SEARCH_TOOL: JsonObject = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
"""Anthropic's web search server tool, as a request offers it."""

_ADAPTIVE_MODEL = re.compile(
    r"(opus|sonnet)-4[-.]([6-9]|\d{2,})|(opus|sonnet|haiku|fable|mythos)-([5-9]|\d{2,})([-.]|$)"
)
_OPUS_47_OR_LATER = re.compile(r"opus-(4[-.]([7-9]|\d{2,})|([5-9]|\d{2,})([-.]|$))")
_OPUS_46 = re.compile(r"opus-4[-.]6")


# ---------------------------------------------------------------------------------------------
# Request


class AnthropicMessagesAdapter:
    """The ``anthropic-messages`` :class:`~providers.adapter.WireAdapter`."""

    api = API

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        """``^[a-zA-Z0-9_-]{1,64}$``."""
        return normalize_safe64

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        """POST ``{baseUrl}/v1/messages`` for an already transformed context (its messages
        encoded once each, when the context comes from :func:`providers.dispatch.prepare_context`)."""
        encoded = _encoded_body(model, context, options)
        body = build_body(model, context, options) if encoded is None else encoded[0]
        base: dict[str, str] = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        betas = _betas(model, body)
        if betas:
            base["anthropic-beta"] = ",".join(betas)
        if api_key:
            base["x-api-key"] = api_key
        headers = merge_headers(base, model.headers, options.headers)
        if encoded is None:
            return HttpRequest(url=messages_url(model), headers=headers, body=body)
        return HttpRequest(
            messages_url(model), headers, encoded=encoded[1], expand=lambda: build_body(model, context, options)
        )

    def create_decoder(self, model: Model, builder: MessageBuilder) -> AnthropicDecoder:
        """A fresh decoder for one response."""
        return AnthropicDecoder(model, builder)


def messages_url(model: Model) -> str:
    """``{baseUrl}/v1/messages`` (a base URL already ending in ``/v1`` is not doubled)."""
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def build_body(model: Model, context: Context, options: StreamOptions) -> JsonObject:
    """The Messages API request body (``MessageCreateParamsStreaming``) for ``context``."""
    cache_control = cache_control_for(model, options)
    messages = convert_messages(
        context,
        cache_control,
        safe_ids=official_endpoint(model),
        empty_signatures=(model.compat or {}).get("allowEmptySignature") is True,
    )
    return _body(model, context, options, cache_control, messages, open_turn_without_thinking(messages))


def _body(
    model: Model,
    context: Context,
    options: StreamOptions,
    cache_control: dict[str, str] | None,
    messages: JsonArray,
    open_turn: bool,
) -> JsonObject:
    """The body around its ``messages`` (``open_turn``: see :func:`open_turn_without_thinking`)."""
    max_tokens = options.max_tokens or model.max_tokens
    body: JsonObject = {"model": model.id, "max_tokens": max_tokens, "stream": True, "messages": messages}
    if context.system_prompt:
        system: JsonObject = {"type": "text", "text": sanitize(context.system_prompt)}
        if cache_control:
            system["cache_control"] = dict(cache_control)
        body["system"] = [system]
    if context.tools:
        body["tools"] = convert_tools(context.tools, cache_control)
        choice = tool_choice(options.tool_choice, context.tools)
        if choice is not None:
            body["tool_choice"] = choice
    if offers_search(API, model.base_url, "api.anthropic.com", model.compat, options.web_search) and not any(
        tool.name == SEARCH_TOOL["name"] for tool in context.tools or ()
    ):
        tools = body.get("tools")
        body["tools"] = [dict(SEARCH_TOOL), *(tools if isinstance(tools, list) else [])]
    thinking_on = _apply_thinking(body, model, options, max_tokens, open_turn)
    if options.temperature is not None and not thinking_on and accepts_temperature(model):
        body["temperature"] = options.temperature
    return body


def accepts_temperature(model: Model) -> bool:
    """Opus 4.7 and later refuse ``temperature`` (pi); so does every model whose catalog entry
    says so (``compat.supportsTemperature: false``: Sonnet 5, Fable 5...)."""
    return supports_temperature(model) and not _OPUS_47_OR_LATER.search(model.id.lower())


def cache_control_for(model: Model, options: StreamOptions) -> dict[str, str] | None:
    """``cache_control`` for the retention: none -> no caching, short -> ephemeral (5 min),
    long -> ephemeral with a 1 h TTL (unless the model's compat says the host lacks it)."""
    if options.cache_retention == "none":
        return None
    if options.cache_retention == "long" and (model.compat or {}).get("supportsLongCacheRetention", True):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def uses_adaptive_thinking(model: Model) -> bool:
    """Models that take ``thinking: {type: adaptive}`` plus an effort instead of a budget
    (Opus/Sonnet 4.6 and later, Claude 5 families), or ``compat.adaptiveThinking``."""
    flag = (model.compat or {}).get("adaptiveThinking")
    if isinstance(flag, bool):
        return flag
    return bool(_ADAPTIVE_MODEL.search(model.id.lower()))


def effort_for(model: Model, level: ThinkingLevel) -> str:
    """The adaptive-thinking effort of a thinking level (:func:`providers.models.effort_for_level`:
    ``xhigh`` -> ``max`` where there is no ``xhigh``), from the efforts the catalog says the model
    accepts, else those of its family (pi's mapping)."""
    return effort_for_level(model, level) or nearest_effort(_family_efforts(model), level) or "high"


def _family_efforts(model: Model) -> tuple[str, ...]:
    """The efforts of the model's family when the catalog does not list them: Opus 4.7 and later
    take ``xhigh`` and ``max``, Opus 4.6 ``max``, the others low to high."""
    model_id = model.id.lower()
    if _OPUS_47_OR_LATER.search(model_id):
        return ("low", "medium", "high", "xhigh", "max")
    if _OPUS_46.search(model_id):
        return ("low", "medium", "high", "max")
    return ("low", "medium", "high")


def thinking_budget(model: Model, level: ThinkingLevel, max_tokens: int) -> tuple[int, int]:
    """``(max_tokens, budget_tokens)`` for budget-based thinking: the budget is added on top of
    the requested output, capped by the model's limit, and ``max_tokens`` always exceeds it."""
    budgets = {**THINKING_BUDGETS, **((model.compat or {}).get("thinkingBudgets") or {})}
    budget = int(budgets.get(level, budgets["high"]))
    total = min(max_tokens + budget, max(model.max_tokens, max_tokens))
    if total <= budget:
        budget = max(MIN_THINKING_BUDGET, total - MIN_OUTPUT_TOKENS)
    if total <= budget:
        total = budget + MIN_OUTPUT_TOKENS
    return total, budget


def open_turn_without_thinking(messages: JsonArray) -> bool:
    """True when the request continues a tool-use turn (it ends with tool results) whose
    assistant message does not start with a thinking block.

    With thinking enabled, Anthropic rejects such a request ("a final assistant message must
    start with a thinking block"). It happens when the turn began on another model (a switch
    mid-run) or on this one with thinking off (the level raised mid-run): the calls carry no
    signed thinking that could be replayed, so thinking waits for the next user turn."""
    turns = [message for message in messages if isinstance(message, dict)]
    index = len(turns) - 1
    has_results = False
    while index >= 0 and turns[index].get("role") == "user":  # Anthropic joins these into one turn
        has_results = has_results or any(_block_type(block) == "tool_result" for block in _blocks(turns[index]))
        index -= 1
    if not has_results or index < 0:
        return False
    first = _blocks(turns[index])[:1]
    return bool(first) and _block_type(first[0]) not in ("thinking", "redacted_thinking")


def _blocks(message: JsonObject) -> JsonArray:
    """A message's content blocks (none for string content)."""
    content = message.get("content")
    return content if isinstance(content, list) else []


def _block_type(block: JsonValue) -> JsonValue:
    return block.get("type") if isinstance(block, dict) else None


def _apply_thinking(
    body: JsonObject, model: Model, options: StreamOptions, max_tokens: int, suspended: bool = False
) -> bool:
    """Set ``thinking`` (and ``output_config`` / ``max_tokens``); True when thinking is on.
    ``suspended``: thinking is requested but this request cannot have it (see
    :func:`open_turn_without_thinking`)."""
    if not model.reasoning:
        return False
    level = clamp_thinking_level(model, options.thinking or "off")
    if level == "off" or suspended:
        if options.thinking is not None:
            body["thinking"] = {"type": "disabled"}
        return False
    if uses_adaptive_thinking(model):
        body["thinking"] = {"type": "adaptive", "display": "summarized"}
        body["output_config"] = {"effort": effort_for(model, level)}
        return True
    total, budget = thinking_budget(model, level, max_tokens)
    body["max_tokens"] = total
    body["thinking"] = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    return True


def _betas(model: Model, body: JsonObject) -> list[str]:
    betas: list[str] = []
    if body.get("tools"):
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if _block_type(body.get("thinking")) == "enabled":
        betas.append(INTERLEAVED_THINKING_BETA)
    return betas


def tool_choice(choice: ToolChoice | None, tools: list[Tool]) -> JsonObject | None:
    """Anthropic's ``tool_choice``: ``auto``/``any``/``none`` (``required`` = ``any``), a tool's
    name, ``{"type": "tool", "name": ...}`` or OpenAI's ``{"type": "function", ...}`` form."""
    if choice is None:
        return None
    if isinstance(choice, dict):
        if choice.get("type") == "function":
            function = choice.get("function")
            name = (function.get("name") if isinstance(function, dict) else None) or choice.get("name")
            if isinstance(name, str) and name:
                return {"type": "tool", "name": name}
        if choice.get("type") in ("auto", "any", "none", "tool"):
            return dict(choice)
        raise ProviderError(f"Unsupported tool_choice for Anthropic: {choice!r}")
    mode = {"auto": "auto", "any": "any", "required": "any", "none": "none"}.get(choice)
    if mode:
        return {"type": mode}
    if any(tool.name == choice for tool in tools):
        return {"type": "tool", "name": choice}
    raise ProviderError(
        f"Unsupported tool_choice {choice!r}: use auto, any, none, required or a tool's name"
    )


def convert_tools(tools: list[Tool], cache_control: dict[str, str] | None) -> JsonArray:
    """Tool definitions with their JSON schema as ``input_schema`` (always an object schema);
    the last one carries ``cache_control`` so the tool list is cached with the system prompt."""
    out: JsonArray = []
    for tool in tools:
        schema: JsonObject = {k: v for k, v in tool.parameters.items() if k != "$schema"}
        schema["type"] = "object"
        schema.setdefault("properties", {})
        definition: JsonObject = {"name": tool.name, "description": tool.description, "input_schema": schema}
        out.append(definition)
    if tools and cache_control:
        definition["cache_control"] = dict(cache_control)
    return out


def official_endpoint(model: Model) -> bool:
    """True for Anthropic's own API (which enforces its tool-id pattern on every id)."""
    return not model.base_url or "api.anthropic.com" in model.base_url


def convert_messages(
    context: Context,
    cache_control: dict[str, str] | None,
    *,
    safe_ids: bool = False,
    empty_signatures: bool = False,
) -> JsonArray:
    """The ``messages`` array: user/assistant turns, tool results merged per user turn.

    ``safe_ids``: tool ids outside ``^[a-zA-Z0-9_-]{1,64}$`` are normalised here too, calls and
    results alike — even in turns labelled as this model's, which the handoff transform replays
    as they are (pi 9048: Codex ``call_…|fc_…`` ids in such turns got a 400). ``empty_signatures``
    (compat ``allowEmptySignature``): unsigned thinking is replayed as thinking with an empty
    signature, for servers that sign nothing."""
    ids: Callable[[str], str] = normalize_safe64 if safe_ids else _same
    out: list[JsonObject] = []
    messages = context.messages
    i = 0
    while i < len(messages):
        msg = messages[i]
        if isinstance(msg, UserMessage):
            user = _user_message(msg)
            if user is not None:
                out.append(user)
        elif isinstance(msg, AssistantMessage):
            blocks = _assistant_blocks(msg, ids, empty_signatures)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(msg, ToolResultMessage):
            results: JsonArray = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                result = messages[i]
                assert isinstance(result, ToolResultMessage)
                results.append(_tool_result_block(result, ids))
                i += 1
            out.append({"role": "user", "content": results})
            continue
        i += 1
    if cache_control:
        _mark_last_user_block(out, cache_control)
    return list[JsonValue](out)


def _user_message(msg: UserMessage) -> JsonObject | None:
    if isinstance(msg.content, str):
        return {"role": "user", "content": sanitize(msg.content)} if msg.content.strip() else None
    blocks: JsonArray = []
    for item in msg.content:
        if isinstance(item, TextContent):
            if item.text.strip():
                blocks.append({"type": "text", "text": sanitize(item.text)})
        else:
            blocks.append(_image_block(item))
    return {"role": "user", "content": blocks} if blocks else None


def _image_block(image: ImageContent) -> JsonObject:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _same(tool_call_id: str) -> str:
    return tool_call_id


def _assistant_blocks(
    msg: AssistantMessage, ids: Callable[[str], str], empty_signatures: bool
) -> JsonArray:
    blocks: JsonArray = []
    for block in msg.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize(block.text)})
        elif isinstance(block, ThinkingContent):
            signature = (block.thinking_signature or "").strip()
            if signature.startswith("{"):
                # Another API's reasoning item (an OpenAI Responses / Codex JSON signature) is
                # never an Anthropic signature (pi 9048): the thinking goes as unsigned.
                signature = ""
                if block.redacted:
                    continue
            if block.redacted:
                if signature:  # the opaque payload goes back as it came
                    blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
            elif signature:
                blocks.append(
                    {"type": "thinking", "thinking": sanitize(block.thinking), "signature": block.thinking_signature}
                )
            elif empty_signatures and block.thinking.strip():
                blocks.append({"type": "thinking", "thinking": sanitize(block.thinking), "signature": ""})
            elif block.thinking.strip():
                # Unsigned thinking (an aborted stream, another model) cannot be replayed as
                # thinking; plain text keeps the content without inviting the model to mimic tags.
                blocks.append({"type": "text", "text": sanitize(block.thinking)})
        elif isinstance(block, ToolCall):
            blocks.append({"type": "tool_use", "id": ids(block.id), "name": block.name, "input": block.arguments})
    return blocks


def _tool_result_block(result: ToolResultMessage, ids: Callable[[str], str] = _same) -> JsonObject:
    block: JsonObject = {"type": "tool_result", "tool_use_id": ids(result.tool_call_id)}
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    images = [c for c in result.content if isinstance(c, ImageContent)]
    if images:
        has_text = any(t.strip() for t in texts)
        content: JsonArray = [] if has_text else [{"type": "text", "text": "(see attached image)"}]
        for item in result.content:
            if isinstance(item, ImageContent):
                content.append(_image_block(item))
            elif has_text:
                content.append({"type": "text", "text": sanitize(item.text)})
        block["content"] = content
    elif texts and "".join(texts):
        block["content"] = sanitize("\n".join(texts))
    elif result.is_error:
        block["content"] = "(error without output)"
    block["is_error"] = result.is_error
    return block


def _mark_last_user_block(messages: list[JsonObject], cache_control: dict[str, str]) -> None:
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            message["content"] = [{"type": "text", "text": content, "cache_control": dict(cache_control)}]
            return
        last = content[-1] if isinstance(content, list) and content else None
        if isinstance(last, dict) and last.get("type") in ("text", "image", "tool_result"):
            last["cache_control"] = dict(cache_control)
        return


_NO_FORM = object()
_NOT_THINKING = frozenset({"thinking", "redacted_thinking"})
_Form = tuple[str, bytes | None, JsonValue]
"""A message's encoded form: its kind (``u``ser, ``a``ssistant, ``t``ool result, ``x``: none),
its element (a tool result: its block; ``None``: it sends nothing), an assistant's first block type."""


def _encoded_body(model: Model, context: Context, options: StreamOptions) -> tuple[JsonObject, bytes] | None:
    """The body (its ``messages`` left empty) and its encoding, each message's element taken
    from its :class:`~providers.wire_cache.WireSlot` when it was encoded before for the same
    options; ``None`` when the context has no slots or a value must go the uncached way."""
    slots = context._wire_slots
    if slots is None or len(slots) != len(context.messages):
        return None
    cache_control = cache_control_for(model, options)
    empty_signatures = (model.compat or {}).get("allowEmptySignature") is True
    encoded = _encoded_messages(
        context.messages, slots, context._wire_memo, cache_control, official_endpoint(model), empty_signatures
    )
    if encoded is None:
        return None
    messages, open_turn = encoded
    body = _body(model, context, options, cache_control, [], open_turn)
    raw = encode_body(body, {"messages": messages})
    return None if raw is None else (body, raw)


class _Memo:
    """One request's forms and the encoded ``messages`` up to a point the next request of the
    same transcript can resume from (see :class:`~providers.wire_cache.WireMemo`)."""

    __slots__ = ("boundary", "count", "forms", "pieces")

    def __init__(self, forms: list[_Form], pieces: list[bytes], boundary: int, count: int) -> None:
        self.forms = forms
        self.pieces = pieces
        """The encoded elements as pieces joined with ``b""`` (a tool-result turn is its wrapper and
        its blocks: no second copy of the blocks' bytes)."""
        self.boundary = boundary
        """``pieces[:count]`` encode ``forms[:boundary]`` exactly: no tool-result turn crosses the
        boundary, and the ``cache_control`` mark lies after it."""
        self.count = count


_RUN_OPEN = b'{"role":"user","content":['
_RUN_CLOSE = b"]}"


def _encoded_messages(
    messages: list[Message],
    slots: list[WireSlot | None],
    memo: WireMemo | None,
    cache_control: dict[str, str] | None,
    safe_ids: bool,
    empty_signatures: bool,
) -> tuple[bytes, bool] | None:
    """:func:`convert_messages` encoded, and :func:`open_turn_without_thinking` of it. What the
    previous request of the same transcript encoded (``memo``) is taken up where it still holds."""
    ids: Callable[[str], str] = normalize_safe64 if safe_ids else _same
    key = (API, safe_ids, empty_signatures)
    old: _Memo | None = memo.previous.get(key) if memo is not None and memo.previous is not None else None
    forms: list[_Form] = old.forms[: memo.same] if old is not None and memo is not None else []
    try:
        for index in range(len(forms), len(messages)):
            message, slot = messages[index], slots[index]
            if slot is not None and slot.message is message:
                form = slot.forms.get(key, _NO_FORM)
                if form is _NO_FORM:
                    form = slot.forms[key] = _form(message, ids, empty_signatures)
            else:
                form = _form(message, ids, empty_signatures)
            forms.append(form)
        marked, marked_form = _marked_last_user(messages, forms, ids, cache_control)
    except ValueError:
        return None
    limit = len(forms)  # the first form of the marked turn: no memo may hold it
    if marked >= 0:
        limit = marked
        while forms[marked][0] == "t" and limit > 0 and forms[limit - 1][0] == "t":
            limit -= 1
    if old is not None and memo is not None and old.boundary <= min(memo.same, limit):
        start, pieces = old.boundary, old.pieces[: old.count]
    else:
        start, pieces = 0, []
    clean = (start, len(pieces))
    in_run = False
    for index in range(start, len(forms)):
        kind, element, _ = forms[index]
        if index == marked:
            element = marked_form
        if kind == "t":
            assert element is not None
            if in_run:
                pieces += (b",", element)
                continue
            if index <= limit:
                clean = (index, len(pieces))
            if pieces:
                pieces.append(b",")
            pieces += (_RUN_OPEN, element)
            in_run = True
            continue
        if in_run:
            pieces.append(_RUN_CLOSE)
            in_run = False
        if index <= limit:
            clean = (index, len(pieces))
        if element is not None:
            if pieces:
                pieces.append(b",")
            pieces.append(element)
    if in_run:
        pieces.append(_RUN_CLOSE)
    elif len(forms) <= limit:
        clean = (len(forms), len(pieces))
    if memo is not None:
        memo.current[key] = _Memo(forms, pieces, *clean)
    return b"[" + b"".join(pieces) + b"]", _open_turn(forms)


def _form(message: Message, ids: Callable[[str], str], empty_signatures: bool) -> _Form:
    if isinstance(message, UserMessage):
        user = _user_message(message)
        return ("u", None if user is None else encode(user), None)
    if isinstance(message, AssistantMessage):
        blocks = _assistant_blocks(message, ids, empty_signatures)
        if not blocks:
            return ("a", None, None)
        return ("a", encode({"role": "assistant", "content": blocks}), _block_type(blocks[0]))
    if isinstance(message, ToolResultMessage):
        return ("t", encode(_tool_result_block(message, ids)), None)
    return ("x", None, None)


def _marked_last_user(
    messages: list[Message], forms: list[_Form], ids: Callable[[str], str], cache_control: dict[str, str] | None
) -> tuple[int, bytes | None]:
    """The index of the message that makes the last user turn's last block, and its element
    with ``cache_control`` (converted anew: the mark moves every turn); ``-1`` for none."""
    if not cache_control:
        return -1, None
    for index in range(len(forms) - 1, -1, -1):
        kind, element, _ = forms[index]
        message = messages[index]
        if kind == "t" and isinstance(message, ToolResultMessage):
            block = _tool_result_block(message, ids)
            block["cache_control"] = dict(cache_control)
            return index, encode(block)
        if kind == "u" and element is not None and isinstance(message, UserMessage):
            user = _user_message(message)
            assert user is not None
            _mark_last_user_block([user], cache_control)
            return index, encode(user)
    return -1, None


def _open_turn(forms: list[_Form]) -> bool:
    """:func:`open_turn_without_thinking` from the forms: the trailing user turns hold a tool
    result, and the assistant turn before them does not start with thinking."""
    has_results = False
    for kind, element, first in reversed(forms):
        if kind == "t":
            has_results = True
        elif kind == "a" and element is not None:
            return has_results and first not in _NOT_THINKING
    return False


# ---------------------------------------------------------------------------------------------
# Response


_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
_RETRYABLE_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504}


class AnthropicDecoder:
    """Decodes one Messages API event stream into :class:`MessageBuilder` calls."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.usage = builder.output.usage
        self._blocks: dict[int, tuple[str, int]] = {}
        """Anthropic block index -> (kind, builder index) for the blocks we keep."""
        self._whole_inputs: dict[int, JsonObject] = {}
        """tool_use blocks whose input came whole in content_block_start (no deltas)."""
        self._started = False
        self._stopped = False
        self._refusal: str | None = None
        self._queries: dict[int, str] = {}
        """server_tool_use blocks (the vendor's web search) -> their query so far (JSON)."""
        self._server_ids: dict[int, str] = {}
        self._query_of: dict[str, str] = {}
        """server_tool_use id -> its query, for the result block that answers it."""
        self._cited = Citations()

    def feed(self, event: str, data: str) -> None:
        """One SSE event; the payload's ``type`` decides (the event name is only a fallback)."""
        try:
            payload = loads_event(data)
        except json.JSONDecodeError as exc:
            raise ProviderError(
                f"Malformed JSON in Anthropic stream event '{event}': {exc.msg} (data: {data[:200]!r})"
            ) from exc
        if not isinstance(payload, dict):
            raise ProviderError(f"Unexpected Anthropic stream event '{event}': {data[:200]!r}")
        kind = payload.get("type") or event
        if kind == "content_block_delta":
            self._delta(payload)
        elif kind == "content_block_start":
            self._block_start(payload)
        elif kind == "content_block_stop":
            self._block_stop(payload)
        elif kind == "message_start":
            self._started = True
            message = payload.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            if isinstance(usage, dict):
                self._usage(usage)
        elif kind == "message_delta":
            self._message_delta(payload)
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error" or event == "error":
            raise _stream_error(payload)
        # ping and unknown event types carry nothing for us

    def finish(self) -> None:
        """The body ended: close blocks (the sources the answer cited as a last text block); a
        refusal or a stream without ``message_stop`` fails."""
        if self._cited.sources:
            self.builder.start_text(sources_text(self._cited.sources))
            self.builder.end_text()
        self.builder.close_all()
        if self._refusal is not None:
            raise ProviderError(self._refusal)
        if not self._stopped:
            detail = "before message_stop" if self._started else "without any event"
            raise ProviderError(f"Anthropic stream ended {detail} (connection cut?)", retryable=True)

    # --- blocks -----------------------------------------------------------------------------
    def _block_start(self, payload: JsonObject) -> None:
        index = payload.get("index")
        block = payload.get("content_block")
        if not isinstance(index, int) or not isinstance(block, dict):
            return
        kind = block.get("type")
        builder = self.builder
        if kind == "text":
            self._blocks[index] = ("text", builder.start_text(_text(block.get("text"))))
            citations = block.get("citations")
            for citation in citations if isinstance(citations, list) else ():
                if isinstance(citation, dict):
                    self._cited.add(citation.get("url"), citation.get("title"))
        elif kind == "server_tool_use":
            initial = block.get("input")
            self._queries[index] = json.dumps(initial) if isinstance(initial, dict) and initial else ""
            self._blocks[index] = ("server", -1)
            self._server_ids[index] = str(block.get("id") or "")
        elif kind == "web_search_tool_result":
            self._search_result(block)
        elif kind == "thinking":
            self._blocks[index] = (
                "thinking",
                builder.start_thinking(_text(block.get("thinking")), signature=_text(block.get("signature")) or None),
            )
        elif kind == "redacted_thinking":
            at = builder.start_thinking(REDACTED_THINKING_TEXT, signature=_text(block.get("data")), redacted=True)
            self._blocks[index] = ("thinking", at)
        elif kind == "tool_use":
            at = builder.start_tool_call(str(block.get("id") or ""), str(block.get("name") or ""))
            self._blocks[index] = ("tool", at)
            initial = block.get("input")
            if isinstance(initial, dict) and initial:
                self._whole_inputs[index] = initial
        # other server tools, their results, container uploads and unknown kinds are not ours

    def _search_result(self, block: JsonObject) -> None:
        """A web search's results, kept as a text block (see :mod:`providers.web_search`)."""
        query = self._query_of.get(str(block.get("tool_use_id") or ""), "")
        content = block.get("content")
        error = None
        results: list[Source] = []
        if isinstance(content, dict):
            error = _text(content.get("error_code")) or "error"
        for item in content if isinstance(content, list) else ():
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                results.append(Source(_text(item.get("url")), _text(item.get("title"))))
        self.builder.start_text(search_text(query, results, error))
        self.builder.end_text()

    def _delta(self, payload: JsonObject) -> None:
        index = payload.get("index")
        entry = self._blocks.get(index) if type(index) is int else None
        delta = payload.get("delta")
        if entry is None or type(delta) is not dict:
            return
        kind, at = entry
        dtype = delta.get("type")
        if dtype == "text_delta":
            text = delta.get("text")
            if text and kind == "text" and type(text) is str:
                self.builder.text_delta(text)
        elif dtype == "input_json_delta":
            fragment = delta.get("partial_json")
            if fragment and kind == "tool" and type(fragment) is str:
                self.builder.tool_call_delta(at, fragment)
            elif fragment and kind == "server" and type(fragment) is str and type(index) is int:
                self._queries[index] = self._queries.get(index, "") + fragment
        elif dtype == "citations_delta":
            citation = delta.get("citation")
            if isinstance(citation, dict):
                self._cited.add(citation.get("url"), citation.get("title"))
        elif dtype == "thinking_delta":
            text = delta.get("thinking")
            if text and kind == "thinking" and type(text) is str:
                self.builder.thinking_delta(text)
        elif dtype == "signature_delta":
            signature = delta.get("signature")
            if signature and kind == "thinking" and type(signature) is str:
                self.builder.set_thinking_signature(signature, append=True)
        # unknown deltas are ignored

    def _block_stop(self, payload: JsonObject) -> None:
        index = payload.get("index")
        if type(index) is not int:
            return
        entry = self._blocks.pop(index, None)
        if entry is None:
            return
        kind, at = entry
        if kind == "text":
            self.builder.end_text()
        elif kind == "thinking":
            self.builder.end_thinking()
        elif kind == "server":
            self._server_done(index)
        else:
            whole = self._whole_inputs.pop(index, None)
            call = self.builder.open_tool_call(at)
            streamed = call is not None and bool(call.arguments)
            self.builder.end_tool_call(at, None if streamed or whole is None else whole)

    def _server_done(self, index: int) -> None:
        """A server tool call ended: remember a web search's query for its result block."""
        raw = self._queries.pop(index, "")
        try:
            parsed = json.loads(raw) if raw else {}
        except ValueError:
            parsed = {}
        query = parsed.get("query") if isinstance(parsed, dict) else None
        self._query_of[self._server_ids.pop(index, "")] = query if isinstance(query, str) else ""

    # --- message ----------------------------------------------------------------------------
    def _message_delta(self, payload: JsonObject) -> None:
        delta = payload.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if reason == "refusal" or reason == "sensitive":
            self._refusal = _refusal_message(reason, delta.get("stop_details") if isinstance(delta, dict) else None)
            self.builder.set_stop_reason("error")
        elif isinstance(reason, str):
            self.builder.set_stop_reason(_STOP_REASONS.get(reason, "stop"))
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)

    def _usage(self, usage: JsonObject) -> None:
        """Counts are cumulative: each present field overwrites (``input`` excludes the cache).
        The cost is priced by the driver when the message ends."""
        u = self.usage
        value = usage.get("input_tokens")
        if isinstance(value, int):
            u.input = value
        value = usage.get("output_tokens")
        if isinstance(value, int):
            u.output = value
        value = usage.get("cache_read_input_tokens")
        if isinstance(value, int):
            u.cache_read = value
        value = usage.get("cache_creation_input_tokens")
        if isinstance(value, int):
            u.cache_write = value
        u.total_tokens = u.input + u.output + u.cache_read + u.cache_write
        server = usage.get("server_tool_use")
        searches = server.get("web_search_requests") if isinstance(server, dict) else None
        if isinstance(searches, int):
            set_searches(u, searches)


def _refusal_message(reason: str, details: JsonValue) -> str:
    text = "The model refused to respond" if reason == "refusal" else "The response was flagged by safety filters"
    if isinstance(details, dict):
        category = details.get("category")
        if isinstance(category, str) and category:
            text += f" ({category})"
        explanation = details.get("explanation")
        if isinstance(explanation, str) and explanation:
            text += f": {explanation}"
    return f"{text} [stop_reason: {reason}]"


def _text(value: JsonValue) -> str:
    """A string field of a content block (``""`` when absent or of another type)."""
    return value if isinstance(value, str) else ""


def _stream_error(payload: JsonObject) -> ProviderError:
    error = payload.get("error")
    kind = ""
    message = ""
    if isinstance(error, dict):
        kind = str(error.get("type") or "")
        message = str(error.get("message") or "")
    elif isinstance(error, str):
        message = error
    text = message or kind or "Anthropic reported an error in the stream"
    if kind and kind not in text:
        text = f"{text} ({kind})"
    status = _RETRYABLE_ERRORS.get(kind)
    return ProviderError(text, status=status, retryable=status is not None)


ADAPTER = AnthropicMessagesAdapter()
"""The adapter instance :mod:`providers.dispatch` registers for ``anthropic-messages``."""

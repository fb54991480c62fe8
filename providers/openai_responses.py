"""The ``openai-responses`` wire protocol: OpenAI's Responses API (``POST {baseUrl}/responses``).

Requests are stateless (``store: false``): the whole transcript goes out every turn. Reasoning
items come back with ``encrypted_content`` (requested via ``include``); the whole item is kept as
the thinking block's signature and replayed verbatim to the same model (the handoff transform
turns it into text, or drops it, for any other model). Tool-call ids are ``call_id|item_id``.

The stream is a sequence of output items, each opened by ``response.output_item.added`` and
closed by ``response.output_item.done``; ``response.completed`` / ``response.incomplete`` carry
the usage and the status. Unknown items (web search calls, ...) and unknown events are ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
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
from baton.providers.options import StreamOptions
from baton.providers.tool_ids import IdNormalizer, normalize_responses
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

_RETRYABLE_CODES = frozenset(
    {"rate_limit_exceeded", "server_error", "server_is_overloaded", "overloaded", "internal_error",
     "service_unavailable", "slow_down"}
)
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


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The JSON body of a streaming Responses request (``ResponseCreateParamsStreaming``)."""
    compat = model.compat or {}
    body: dict[str, Any] = {
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
    return body


def _reasoning(model: Model, level: ThinkingLevel | None) -> dict[str, Any] | None:
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


def _tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    if isinstance(choice, str):
        if choice in ("auto", "none", "required"):
            return choice
        return {"type": "function", "name": choice}
    function = choice.get("function")
    if choice.get("type") == "function" and isinstance(function, dict) and "name" in function:
        return {"type": "function", "name": function["name"]}  # Chat Completions shape
    return choice


def convert_tool(tool: Tool) -> dict[str, Any]:
    """A function tool (non-strict: baton validates arguments itself)."""
    return {
        "type": "function",
        "name": tool.name,
        "description": clean_text(tool.description),
        "parameters": tool.parameters,
        "strict": False,
    }


def convert_input(model: Model, context: Context) -> list[dict[str, Any]]:
    """The ``input`` items: system prompt, then the transcript in Responses shape.

    Every item id and every ``call_id`` in the result is unique (the API rejects a request
    with "Duplicate item found with id ..."): ids made up for text without a stored id are
    minted per output item (never per source message), a stored id is used once, and made-up
    ids are settled last, so none can meet a stored one (:meth:`_Ids.settle`)."""
    items: list[dict[str, Any]] = []
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
        self.minted: list[dict[str, Any]] = []
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
            base = candidate = item["id"]
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


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": image_data_url(block)}


def _user_item(message: UserMessage, images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": [{"type": "input_text", "text": clean_text(message.content)}]}
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "input_text", "text": clean_text(block.text)})
        elif images:
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant_items(model: Model, message: AssistantMessage, index: int, ids: _Ids) -> list[dict[str, Any]]:
    same_model = model.same_model(message.provider, message.api, message.model)
    skipped_thinking = False
    items: list[dict[str, Any]] = []
    for position, block in enumerate(message.content):
        if isinstance(block, ThinkingContent):
            item = _reasoning_item(block) if same_model and model.reasoning else None
            if item is None or not ids.claim(item["id"]):  # a reasoning item goes in once
                skipped_thinking = True
            else:
                items.append(item)
        elif isinstance(block, TextContent):
            items.append(_output_message(block, index, position, ids))
        elif isinstance(block, ToolCall):
            item_id = block.id.partition("|")[2]
            call: dict[str, Any] = {
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


def _reasoning_item(block: ThinkingContent) -> dict[str, Any] | None:
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


def parse_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """(message id, phase) from a text signature: pi's ``{"v":1,"id":...,"phase":...}`` or a
    bare id."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def text_signature(item_id: str, phase: str | None) -> str:
    """The text signature recorded for an output message (pi's v1 format)."""
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


def _output_message(block: TextContent, index: int, position: int, ids: _Ids) -> dict[str, Any]:
    """An output message item: block ``position`` of message ``index``. Its stored id is used
    when it has one not yet in the input; otherwise an id is made up for this output item."""
    message_id, phase = parse_text_signature(block.text_signature)
    if message_id and len(message_id) > MAX_ITEM_ID:
        message_id = "msg_" + hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    minted = not message_id or not ids.claim(message_id)
    if minted:
        message_id = f"msg_{index}_{position}"
    item: dict[str, Any] = {
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


def _tool_result_items(message: ToolResultMessage, images: bool, ids: _Ids) -> list[dict[str, Any]]:
    text = tool_result_text(message)
    pictures = tool_result_images(message)
    call_id = ids.result_call_id(message.tool_call_id)
    output = text or (IMAGE_ONLY_RESULT_TEXT if pictures else NO_TOOL_OUTPUT)
    items: list[dict[str, Any]] = [{"type": "function_call_output", "call_id": call_id, "output": clean_text(output)}]
    if pictures and images:
        parts: list[dict[str, Any]] = [{"type": "input_text", "text": TOOL_RESULT_IMAGES_TEXT}]
        parts.extend(_image_part(b) for b in pictures)
        items.append({"role": "user", "content": parts})
    return items


# =============================================================================================
# Stream decoding


@dataclass(slots=True)
class _Item:
    """One output item being streamed."""

    kind: str  # "reasoning" | "message" | "function_call"
    index: int  # content index in the message
    parts: int = 0  # summary / content parts seen so far (for separators)
    arguments: str | None = None  # function_call_arguments.done, when seen
    extra: dict[str, Any] = field(default_factory=dict)


class ResponsesDecoder:
    """Decodes one Responses stream into builder calls (see :class:`providers.adapter.StreamDecoder`)."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.output: AssistantMessage = builder.output
        self.items: dict[int, _Item] = {}
        self.by_id: dict[str, _Item] = {}
        self.finished = False
        self._handlers = {
            "response.output_text.delta": self._text_delta,
            "response.refusal.delta": self._text_delta,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.reasoning_summary_text.delta": self._thinking_delta,
            "response.reasoning_text.delta": self._thinking_delta,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.reasoning_summary_part.added": self._part_added,
            "response.content_part.added": self._part_added,
            "response.function_call_arguments.done": self._arguments_done,
            "response.completed": self._completed,
            "response.incomplete": self._completed,
            "response.done": self._completed,
            "response.failed": self._failed,
            "error": self._error,
        }

    # --- StreamDecoder --------------------------------------------------------------------
    def feed(self, event: str, data: str) -> None:
        """One SSE event; the payload's ``type`` decides (the SSE event name is redundant)."""
        if self.finished or data == "[DONE]":
            return
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise ProviderError(
                f"Malformed event in the OpenAI Responses stream ({exc}): {data[:200]}"
            ) from exc
        if not isinstance(payload, dict):
            return
        handler = self._handlers.get(payload.get("type") or event)
        if handler is not None:
            handler(payload)

    def finish(self) -> None:
        """The body ended: it must have ended with ``response.completed`` (or ``incomplete``)."""
        if not self.finished:
            raise ProviderError(
                "OpenAI Responses stream ended before response.completed (connection closed early)",
                retryable=True,
            )

    # --- items ----------------------------------------------------------------------------
    def _lookup(self, payload: dict[str, Any]) -> _Item | None:
        position = payload.get("output_index")
        item = self.items.get(position) if isinstance(position, int) else None
        if item is None:
            item_id = payload.get("item_id")
            if isinstance(item_id, str):
                item = self.by_id.get(item_id)
        return item

    def _remember(self, payload: dict[str, Any], raw: dict[str, Any], item: _Item) -> None:
        position = payload.get("output_index")
        self.items[position if isinstance(position, int) else -len(self.items) - 1] = item
        item_id = raw.get("id")
        if isinstance(item_id, str):
            self.by_id[item_id] = item

    def _item_added(self, payload: dict[str, Any]) -> None:
        raw = payload.get("item")
        if not isinstance(raw, dict):
            return
        kind = raw.get("type")
        if kind == "reasoning":
            index = self.builder.start_thinking()
        elif kind == "message":
            index = self.builder.start_text()
        elif kind == "function_call":
            index = self.builder.start_tool_call(
                _tool_id(raw), str(raw.get("name") or ""), _str(raw.get("arguments"))
            )
        else:
            return  # web_search_call, file_search_call, ...: server-side tools, not ours
        self._remember(payload, raw, _Item(kind, index))

    def _part_added(self, payload: dict[str, Any]) -> None:
        item = self._lookup(payload)
        if item is None:
            return
        part = payload.get("part")
        part_type = part.get("type") if isinstance(part, dict) else None
        if item.kind == "reasoning" and part_type in ("summary_text", "reasoning_text", None):
            # pi's separator between reasoning summary parts, streamed before the next part so
            # the deltas add up to the final text.
            if item.parts and self._is_open(item):
                self.builder.thinking_delta("\n\n")
            item.parts += 1

    def _is_open(self, item: _Item) -> bool:
        content = self.output.content
        return item.index == len(content) - 1

    def _thinking_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        item = self._lookup(payload)
        if item is not None and item.kind != "reasoning":
            return
        if item is not None and item.parts == 0:
            item.parts = 1
        self.builder.thinking_delta(delta)

    def _text_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        item = self._lookup(payload)
        if item is not None and item.kind != "message":
            return
        self.builder.text_delta(delta)

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        item = self._lookup(payload)
        if item is None or item.kind != "function_call" or not isinstance(delta, str):
            return
        self.builder.tool_call_delta(item.index, delta)

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        item = self._lookup(payload)
        arguments = payload.get("arguments")
        if item is not None and item.kind == "function_call" and isinstance(arguments, str):
            item.arguments = arguments

    def _item_done(self, payload: dict[str, Any]) -> None:
        raw = payload.get("item")
        if not isinstance(raw, dict):
            return
        item = self._lookup(payload)
        if item is None and isinstance(raw.get("id"), str):
            item = self.by_id.get(raw["id"])
        if item is None or item.kind != raw.get("type"):
            return
        block = self.output.content[item.index]
        if item.kind == "reasoning" and isinstance(block, ThinkingContent):
            final = _reasoning_text(raw)
            if final is not None:
                block.thinking = final
            block.thinking_signature = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
            if self._is_open(item):
                self.builder.end_thinking()
        elif item.kind == "message" and isinstance(block, TextContent):
            final = _message_text(raw)
            if final is not None:
                block.text = final
            if isinstance(raw.get("id"), str):
                phase = raw.get("phase")
                block.text_signature = text_signature(raw["id"], phase if isinstance(phase, str) else None)
            if self._is_open(item):
                self.builder.end_text()
        elif item.kind == "function_call" and isinstance(block, ToolCall):
            if raw.get("call_id") or raw.get("id"):
                block.id = _tool_id(raw)
            if raw.get("name"):
                block.name = str(raw["name"])
            final_args = raw.get("arguments") if isinstance(raw.get("arguments"), str) else item.arguments
            self.builder.end_tool_call(item.index, _parse_arguments(final_args))

    # --- terminal events --------------------------------------------------------------------
    def _completed(self, payload: dict[str, Any]) -> None:
        response = payload.get("response")
        response = response if isinstance(response, dict) else {}
        usage = response.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        status = response.get("status") or ("incomplete" if payload.get("type") == "response.incomplete" else None)
        if status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            if reason == "content_filter":
                self.output.stop_reason = "error"
                self.output.error_message = "The response was stopped by OpenAI's content filter"
            else:
                self.output.stop_reason = "length"
        elif status in ("failed", "cancelled"):
            self.output.stop_reason = "error"
            self.output.error_message = _error_message(response.get("error")) or f"Response {status}"
        else:
            self.output.stop_reason = "toolUse" if self.builder.has_tool_calls else "stop"
        self.finished = True

    def _usage(self, usage: dict[str, Any]) -> None:
        details = usage.get("input_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        target = self.output.usage
        target.input = max(0, _int(usage.get("input_tokens")) - cached)
        target.output = _int(usage.get("output_tokens"))
        target.cache_read = cached
        target.cache_write = 0
        total = usage.get("total_tokens")
        target.total_tokens = total if isinstance(total, int) else None

    def _failed(self, payload: dict[str, Any]) -> None:
        response = payload.get("response")
        response = response if isinstance(response, dict) else {}
        error = response.get("error")
        message = _error_message(error)
        if message is None:
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            message = f"incomplete: {reason}" if reason else "OpenAI reported the response as failed (no details)"
        raise ProviderError(message, retryable=_retryable(error))

    def _error(self, payload: dict[str, Any]) -> None:
        error = payload.get("error")
        if not isinstance(error, dict):  # the SDK's shape: code/message/param at the top level
            error = {"code": payload.get("code"), "message": payload.get("message")}
        message = _error_message(error) or "OpenAI reported an error in the stream (no message)"
        raise ProviderError(message, retryable=_retryable(error))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tool_id(raw: dict[str, Any]) -> str:
    call_id = _str(raw.get("call_id"))
    item_id = _str(raw.get("id"))
    return f"{call_id}|{item_id}" if item_id else call_id


def _reasoning_text(raw: dict[str, Any]) -> str | None:
    """The final reasoning text of a finished item: summaries joined by blank lines (pi), else
    raw reasoning text parts; ``None`` when the item carries neither (keep what streamed)."""
    summary = raw.get("summary")
    if isinstance(summary, list):
        texts = [s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)]
        if texts:
            return "\n\n".join(texts)
    content = raw.get("content")
    if isinstance(content, list):
        texts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
        if texts:
            return "\n\n".join(texts)
    return None


def _message_text(raw: dict[str, Any]) -> str | None:
    content = raw.get("content")
    if not isinstance(content, list) or not content:
        return None
    out: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "refusal":
            out.append(_str(part.get("refusal")))
        else:
            out.append(_str(part.get("text")))
    return "".join(out)


def _parse_arguments(raw: str | None) -> dict[str, Any] | None:
    """The strict parse of the final arguments; ``None`` lets the builder use what streamed."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error_message(error: Any) -> str | None:
    if not isinstance(error, dict):
        return error if isinstance(error, str) and error else None
    message = error.get("message")
    code = error.get("code") or error.get("type")
    if isinstance(message, str) and message:
        return f"{code}: {message}" if isinstance(code, str) and code else message
    return code if isinstance(code, str) and code else None


def _retryable(error: Any) -> bool:
    if not isinstance(error, dict):
        return False
    return error.get("code") in _RETRYABLE_CODES or error.get("type") in _RETRYABLE_CODES


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

"""Decoding an OpenAI Responses stream into :class:`~providers.adapter.MessageBuilder` calls.

The stream is a sequence of output items, each opened by ``response.output_item.added`` and
closed by ``response.output_item.done``; ``response.completed`` / ``response.incomplete`` carry
the usage and the status. Unknown items (web search calls, ...) and unknown events are ignored.
A finished reasoning item is kept whole as its thinking block's signature, a finished message's
id and phase as its text block's (:func:`text_signature`), so the request can replay them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from baton.providers.adapter import MessageBuilder, ProviderError
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall
from baton.providers.models import Model
from baton.providers.web_search import SEARCH_MARK, Citations, Source, add_searches, search_text, sources_text
from baton.providers.wire_common import loads_event

_RETRYABLE_CODES = frozenset(
    {"rate_limit_exceeded", "server_error", "server_is_overloaded", "overloaded", "internal_error",
     "service_unavailable", "slow_down"}
)


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
    payload: JsonObject = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


@dataclass(slots=True)
class _Item:
    """One output item being streamed."""

    kind: str  # "reasoning" | "message" | "function_call"
    index: int  # content index in the message
    parts: int = 0  # summary / content parts seen so far (for separators)
    arguments: str | None = None  # function_call_arguments.done, when seen


class ResponsesDecoder:
    """Decodes one Responses stream into builder calls (see :class:`providers.adapter.StreamDecoder`)."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.output: AssistantMessage = builder.output
        self.items: dict[int, _Item] = {}
        self.by_id: dict[str, _Item] = {}
        self.finished = False
        self._cited = Citations()
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
            payload = loads_event(data)
        except ValueError as exc:
            raise ProviderError(
                f"Malformed event in the OpenAI Responses stream ({exc}): {data[:200]}"
            ) from exc
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or event
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
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
    def _lookup(self, payload: JsonObject) -> _Item | None:
        position = payload.get("output_index")
        item = self.items.get(position) if isinstance(position, int) else None
        if item is None:
            item_id = payload.get("item_id")
            if isinstance(item_id, str):
                item = self.by_id.get(item_id)
        return item

    def _remember(self, payload: JsonObject, raw: JsonObject, item: _Item) -> None:
        position = payload.get("output_index")
        self.items[position if isinstance(position, int) else -len(self.items) - 1] = item
        item_id = raw.get("id")
        if isinstance(item_id, str):
            self.by_id[item_id] = item

    def _item_added(self, payload: JsonObject) -> None:
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

    def _part_added(self, payload: JsonObject) -> None:
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

    def _thinking_delta(self, payload: JsonObject) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        item = self._lookup(payload)
        if item is not None and item.kind != "reasoning":
            return
        if item is not None and item.parts == 0:
            item.parts = 1
        self.builder.thinking_delta(delta)

    def _text_delta(self, payload: JsonObject) -> None:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return
        item = self._lookup(payload)
        if item is not None and item.kind != "message":
            return
        self.builder.text_delta(delta)

    def _arguments_delta(self, payload: JsonObject) -> None:
        delta = payload.get("delta")
        item = self._lookup(payload)
        if item is None or item.kind != "function_call" or not isinstance(delta, str):
            return
        self.builder.tool_call_delta(item.index, delta)

    def _arguments_done(self, payload: JsonObject) -> None:
        item = self._lookup(payload)
        arguments = payload.get("arguments")
        if item is not None and item.kind == "function_call" and isinstance(arguments, str):
            item.arguments = arguments

    def _item_done(self, payload: JsonObject) -> None:
        raw = payload.get("item")
        if not isinstance(raw, dict):
            return
        if raw.get("type") == "web_search_call":
            self._search_done(raw)
            return
        item = self._lookup(payload)
        raw_id = raw.get("id")
        if item is None and isinstance(raw_id, str):
            item = self.by_id.get(raw_id)
        if item is None or item.kind != raw.get("type"):
            return
        block = self.output.content[item.index]
        if isinstance(block, ThinkingContent) and item.kind == "reasoning":
            self._reasoning_done(item, block, raw)
        elif isinstance(block, TextContent) and item.kind == "message":
            self._message_done(item, block, raw)
        elif isinstance(block, ToolCall) and item.kind == "function_call":
            self._call_done(item, block, raw)

    def _reasoning_done(self, item: _Item, block: ThinkingContent, raw: JsonObject) -> None:
        final = _reasoning_text(raw)
        if final is not None:
            block.thinking = final
        block.thinking_signature = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
        if self._is_open(item):
            self.builder.end_thinking()

    def _search_done(self, raw: JsonObject) -> None:
        """The vendor's web search ended: kept as a text block (see :mod:`providers.web_search`)."""
        action = raw.get("action")
        action = action if isinstance(action, dict) else {}
        kind = action.get("type")
        sources = action.get("sources")
        results = _sources(sources) if isinstance(sources, list) else None
        if kind == "search" or kind is None:
            query = action.get("query")
            text = search_text(query if isinstance(query, str) else "", results,
                               None if raw.get("status") != "failed" else "the search failed")
            add_searches(self.output.usage, 1)
        else:  # open_page, find_in_page: what the search looked at
            url, pattern = _str(action.get("url")), _str(action.get("pattern"))
            text = f"{SEARCH_MARK} {kind}: {url}" + (f' (looking for "{pattern}")' if pattern else "")
        self.builder.start_text(text)
        self.builder.end_text()

    def _message_done(self, item: _Item, block: TextContent, raw: JsonObject) -> None:
        content = raw.get("content")
        for part in content if isinstance(content, list) else ():
            annotations = part.get("annotations") if isinstance(part, dict) else None
            for note in annotations if isinstance(annotations, list) else ():
                if isinstance(note, dict) and note.get("type") == "url_citation":
                    self._cited.add(note.get("url"), note.get("title"))
        final = _message_text(raw)
        if final is not None:
            block.text = final
        raw_id, phase = raw.get("id"), raw.get("phase")
        if isinstance(raw_id, str):
            block.text_signature = text_signature(raw_id, phase if isinstance(phase, str) else None)
        if self._is_open(item):
            self.builder.end_text()

    def _call_done(self, item: _Item, block: ToolCall, raw: JsonObject) -> None:
        if raw.get("call_id") or raw.get("id"):
            block.id = _tool_id(raw)
        if raw.get("name"):
            block.name = str(raw["name"])
        arguments = raw.get("arguments")
        final = arguments if isinstance(arguments, str) else item.arguments
        self.builder.end_tool_call(item.index, _parse_arguments(final))

    # --- terminal events --------------------------------------------------------------------
    def _completed(self, payload: JsonObject) -> None:
        if self._cited.sources:
            self.builder.start_text(sources_text(self._cited.sources))
            self.builder.end_text()
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

    def _usage(self, usage: JsonObject) -> None:
        details = usage.get("input_tokens_details")
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        target = self.output.usage
        target.input = max(0, _int(usage.get("input_tokens")) - cached)
        target.output = _int(usage.get("output_tokens"))
        target.cache_read = cached
        target.cache_write = 0
        total = usage.get("total_tokens")
        target.total_tokens = total if isinstance(total, int) else None

    def _failed(self, payload: JsonObject) -> None:
        response = payload.get("response")
        response = response if isinstance(response, dict) else {}
        error = response.get("error")
        message = _error_message(error)
        if message is None:
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            message = f"incomplete: {reason}" if reason else "OpenAI reported the response as failed (no details)"
        raise ProviderError(message, retryable=_retryable(error))

    def _error(self, payload: JsonObject) -> None:
        error = payload.get("error")
        if not isinstance(error, dict):  # the SDK's shape: code/message/param at the top level
            error = {"code": payload.get("code"), "message": payload.get("message")}
        message = _error_message(error) or "OpenAI reported an error in the stream (no message)"
        raise ProviderError(message, retryable=_retryable(error))


def _sources(sources: list[JsonValue]) -> list[Source]:
    """A web search's ``action.sources``: pages by URL, the vendor's data feeds by name."""
    found: list[Source] = []
    for source in sources:
        if isinstance(source, dict):
            url, name = source.get("url"), source.get("name")
            if isinstance(url, str) and url:
                found.append(Source(url, _str(source.get("title"))))
            elif isinstance(name, str) and name:
                found.append(Source("", name))
    return found


def _str(value: JsonValue) -> str:
    return value if isinstance(value, str) else ""


def _int(value: JsonValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tool_id(raw: JsonObject) -> str:
    call_id = _str(raw.get("call_id"))
    item_id = _str(raw.get("id"))
    return f"{call_id}|{item_id}" if item_id else call_id


def _reasoning_text(raw: JsonObject) -> str | None:
    """The final reasoning text of a finished item: summaries joined by blank lines (pi), else
    raw reasoning text parts; ``None`` when the item carries neither (keep what streamed)."""
    for key in ("summary", "content"):
        texts = _part_texts(raw.get(key))
        if texts:
            return "\n\n".join(texts)
    return None


def _part_texts(parts: JsonValue) -> list[str]:
    """The ``text`` of each part of a list of parts (none for anything else)."""
    if not isinstance(parts, list):
        return []
    return [text for part in parts if isinstance(part, dict) and isinstance(text := part.get("text"), str)]


def _message_text(raw: JsonObject) -> str | None:
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


def _parse_arguments(raw: str | None) -> JsonObject | None:
    """The strict parse of the final arguments; ``None`` lets the builder use what streamed."""
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error_message(error: JsonValue) -> str | None:
    if not isinstance(error, dict):
        return error if isinstance(error, str) and error else None
    message = error.get("message")
    code = error.get("code") or error.get("type")
    if isinstance(message, str) and message:
        return f"{code}: {message}" if isinstance(code, str) and code else message
    return code if isinstance(code, str) and code else None


def _retryable(error: JsonValue) -> bool:
    if not isinstance(error, dict):
        return False
    return error.get("code") in _RETRYABLE_CODES or error.get("type") in _RETRYABLE_CODES

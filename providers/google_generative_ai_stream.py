"""Decoding a Gemini ``streamGenerateContent`` SSE stream into
:class:`~providers.adapter.MessageBuilder` calls.

Each SSE event is a whole ``GenerateContentResponse`` chunk. Text and ``thought`` parts grow
text/thinking blocks (a part's ``thoughtSignature`` is kept on the block), ``functionCall`` parts
become tool calls (ids generated when absent; Vertex's streamed ``partialArgs`` are assembled),
``usageMetadata`` is cumulative (the last one wins) and ``finishReason`` ends the message:
anything but ``STOP``/``MAX_TOKENS`` raises :class:`~providers.adapter.ProviderError`.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from typing import TypedDict, cast

from baton.providers.adapter import MessageBuilder, ProviderError
from baton.providers.events import ToolCallDeltaEvent
from baton.providers.json_types import JsonArray, JsonObject, JsonValue
from baton.providers.models import Model
from baton.providers.web_search import Source, add_searches, search_text
from baton.providers.wire_common import loads_event

_ids = itertools.count(1)


def new_tool_call_id(name: str) -> str:
    """A unique id for a function call the server sent without one: ``{name}_{n}_{random}``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:40] or "call"
    return f"{safe}_{next(_ids)}_{secrets.token_hex(4)}"


_FINISH_ERRORS: dict[str, str] = {
    "SAFETY": "the response was blocked by the safety filters",
    "RECITATION": "the response was blocked for reciting training data",
    "PROHIBITED_CONTENT": "the response was blocked for prohibited content",
    "BLOCKLIST": "the response contained blocklisted terms",
    "SPII": "the response contained sensitive personal information",
    "MALFORMED_FUNCTION_CALL": "the model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "the model called a tool that was not offered",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls",
    "LANGUAGE": "the response was in an unsupported language",
    "OTHER": "the response stopped for an unspecified reason",
    "FINISH_REASON_UNSPECIFIED": "the response stopped for an unspecified reason",
    "IMAGE_SAFETY": "the generated image was blocked by the safety filters",
    "IMAGE_PROHIBITED_CONTENT": "the generated image was blocked for prohibited content",
    "IMAGE_RECITATION": "the generated image was blocked for recitation",
    "IMAGE_OTHER": "image generation stopped for an unspecified reason",
    "NO_IMAGE": "no image was generated",
}
_RETRYABLE_STATUS = frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"})


class _Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    functionCall: JsonValue


class _Content(TypedDict, total=False):
    parts: list[_Part]


class _Candidate(TypedDict, total=False):
    content: _Content
    finishReason: str
    finishMessage: str
    groundingMetadata: JsonValue


class _Chunk(TypedDict, total=False):
    """A ``GenerateContentResponse`` chunk as far as the decoder reads it."""

    candidates: list[_Candidate]


class GeminiDecoder:
    """Decodes one ``streamGenerateContent`` SSE stream into :class:`MessageBuilder` calls."""

    def __init__(self, model: Model, builder: MessageBuilder) -> None:
        self.model = model
        self.builder = builder
        self.usage = builder.output.usage
        self._current: str | None = None
        """Kind of the open text/thinking block: "text", "thinking" or None."""
        self._seen_ids: set[str] = set()
        self._streaming_call: int | None = None
        """Builder index of a Vertex function call whose arguments are still streaming."""
        self._streaming_args: JsonObject = {}
        self._finish_reason: str | None = None
        self._finish_message: str | None = None
        self._last_usage: JsonObject | None = None
        self._grounding: JsonObject | None = None
        """The last ``groundingMetadata``: the vendor's Google searches and the pages they found."""

    def feed(self, event: str, data: str) -> None:
        """One SSE event: a ``GenerateContentResponse`` chunk (or an error object)."""
        if data == "[DONE]":
            return
        try:
            chunk = loads_event(data)
        except json.JSONDecodeError as exc:
            raise ProviderError(f"Malformed JSON in Gemini stream: {exc.msg} (data: {data[:200]!r})") from exc
        if isinstance(chunk, list):  # a JSON array stream (no alt=sse) delivers the same chunks
            for item in chunk:
                if isinstance(item, dict):
                    self._chunk(item)
            return
        if not isinstance(chunk, dict):
            raise ProviderError(f"Unexpected Gemini stream payload: {data[:200]!r}")
        self._chunk(chunk)

    def finish(self) -> None:
        """The body ended: close blocks and map ``finishReason`` (none at all = stream cut)."""
        builder = self.builder
        if self._grounding is not None:
            self._searched(self._grounding)
        builder.close_all()
        reason = self._finish_reason
        if reason is None:
            raise ProviderError("Gemini stream ended without a finishReason (connection cut?)", retryable=True)
        if reason == "STOP":
            builder.set_stop_reason("toolUse" if builder.has_tool_calls else "stop")
        elif reason == "MAX_TOKENS":
            builder.set_stop_reason("length")
        else:
            what = _FINISH_ERRORS.get(reason, "the response stopped unexpectedly")
            message = f"Gemini stopped: {what} (finishReason {reason})"
            if self._finish_message:
                message += f": {self._finish_message}"
            raise ProviderError(message)

    # --- chunks -----------------------------------------------------------------------------
    def _chunk(self, chunk: JsonObject) -> None:
        if "error" in chunk:
            error = chunk["error"]
            raise _api_error(error if isinstance(error, dict) else {"message": str(error)})
        try:
            self._candidate(cast(_Chunk, chunk))  # the documented shape; any other raises below
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            # The fast path trusts the documented shape; anything else is reported, not guessed at.
            raise ProviderError(f"Unexpected Gemini stream chunk ({type(exc).__name__}: {exc})") from exc
        usage = chunk.get("usageMetadata")
        if usage is not None and usage != self._last_usage and isinstance(usage, dict):
            self._usage(usage)
        feedback = chunk.get("promptFeedback")
        if feedback and isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = feedback["blockReason"]
            detail = feedback.get("blockReasonMessage")
            message = f"Gemini blocked the prompt (blockReason {reason})"
            raise ProviderError(f"{message}: {detail}" if detail else message)

    def _candidate(self, chunk: _Chunk) -> None:
        candidates = chunk.get("candidates")
        if not candidates:
            return
        candidate = candidates[0]
        content = candidate.get("content")
        if content:
            for part in content.get("parts") or ():
                text = part.get("text")
                if text and len(part) == 1 and self._current == "text":
                    self.builder.text_delta(text)  # the common case: more of the open text block
                else:
                    self._part(part)
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict):
            self._grounding = grounding
        reason = candidate.get("finishReason")
        if reason:
            self._finish_reason = str(reason)
            message = candidate.get("finishMessage")
            if isinstance(message, str) and message:
                self._finish_message = message

    def _searched(self, grounding: JsonObject) -> None:
        """Google Search grounding, kept as a text block (see :mod:`providers.web_search`)."""
        raw_queries = grounding.get("webSearchQueries")
        queries = [q for q in raw_queries if isinstance(q, str) and q] if isinstance(raw_queries, list) else []
        results: list[Source] = []
        chunks = grounding.get("groundingChunks")
        for chunk in chunks if isinstance(chunks, list) else ():
            web = chunk.get("web") if isinstance(chunk, dict) else None
            if isinstance(web, dict) and isinstance(web.get("uri"), str):
                title = web.get("title")
                results.append(Source(str(web["uri"]), title if isinstance(title, str) else ""))
        if not queries and not results:
            return
        self.builder.start_text(search_text("; ".join(queries), results))
        self.builder.end_text()
        self._current = None
        add_searches(self.usage, len(queries) or 1)

    def _part(self, part: _Part) -> None:
        signature = part.get("thoughtSignature")
        if not isinstance(signature, str) or not signature:
            signature = None
        if "functionCall" in part:
            self._function_call(part.get("functionCall"), signature)
            return
        text = part.get("text")
        if not isinstance(text, str):
            return  # executableCode, codeExecutionResult, inlineData, ...: not ours
        builder = self.builder
        if part.get("thought") is True:
            if text or signature:
                if self._current != "thinking":
                    builder.start_thinking()
                    self._current = "thinking"
                if text:
                    builder.thinking_delta(text)
                if signature:
                    builder.set_thinking_signature(signature)
            return
        if not text and not signature:
            return  # empty filler parts (e.g. next to a finishReason) carry nothing
        if self._current != "text":
            builder.start_text()
            self._current = "text"
        if text:
            builder.text_delta(text)
        if signature:
            builder.set_text_signature(signature)

    def _function_call(self, call: JsonValue, signature: str | None) -> None:
        if not isinstance(call, dict):
            return
        builder = self.builder
        name = call.get("name")
        partial = call.get("partialArgs")
        if self._streaming_call is not None and not name:
            # Vertex's streamed arguments: fragments for the open call, then an empty terminator.
            if isinstance(partial, list):
                self._partial_args(partial)
            if not call.get("willContinue"):
                self._end_streaming_call()
            return
        self._end_streaming_call()
        self._current = None
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in self._seen_ids:
            call_id = new_tool_call_id(str(name or ""))
        self._seen_ids.add(call_id)
        args = call.get("args")
        args = args if isinstance(args, dict) else {}
        if call.get("willContinue"):
            index = builder.start_tool_call(call_id, str(name or ""), thought_signature=signature)
            self._streaming_call = index
            self._streaming_args = dict(args)
            if isinstance(partial, list):
                self._partial_args(partial)
            return
        index = builder.start_tool_call(call_id, str(name or ""), json.dumps(args), thought_signature=signature)
        builder.end_tool_call(index, args)

    def _partial_args(self, fragments: JsonArray) -> None:
        index = self._streaming_call
        if index is None:
            return
        for fragment in fragments:
            if isinstance(fragment, dict):
                _apply_partial_arg(self._streaming_args, fragment)
        call = self.builder.open_tool_call(index)
        if call is not None:
            call.arguments = self._streaming_args
            delta = json.dumps(fragments, separators=(",", ":"))
            self.builder.emit(ToolCallDeltaEvent(index, delta, self.builder.output))

    def _end_streaming_call(self) -> None:
        index = self._streaming_call
        if index is not None:
            self._streaming_call = None
            self.builder.end_tool_call(index, self._streaming_args)
            self._streaming_args = {}

    def _usage(self, meta: JsonObject) -> None:
        """Cumulative per chunk (last wins); ``input`` excludes cached prompt tokens. The cost is
        priced by the driver when the message ends."""
        self._last_usage = meta  # callers skip chunks that repeat the previous counts
        # Tool-use prompt tokens (code execution results fed back in) are billed as input.
        prompt = _int(meta.get("promptTokenCount")) + _int(meta.get("toolUsePromptTokenCount"))
        cached = _int(meta.get("cachedContentTokenCount"))
        u = self.usage
        u.cache_read = cached
        u.input = max(0, prompt - cached)
        u.output = _int(meta.get("candidatesTokenCount")) + _int(meta.get("thoughtsTokenCount"))
        u.cache_write = 0
        total = meta.get("totalTokenCount")
        u.total_tokens = total if isinstance(total, int) else u.input + u.cache_read + u.output


def _int(value: JsonValue) -> int:
    return value if isinstance(value, int) else 0


_PATH_TOKEN = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[['\"]([^'\"]*)['\"]\]")


def _apply_partial_arg(args: JsonObject, fragment: JsonObject) -> None:
    """Apply one Vertex ``PartialArg`` (``jsonPath`` + a typed value) to ``args`` in place:
    string values continue (are appended to) what the path already holds."""
    keys = _json_path_keys(fragment.get("jsonPath"))
    found = _partial_value(fragment)
    if not keys or found is None:
        return
    target: JsonValue = args
    for key, following in itertools.pairwise(keys):
        target = _child(target, key, [] if isinstance(following, int) else {})
        if target is None:
            return
    _continue_value(target, keys[-1], found[0])


def _json_path_keys(path: JsonValue) -> list[str | int]:
    """The keys and indexes of a ``$.a[0]['b']`` path (none for anything else)."""
    if not isinstance(path, str) or not path.startswith("$"):
        return []
    keys: list[str | int] = []
    for match in _PATH_TOKEN.finditer(path, 1):
        key, position, quoted = match.groups()
        keys.append(int(position) if position is not None else (key if key is not None else quoted))
    return keys


def _partial_value(fragment: JsonObject) -> tuple[JsonValue] | None:
    """The fragment's typed value, boxed (``None`` when it has none; a ``nullValue`` is ``(None,)``)."""
    for key in ("stringValue", "numberValue", "boolValue"):
        if key in fragment:
            return (fragment[key],)
    return (None,) if "nullValue" in fragment else None


def _continue_value(target: JsonValue, key: str | int, value: JsonValue) -> None:
    """Set ``target[key]`` to ``value``, appended to the string already there when both are strings."""
    if isinstance(target, dict) and isinstance(key, str):
        previous = target.get(key)
        target[key] = previous + value if isinstance(previous, str) and isinstance(value, str) else value
    elif isinstance(target, list) and isinstance(key, int):
        while len(target) <= key:
            target.append(None)
        previous = target[key]
        target[key] = previous + value if isinstance(previous, str) and isinstance(value, str) else value


def _child(container: JsonValue, key: str | int, empty: JsonObject | JsonArray) -> JsonValue:
    if isinstance(container, dict) and isinstance(key, str):
        if not isinstance(container.get(key), dict | list):
            container[key] = empty
        return container[key]
    if isinstance(container, list) and isinstance(key, int):
        while len(container) <= key:
            container.append(None)
        if not isinstance(container[key], dict | list):
            container[key] = empty
        return container[key]
    return None


def _api_error(error: JsonObject) -> ProviderError:
    message = str(error.get("message") or "Gemini reported an error in the stream")
    status = error.get("status")
    code = error.get("code")
    if isinstance(status, str) and status and status not in message:
        message = f"{message} ({status})"
    http = code if isinstance(code, int) else None
    retryable = (http is not None and (http == 429 or http >= 500)) or status in _RETRYABLE_STATUS
    return ProviderError(message, status=http, retryable=retryable)

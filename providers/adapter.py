"""The contract between the generic streaming driver and one wire-protocol adapter.

An adapter is thin: it turns a (transformed) :class:`Context` into one HTTP request, and decodes
that protocol's server-sent events into the event protocol through a :class:`MessageBuilder`.
Transport, retries, abort, idle timeouts and error events are the driver's job
(``providers/transport.py``), shared by every adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from baton.providers.errors import ProviderError as ProviderError  # defined with the error tree
from baton.providers.events import (
    AssistantMessageEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from baton.providers.json_depth import (
    MAX_VALUE_DEPTH,
    JsonTooDeepError,
    clamp_depth,
    depth_exceeds,
    loads_bounded,
)
from baton.providers.json_types import JsonObject
from baton.providers.messages import (
    AssistantMessage,
    Context,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from baton.providers.models import Model
from baton.providers.options import StreamOptions
from baton.providers.streaming_json import StreamingJsonParser
from baton.providers.surrogates import SurrogateCarry
from baton.providers.tool_ids import IdNormalizer

RETRY_AFTER_TOO_LONG = "the server asked to retry after"
"""Part of the error message when a ``Retry-After`` exceeds the retry limit: no later retry
(the session's included) may try again earlier than the server asked."""
REQUEST_TIME_LIMIT = "the time limit for one request"
"""Part of the error message when a request ran past ``request_timeout``: not retried (the
session's retry included), since a stream that slow would only use the time up again."""


class HttpRequest:
    """One POST: where, with which headers, and the JSON body.

    An adapter that encoded the body itself (from cached per-message forms,
    :mod:`providers.wire_cache`) gives ``encoded`` (the body as sent) and ``expand`` (builds the
    same body as a dict); ``body`` is then built only when something reads it (``on_payload``,
    tests)."""

    __slots__ = ("_body", "_expand", "encoded", "headers", "url")

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        body: JsonObject | None = None,
        *,
        encoded: bytes | None = None,
        expand: Callable[[], JsonObject] | None = None,
    ) -> None:
        if body is None and expand is None:
            raise ValueError("an HttpRequest needs a body or a way to build it")
        self.url = url
        self.headers = headers
        self._body = body
        self._expand = expand
        self.encoded = encoded

    @property
    def body(self) -> JsonObject:
        """The whole JSON body."""
        if self._body is None:
            assert self._expand is not None
            self._body = self._expand()
        return self._body

    @body.setter
    def body(self, value: JsonObject) -> None:
        self._body = value
        self.encoded = None  # changed: encoded anew from the dict

    def __repr__(self) -> str:
        return f"HttpRequest(url={self.url!r})"


class StreamDecoder(Protocol):
    """Decodes one response's server-sent events into builder calls."""

    def feed(self, event: str, data: str) -> None:
        """One SSE event (``event`` is ``"message"`` when the server named none).

        Raises :class:`ProviderError` for an in-band error the provider reported."""

    def finish(self) -> None:
        """The body ended. Close open blocks and set the stop reason; raise
        :class:`ProviderError` when the stream was cut short before its terminal marker."""


class FrameDecoder(Protocol):
    """Splits a response body into ``(event name, data)`` frames for a :class:`StreamDecoder`.

    Server-sent events (:class:`~providers.sse.SseDecoder`) unless the adapter supplies another
    through the optional ``create_frame_decoder()`` hook (e.g. AWS's binary event stream)."""

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """The frames completed by ``chunk`` (bytes split anywhere)."""

    def close(self) -> list[tuple[str, str]]:
        """The frames left when the body ended."""


class WireAdapter(Protocol):
    """One wire protocol (``model.api``), registered in :mod:`providers.dispatch`.

    The adapter owns its API name and its tool-call id rules. Two optional hooks, looked up with
    ``getattr`` by the driver in :mod:`providers.transport`, leave room for protocols that are
    not JSON over SSE with a bearer key:

    * ``create_frame_decoder(self) -> FrameDecoder``: the response's framing (default: SSE);
    * ``sign(self, request: httpx.Request) -> None``: a last change to each attempt's final
      request (body and headers as sent), e.g. an AWS SigV4 signature.
    """

    api: str

    def tool_call_id_normalizer(self, model: Model) -> IdNormalizer | None:
        """How ids of tool calls made by other models are rewritten for ``model`` (``None``: kept)."""

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        """The HTTP request for an already transformed context."""

    def create_decoder(self, model: Model, builder: MessageBuilder) -> StreamDecoder:
        """A fresh decoder for one response."""


@dataclass
class _OpenToolCall:
    block: ToolCall
    raw: list[str] = field(default_factory=list)
    parser: StreamingJsonParser = field(default_factory=StreamingJsonParser)
    carry: SurrogateCarry = field(default_factory=SurrogateCarry)


class MessageBuilder:
    """Grows the partial :class:`AssistantMessage` and emits the matching events.

    Adapters address blocks by the index the builder returns; at most one text or thinking block
    is open at a time (opening another closes it), while several tool calls may stream
    interleaved (OpenAI Chat sends parallel calls by index).

    Deltas pass through :class:`SurrogateCarry`: an emoji whose UTF-16 halves arrive in two
    deltas (``"\\ud83d"`` then ``"\\ude00"``) is joined, and no lone surrogate reaches a block.
    """

    def __init__(self, output: AssistantMessage, emit: Callable[[AssistantMessageEvent], None]) -> None:
        self.output = output
        self.emit = emit
        self._open_text: int | None = None
        self._open_thinking: int | None = None
        self._text_block: TextContent | None = None
        """The open text block (the one at ``_open_text``)."""
        self._thinking_block: ThinkingContent | None = None
        """The open thinking block (the one at ``_open_thinking``)."""
        self._open_tools: dict[int, _OpenToolCall] = {}
        self._text_carry = SurrogateCarry()
        self._thinking_carry = SurrogateCarry()
        self.content_started = False
        """True once anything was emitted past ``start`` (no silent retry after that)."""

    # --- text -----------------------------------------------------------------------------
    def start_text(self, text: str = "", signature: str | None = None) -> int:
        """Open a text block (closing any open text/thinking block) and return its index."""
        self.close_text_and_thinking()
        block = TextContent(text="", text_signature=signature)
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self._open_text = index
        self._text_block = block
        self.content_started = True
        self.emit(TextStartEvent(index, self.output))
        if text:
            self.text_delta(text)
        return index

    def text_delta(self, delta: str) -> None:
        """Append to the open text block, opening one if none is open."""
        block = self._text_block
        if block is None:
            self.start_text()
            block = self._text_block
            assert block is not None
        delta = self._text_carry.feed(delta)
        if not delta:
            return
        block.text += delta
        index = self._open_text
        assert index is not None  # set with the block
        self.emit(TextDeltaEvent(index, delta, self.output))

    def set_text_signature(self, signature: str) -> None:
        """Attach a signature to the open (or last) text block."""
        index = self._open_text if self._open_text is not None else self._last_index(TextContent)
        if index is not None:
            block = self.output.content[index]
            assert isinstance(block, TextContent)
            block.text_signature = signature

    def end_text(self) -> None:
        """Close the open text block, if any."""
        index = self._open_text
        block = self._text_block
        if index is None or block is None:
            return
        self._open_text = None
        self._text_block = None
        block.text += self._text_carry.flush()
        self.emit(TextEndEvent(index, block.text, self.output))

    # --- thinking -------------------------------------------------------------------------
    def start_thinking(
        self, text: str = "", signature: str | None = None, redacted: bool | None = None
    ) -> int:
        """Open a thinking block (closing any open text/thinking block) and return its index."""
        self.close_text_and_thinking()
        block = ThinkingContent(thinking="", thinking_signature=signature, redacted=redacted)
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self._open_thinking = index
        self._thinking_block = block
        self.content_started = True
        self.emit(ThinkingStartEvent(index, self.output))
        if text:
            self.thinking_delta(text)
        return index

    def thinking_delta(self, delta: str) -> None:
        """Append to the open thinking block, opening one if none is open."""
        block = self._thinking_block
        if block is None:
            self.start_thinking()
            block = self._thinking_block
            assert block is not None
        delta = self._thinking_carry.feed(delta)
        if not delta:
            return
        block.thinking += delta
        index = self._open_thinking
        assert index is not None  # set with the block
        self.emit(ThinkingDeltaEvent(index, delta, self.output))

    def set_thinking_signature(self, signature: str, *, append: bool = False) -> None:
        """Set (or extend) the signature of the open (or last) thinking block."""
        index = (
            self._open_thinking
            if self._open_thinking is not None
            else self._last_index(ThinkingContent)
        )
        if index is None:
            return
        block = self.output.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = (block.thinking_signature or "") + signature if append else signature

    def end_thinking(self) -> None:
        """Close the open thinking block, if any."""
        index = self._open_thinking
        block = self._thinking_block
        if index is None or block is None:
            return
        self._open_thinking = None
        self._thinking_block = None
        block.thinking += self._thinking_carry.flush()
        self.emit(ThinkingEndEvent(index, block.thinking, self.output))

    def close_text_and_thinking(self) -> None:
        """Close the open text and thinking blocks."""
        self.end_text()
        self.end_thinking()

    # --- tool calls -----------------------------------------------------------------------
    def start_tool_call(
        self, call_id: str, name: str, arguments: str = "", thought_signature: str | None = None
    ) -> int:
        """Open a tool call and return its index; ``arguments`` is an optional first fragment."""
        self.close_text_and_thinking()
        block = ToolCall(id=call_id, name=name, arguments={}, thought_signature=thought_signature)
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self._open_tools[index] = _OpenToolCall(block)
        self.content_started = True
        self.emit(ToolCallStartEvent(index, self.output))
        if arguments:
            self.tool_call_delta(index, arguments)
        return index

    def tool_call_delta(self, index: int, fragment: str) -> None:
        """Append an argument fragment to the open tool call at ``index``."""
        state = self._open_tools.get(index)
        if state is None or not fragment:
            return
        fragment = state.carry.feed(fragment)
        if not fragment:
            return
        state.raw.append(fragment)
        state.block.arguments = state.parser.feed(fragment)
        self.emit(ToolCallDeltaEvent(index, fragment, self.output))

    def open_tool_call(self, index: int) -> ToolCall | None:
        """The still-open tool call at ``index`` (to fix up its id, name or signature)."""
        state = self._open_tools.get(index)
        return state.block if state else None

    def end_tool_call(self, index: int, arguments: JsonObject | None = None) -> None:
        """Close the tool call at ``index``: its arguments are the strict parse of everything
        streamed (or ``arguments`` when the protocol delivers them whole)."""
        state = self._open_tools.pop(index, None)
        if state is None:
            return
        tail = state.carry.flush()
        if tail:
            state.raw.append(tail)
        if arguments is not None:
            if depth_exceeds(arguments, MAX_VALUE_DEPTH):
                state.block.refuse_arguments(too_deep_text(state.block.name))
            else:  # NaN and the infinities (an adapter's json.loads takes them) become null
                state.block.arguments = clamp_depth(arguments, MAX_VALUE_DEPTH)
        elif state.raw:
            _set_strict_or_best(state)
        elif state.parser.too_deep:
            state.block.refuse_arguments(too_deep_text(state.block.name))
        self.emit(ToolCallEndEvent(index, state.block, self.output))

    # --- whole message --------------------------------------------------------------------
    def close_all(self) -> None:
        """Close every open block (end of stream)."""
        self.close_text_and_thinking()
        for index in sorted(self._open_tools):
            self.end_tool_call(index)

    def set_stop_reason(self, reason: StopReason) -> None:
        """Record why the model stopped."""
        self.output.stop_reason = reason

    @property
    def open_text_index(self) -> int | None:
        """Index of the open text block, or ``None``."""
        return self._open_text

    @property
    def open_thinking_index(self) -> int | None:
        """Index of the open thinking block, or ``None``."""
        return self._open_thinking

    @property
    def has_tool_calls(self) -> bool:
        """True when the message holds at least one tool call."""
        return any(isinstance(b, ToolCall) for b in self.output.content)

    def _last_index(self, kind: type) -> int | None:
        for i in range(len(self.output.content) - 1, -1, -1):
            if isinstance(self.output.content[i], kind):
                return i
        return None


def too_deep_text(name: str) -> str:
    """The error a call whose arguments nest past :data:`MAX_VALUE_DEPTH` is answered with."""
    return (
        f'Tool call "{name}" was not executed: its arguments are nested more than {MAX_VALUE_DEPTH} '
        "levels deep. Re-issue the tool call with flatter arguments."
    )


def _set_strict_or_best(state: _OpenToolCall) -> None:
    """The strict parse of everything streamed (``NaN`` and the infinities as ``null``, as
    JavaScript writes them), else the best-effort one; arguments nested past the cap are refused
    either way."""
    block = state.block
    try:
        value = clamp_depth(loads_bounded("".join(state.raw), MAX_VALUE_DEPTH, allow_nan=True), MAX_VALUE_DEPTH)
    except JsonTooDeepError:
        block.refuse_arguments(too_deep_text(block.name))
        return
    except ValueError:
        value = state.parser.finish()
        if state.parser.too_deep:
            block.refuse_arguments(too_deep_text(block.name))
            return
    block.arguments = value if isinstance(value, dict) else {}

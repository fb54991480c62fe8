"""The faux provider: a scripted, offline model for tests and the demo mode.

A :class:`FauxProvider` is registered as an in-process stream function for its ``api`` id, so
``providers.stream(model, context)`` reaches it through the same path as a real adapter
(handoff transform included). It answers each request with the next scripted
:class:`FauxResponse` (or what a response function returns) and streams it like a real model:
text and thinking in ``chunk_size`` pieces with ``delay`` seconds between them, tool-call
arguments as JSON fragments, usage and cost at the end. It honours ``options.signal`` (abort:
``stopReason`` ``aborted``, partial content kept) and never raises once the stream started.

Several providers with different ``api`` ids may be registered at once, so a test can switch a
conversation between "APIs" (``faux-a`` -> ``faux-b``) and check what each one received in
:attr:`FauxProvider.requests`.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeAlias

from baton.providers.adapter import MessageBuilder
from baton.providers.events import AssistantMessageEventStream, DoneEvent, ErrorEvent, StartEvent
from baton.providers.json_types import JsonObject
from baton.providers.messages import (
    ABORTED_MESSAGE,
    AssistantMessage,
    Context,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from baton.providers.models import Model, ModelCost, calculate_cost
from baton.providers.options import StreamOptions

FauxBlock: TypeAlias = str | TextContent | ThinkingContent | ToolCall
"""A scripted content block; a plain string is a text block."""

NO_RESPONSE_LEFT = "faux provider: no scripted response left"
_IMAGE_CHARS = 4800  # an image counts as ~1,200 tokens, like pi's estimate
_YIELD_EVERY = 32  # with no delay, give the event loop a turn every this many chunks

_call_ids = itertools.count(1)

FauxHold: TypeAlias = Callable[[int], Awaitable[None]]
"""Awaited with each chunk's number (0 is the pause before the first block) before it streams."""


def hold_at(chunk: int, release: asyncio.Event) -> FauxHold:
    """A :attr:`FauxResponse.hold` that stops the stream before chunk ``chunk`` until ``release``
    is set."""

    async def hold(index: int) -> None:
        if index == chunk:
            await release.wait()

    return hold


def faux_model(
    id: str = "faux-1",
    *,
    provider: str = "faux",
    api: str = "faux",
    name: str | None = None,
    reasoning: bool = False,
    input: Iterable[str] = ("text",),
    context_window: int = 128_000,
    max_tokens: int = 16_384,
    cost: ModelCost | dict[str, float] | None = None,
) -> Model:
    """A :class:`Model` served by the faux provider registered for ``api``."""
    return Model.model_validate(
        {
            "id": id,
            "name": name or id,
            "api": api,
            "provider": provider,
            "reasoning": reasoning,
            "input": list(input),
            "cost": cost if cost is not None else ModelCost(),
            "contextWindow": context_window,
            "maxTokens": max_tokens,
        }
    )


def faux_text(text: str, signature: str | None = None) -> TextContent:
    """A scripted text block."""
    return TextContent(text=text, text_signature=signature)


def faux_thinking(text: str, signature: str | None = None, *, redacted: bool | None = None) -> ThinkingContent:
    """A scripted thinking block (the signature arrives at its end, as with Anthropic)."""
    return ThinkingContent(thinking=text, thinking_signature=signature, redacted=redacted)


def faux_tool_call(name: str, arguments: JsonObject | None = None, id: str | None = None) -> ToolCall:
    """A scripted tool call; without ``id`` a unique ``faux_call_<n>`` id is generated."""
    return ToolCall(id=id or f"faux_call_{next(_call_ids)}", name=name, arguments=arguments or {})


@dataclass
class FauxResponse:
    """One scripted reply.

    ``stop_reason`` defaults to ``toolUse`` when the content holds tool calls, else ``stop``;
    ``length`` simulates an output-limit cut. ``error_message`` makes it an error response
    (content streamed first, then ``stopReason: error``). ``usage`` (a :class:`Usage` or a dict
    of token counts) defaults to an estimate from the context and output sizes (4 characters a
    token); the cost always comes from the model's prices. ``chunk_size`` and ``delay``
    override the provider's pacing for this reply. ``hold`` (see :func:`hold_at`) is awaited
    before each chunk, so a test can keep the stream open at a chosen point for as long as it
    needs, however slow the machine; an abort still ends it at once."""

    content: list[FauxBlock] = field(default_factory=list)
    stop_reason: StopReason | None = None
    usage: Usage | dict[str, int] | None = None
    error_message: str | None = None
    chunk_size: int | None = None
    delay: float | None = None
    hold: FauxHold | None = None

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> FauxResponse:
        """A reply holding one text block."""
        return cls(content=[text], **kwargs)

    @classmethod
    def tool_call(cls, name: str, arguments: JsonObject | None = None, id: str | None = None,
                  **kwargs: Any) -> FauxResponse:
        """A reply holding one tool call."""
        return cls(content=[faux_tool_call(name, arguments, id)], **kwargs)

    @classmethod
    def error(cls, message: str, **kwargs: Any) -> FauxResponse:
        """An error reply (``stopReason: error`` with ``errorMessage``)."""
        return cls(error_message=message, **kwargs)


ResponseFunction: TypeAlias = Callable[
    [Context, Model], "FauxResponse | str | Awaitable[FauxResponse | str]"
]
"""Computes a reply from the (transformed) context and the model; may be async."""


class FauxProvider:
    """A scripted provider registered under ``api`` (see the module docstring).

    ``responses`` is a list of replies used in order (a string is a text reply) or a function
    ``(context, model) -> FauxResponse | str`` (sync or async). ``requests`` holds the context
    each call received (after the handoff transform) and ``calls`` counts them."""

    def __init__(
        self,
        api: str = "faux",
        responses: Iterable[FauxResponse | str] | ResponseFunction | None = None,
        *,
        chunk_size: int = 4,
        delay: float = 0.0,
    ) -> None:
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.api = api
        self.chunk_size = chunk_size
        self.delay = delay
        self.requests: list[Context] = []
        self.calls = 0
        self._function: ResponseFunction | None = None
        self._script: deque[FauxResponse | str] = deque()
        if callable(responses):
            self._function = responses
        elif responses is not None:
            self._script.extend(responses)

    # --- script -----------------------------------------------------------------------------
    def add(self, *responses: FauxResponse | str) -> None:
        """Append replies to the script."""
        self._script.extend(responses)

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet (0 with a response function)."""
        return len(self._script)

    # --- registration -----------------------------------------------------------------------
    def register(self) -> FauxProvider:
        """Register under ``self.api`` (replacing whatever was registered there)."""
        from baton.providers.dispatch import register_stream_function

        register_stream_function(self.api, self.stream)
        return self

    def unregister(self) -> None:
        """Forget the registration, if it is still this provider's."""
        from baton.providers.dispatch import resolve, unregister

        if resolve(self.api) == self.stream:
            unregister(self.api)

    def __enter__(self) -> FauxProvider:
        return self.register()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.unregister()

    # --- streaming --------------------------------------------------------------------------
    def stream(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        """The stream function (``providers.stream`` calls it with the transformed context)."""
        self.calls += 1
        self.requests.append(context)
        out = AssistantMessageEventStream()
        output = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        out.task = asyncio.get_running_loop().create_task(
            self._produce(model, context, options, out, output), name=f"faux-stream-{self.api}"
        )
        return out

    async def _next_response(self, context: Context, model: Model) -> FauxResponse:
        if self._function is not None:
            value = self._function(context, model)
            if inspect.isawaitable(value):
                value = await value
        elif self._script:
            value = self._script.popleft()
        else:
            return FauxResponse(error_message=NO_RESPONSE_LEFT)
        if isinstance(value, str):
            return FauxResponse(content=[value])
        if not isinstance(value, FauxResponse):
            raise TypeError(f"a faux response must be a FauxResponse or str, got {type(value).__name__}")
        return value

    async def _produce(
        self,
        model: Model,
        context: Context,
        options: StreamOptions,
        out: AssistantMessageEventStream,
        output: AssistantMessage,
    ) -> None:
        signal = options.signal
        out.push(StartEvent(output))
        try:
            response = await self._next_response(context, model)
            pacer = _Pacer(
                response.delay if response.delay is not None else self.delay,
                signal,
                response.hold,
            )
            size = response.chunk_size or self.chunk_size
            builder = MessageBuilder(output, out.push)
            completed = await _stream_blocks(response.content, builder, pacer, size)
            output.usage = _usage(response, context, output)
            calculate_cost(model, output.usage)
            if not completed or _aborted(signal):
                output.stop_reason = "aborted"
                output.error_message = ABORTED_MESSAGE
                out.push(ErrorEvent("aborted", output))
                return
            builder.close_all()
            if response.stop_reason == "aborted":
                output.stop_reason = "aborted"
                output.error_message = response.error_message or ABORTED_MESSAGE
                out.push(ErrorEvent("aborted", output))
                return
            if response.error_message is not None or response.stop_reason == "error":
                output.stop_reason = "error"
                output.error_message = response.error_message or "faux provider: scripted error"
                out.push(ErrorEvent("error", output))
                return
            stop: Literal["stop", "length", "toolUse"] = response.stop_reason or (
                "toolUse" if output.tool_calls else "stop"
            )
            output.stop_reason = stop
            out.push(DoneEvent(stop, output))
        except asyncio.CancelledError:
            output.stop_reason = "aborted"
            output.error_message = ABORTED_MESSAGE
            out.push(ErrorEvent("aborted", output))
            raise
        except Exception as exc:  # never raise out of a started stream
            output.stop_reason = "error"
            output.error_message = f"faux provider: {exc}"
            out.push(ErrorEvent("error", output))


class _Pacer:
    """Waits ``delay`` seconds between chunks (waking at once on abort); with no delay it only
    yields to the event loop now and then. A ``hold`` is awaited before every chunk."""

    __slots__ = ("count", "delay", "hold", "signal")

    def __init__(self, delay: float, signal: asyncio.Event | None, hold: FauxHold | None = None) -> None:
        self.delay = delay
        self.signal = signal
        self.hold = hold
        self.count = 0

    async def wait(self) -> bool:
        """Pause before the next chunk; False when the request was aborted."""
        signal = self.signal
        index = self.count
        self.count += 1
        if self.hold is not None:
            await _unless_aborted(self.hold(index), signal)
        if self.delay > 0:
            if signal is None:
                await asyncio.sleep(self.delay)
            elif not signal.is_set():
                try:
                    await asyncio.wait_for(signal.wait(), self.delay)
                except TimeoutError:
                    pass
        elif self.count % _YIELD_EVERY == 0:
            await asyncio.sleep(0)
        return signal is None or not signal.is_set()


async def _unless_aborted(waiting: Awaitable[None], signal: asyncio.Event | None) -> None:
    """Await ``waiting``, giving up as soon as ``signal`` is set."""
    if signal is None:
        await waiting
        return
    held = asyncio.ensure_future(waiting)
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait((held, aborted), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (held, aborted):
            task.cancel()
    if held.done() and not held.cancelled():
        held.result()  # a failing hold fails the reply like any other error


def _chunks(text: str, size: int) -> Iterable[str]:
    return (text[i : i + size] for i in range(0, len(text), size))


async def _stream_blocks(blocks: list[FauxBlock], builder: MessageBuilder, pacer: _Pacer, size: int) -> bool:
    """Stream every block; False when aborted part-way (partial content stays)."""
    if not await pacer.wait():
        return False
    for block in blocks:
        if isinstance(block, str):
            block = TextContent(text=block)
        if isinstance(block, TextContent):
            builder.start_text()
            for piece in _chunks(block.text, size):
                if not await pacer.wait():
                    return False
                builder.text_delta(piece)
            if block.text_signature:
                builder.set_text_signature(block.text_signature)
            builder.end_text()
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                builder.start_thinking(block.thinking, block.thinking_signature, redacted=True)
                builder.end_thinking()
                continue
            builder.start_thinking()
            for piece in _chunks(block.thinking, size):
                if not await pacer.wait():
                    return False
                builder.thinking_delta(piece)
            if block.thinking_signature:
                builder.set_thinking_signature(block.thinking_signature)
            builder.end_thinking()
        else:
            index = builder.start_tool_call(block.id, block.name, thought_signature=block.thought_signature)
            for piece in _chunks(json.dumps(block.arguments), size):
                if not await pacer.wait():
                    return False
                builder.tool_call_delta(index, piece)
            builder.end_tool_call(index, dict(block.arguments))
    return True


def _aborted(signal: asyncio.Event | None) -> bool:
    return signal is not None and signal.is_set()


def _usage(response: FauxResponse, context: Context, output: AssistantMessage) -> Usage:
    if isinstance(response.usage, Usage):
        usage = response.usage.model_copy(deep=True)
    elif isinstance(response.usage, dict):
        usage = Usage.model_validate(response.usage)
    else:
        usage = Usage(input=estimate_tokens(_context_chars(context)), output=estimate_tokens(_output_chars(output)))
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    return usage


def estimate_tokens(chars: int) -> int:
    """Tokens for ``chars`` characters (4 characters a token, rounded up)."""
    return (chars + 3) // 4


def _content_chars(content: str | Sequence[TextContent | ThinkingContent | ToolCall | ImageContent]) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
        elif isinstance(block, ToolCall):
            total += len(block.name) + len(json.dumps(block.arguments))
        elif isinstance(block, ImageContent):
            total += _IMAGE_CHARS
    return total


def _context_chars(context: Context) -> int:
    total = len(context.system_prompt or "")
    for message in context.messages:
        total += _content_chars(message.content)
    for tool in context.tools or []:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


def _output_chars(output: AssistantMessage) -> int:
    return _content_chars(output.content)

"""The assistant-message event protocol and the async stream that carries it.

Every adapter emits, in order: one ``start``; for each content block a ``*_start``, any number of
``*_delta`` and one ``*_end``; then exactly one terminal ``done`` or ``error``. Every event carries
the partial :class:`AssistantMessage` as it stands (the same object, grown in place).

A stream never raises after it starts: failures end it with an ``error`` event whose message has
``stopReason`` ``error`` or ``aborted`` and keeps the partial content.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from baton.providers.json_types import JsonObject
from baton.providers.messages import AssistantMessage, ToolCall


@dataclass(slots=True)
class StartEvent:
    partial: AssistantMessage
    type: Literal["start"] = "start"


@dataclass(slots=True)
class TextStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["text_start"] = "text_start"


@dataclass(slots=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class TextEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["text_end"] = "text_end"


@dataclass(slots=True)
class ThinkingStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["thinking_start"] = "thinking_start"


@dataclass(slots=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: Literal["thinking_end"] = "thinking_end"


@dataclass(slots=True)
class ToolCallStartEvent:
    content_index: int
    partial: AssistantMessage
    type: Literal["toolcall_start"] = "toolcall_start"


@dataclass(slots=True)
class ToolCallDeltaEvent:
    """A fragment of tool-call arguments; the block's ``arguments`` hold the best-effort parse."""

    content_index: int
    delta: str
    partial: AssistantMessage
    type: Literal["toolcall_delta"] = "toolcall_delta"


@dataclass(slots=True)
class ToolCallEndEvent:
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage
    type: Literal["toolcall_end"] = "toolcall_end"


@dataclass(slots=True)
class DoneEvent:
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage
    type: Literal["done"] = "done"


@dataclass(slots=True)
class ErrorEvent:
    reason: Literal["error", "aborted"]
    error: AssistantMessage
    type: Literal["error"] = "error"


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


def event_to_dict(event: AssistantMessageEvent, *, include_partial: bool = True) -> JsonObject:
    """pi's JSON shape of an event (camelCase keys; messages as pi JSON)."""
    out: JsonObject = {"type": event.type}
    if isinstance(event, DoneEvent):
        out["reason"] = event.reason
        out["message"] = event.message.to_json_dict()
        return out
    if isinstance(event, ErrorEvent):
        out["reason"] = event.reason
        out["error"] = event.error.to_json_dict()
        return out
    content_index = getattr(event, "content_index", None)
    if content_index is not None:
        out["contentIndex"] = content_index
    if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent):
        out["delta"] = event.delta
    elif isinstance(event, TextEndEvent | ThinkingEndEvent):
        out["content"] = event.content
    elif isinstance(event, ToolCallEndEvent):
        out["toolCall"] = event.tool_call.to_json_dict()
    if include_partial:
        out["partial"] = event.partial.to_json_dict()
    return out


@dataclass
class AssistantMessageEventStream:
    """An async stream of :data:`AssistantMessageEvent` ending in ``done`` or ``error``.

    Producers call :meth:`push`; the terminal event also resolves :meth:`result`. One consumer
    iterates with ``async for``; awaiting :meth:`result` alone (without iterating) is fine too.
    """

    _queue: deque[AssistantMessageEvent] = field(default_factory=deque)
    _waiter: asyncio.Future[None] | None = None
    _closed: bool = False
    _final: AssistantMessage | None = None
    _final_waiters: list[asyncio.Future[AssistantMessage]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    """The producer task, when the stream was started by :func:`providers.stream` (kept alive)."""

    def push(self, event: AssistantMessageEvent) -> None:
        """Append an event. Events after the terminal one are ignored."""
        if self._closed:
            return
        self._queue.append(event)
        if isinstance(event, DoneEvent | ErrorEvent):
            self._closed = True
            self._final = event.message if isinstance(event, DoneEvent) else event.error
            for fut in self._final_waiters:
                if not fut.done():
                    fut.set_result(self._final)
            self._final_waiters.clear()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def closed(self) -> bool:
        """True once the terminal event was pushed."""
        return self._closed

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AssistantMessageEvent]:
        queue = self._queue
        while True:
            while queue:
                event = queue.popleft()
                yield event
                if isinstance(event, DoneEvent | ErrorEvent):
                    return
            if self._closed and not queue:
                return
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def result(self) -> AssistantMessage:
        """The final message (from ``done``, or the partial one carried by ``error``)."""
        if self._final is not None:
            return self._final
        fut: asyncio.Future[AssistantMessage] = asyncio.get_running_loop().create_future()
        self._final_waiters.append(fut)
        return await fut

"""Who hears a session's events, and how the session and its extensions tell them.

Subscribers receive every agent event and every session event (:mod:`sessions.events`), in
order. Code that cannot await (a property setter, a tool gate's callback) uses
:meth:`EventHub.emit_soon`: plain subscribers run at once, async ones as tasks the hub keeps
until they end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal

from baton.agent.listeners import Listeners
from baton.sessions.events import AnySessionEvent, ExtensionNoticeEvent

Listener = Callable[[AnySessionEvent], "Awaitable[object] | None"]
NoticeLevel = Literal["info", "warning", "error"]


class EventHub:
    """The subscribers of one session."""

    def __init__(self) -> None:
        self._listeners: Listeners[AnySessionEvent] = Listeners("session")
        self._tasks: set[asyncio.Future[object]] = set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event (sync or async listener); returns the function that unsubscribes."""
        return self._listeners.add(listener)

    async def emit(self, event: AnySessionEvent) -> None:
        """Tell every subscriber, awaiting each async one before the next."""
        await self._listeners.emit(event)

    def emit_soon(self, event: AnySessionEvent) -> None:
        """Emit from synchronous code: sync listeners now, async ones as tasks."""
        for result in self._listeners.emit_nowait(event):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def notice(self, source: str, level: NoticeLevel, text: str) -> None:
        """Something an extension did that the user should hear about (an
        ``extension_notice`` event: a notice in the app, a stderr line with ``-p``)."""
        self.emit_soon(ExtensionNoticeEvent(source, text, level))

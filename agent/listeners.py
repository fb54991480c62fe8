"""Event subscribers: plain or async callables, called in subscription order."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeAlias, TypeVar

logger = logging.getLogger(__name__)


class _Typed(Protocol):
    @property
    def type(self) -> str: ...


EventT = TypeVar("EventT", bound=_Typed)
Pending: TypeAlias = Awaitable[object]
"""What an async subscriber returns for its caller to await."""


class Listeners(Generic[EventT]):
    """The subscribers of one event stream. A subscriber that raises is logged and skipped;
    it never stops the stream or the other subscribers."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._items: tuple[Callable[[EventT], Pending | None], ...] = ()

    def add(self, listener: Callable[[EventT], Pending | None]) -> Callable[[], None]:
        """Subscribe ``listener``; returns the function that unsubscribes it."""
        self._items = (*self._items, listener)

        def remove() -> None:
            self._items = tuple(x for x in self._items if x is not listener)

        return remove

    def __bool__(self) -> bool:
        return bool(self._items)

    async def emit(self, event: EventT) -> None:
        """Call every subscriber in order, awaiting async ones before the next."""
        for listener in self._items:
            try:
                result = listener(event)
                if result is not None and hasattr(result, "__await__"):
                    await result
            except Exception:
                logger.exception("%s event subscriber failed on %s", self._owner, event.type)

    def emit_nowait(self, event: EventT) -> list[Pending]:
        """Call every subscriber now; the awaitables async subscribers returned are the caller's."""
        pending: list[Pending] = []
        for listener in self._items:
            try:
                result = listener(event)
                if result is not None and hasattr(result, "__await__"):
                    pending.append(result)
            except Exception:
                logger.exception("%s event subscriber failed on %s", self._owner, event.type)
        return pending

"""Event subscribers: plain or async callables, called in subscription order."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

logger = logging.getLogger(__name__)


class _Typed(Protocol):
    @property
    def type(self) -> str: ...


EventT = TypeVar("EventT", bound=_Typed)


class Listeners(Generic[EventT]):
    """The subscribers of one event stream. A subscriber that raises is logged and skipped;
    it never stops the stream or the other subscribers."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._items: tuple[Callable[[EventT], Any], ...] = ()

    def add(self, listener: Callable[[EventT], Any]) -> Callable[[], None]:
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

    def emit_nowait(self, event: EventT) -> list[Awaitable[Any]]:
        """Call every subscriber now; the awaitables async subscribers returned are the caller's."""
        pending: list[Awaitable[Any]] = []
        for listener in self._items:
            try:
                result = listener(event)
                if result is not None and hasattr(result, "__await__"):
                    pending.append(result)
            except Exception:
                logger.exception("%s event subscriber failed on %s", self._owner, event.type)
        return pending

"""At most N tool processes at once.

A reply may hold dozens of tool calls, and the agent runs them in parallel; each ``bash`` call is
a shell with whatever it starts. A session's :class:`ProcessSlots` lets at most ``limit`` of them
run at the same time (its ``tools.maxProcesses`` setting, default 8); the others wait for a free
slot, in call order, and an abort ends the wait. Each session has its own: a process hosting
several sessions (ACP) keeps each one's limit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

DEFAULT_MAX_PROCESSES = 8


class ProcessSlots:
    """A counting limit that works across event loops (tests run one loop after another)."""

    def __init__(self, limit: int = DEFAULT_MAX_PROCESSES) -> None:
        self.limit = max(1, limit)
        self.active = 0
        self._waiters: deque[asyncio.Future[object]] = deque()

    def set_limit(self, limit: int) -> None:
        """Change the limit (waiting calls start at once if the new limit allows)."""
        self.limit = max(1, limit)
        self._wake()

    @contextlib.asynccontextmanager
    async def slot(self, signal: asyncio.Event | None = None) -> AsyncIterator[bool]:
        """Hold a slot for the block; yields False (holding nothing) when ``signal`` was set
        while waiting."""
        acquired = await self._acquire(signal)
        try:
            yield acquired
        finally:
            if acquired:
                self.active -= 1
                self._wake()

    async def _acquire(self, signal: asyncio.Event | None) -> bool:
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return True
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        aborted: asyncio.Future[object] | None = None
        watched: set[asyncio.Future[object]] = {waiter}
        if signal is not None:
            aborted = asyncio.ensure_future(_wait_for(signal))
            watched.add(aborted)
        try:
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            self._give_back(waiter)
            raise
        finally:
            if aborted is not None:
                aborted.cancel()
        if waiter.done():
            return True  # _wake counted this slot for us
        self._give_back(waiter)
        return False

    def _give_back(self, waiter: asyncio.Future[object]) -> None:
        """Withdraw a waiter (aborted or cancelled), returning its slot if it already got one."""
        if waiter.done() and not waiter.cancelled():
            self.active -= 1
            self._wake()
            return
        waiter.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(waiter)

    def _wake(self) -> None:
        while self._waiters and self.active < self.limit:
            waiter = self._waiters.popleft()
            if waiter.done() or waiter.get_loop().is_closed():
                continue
            self.active += 1
            waiter.set_result(None)


async def _wait_for(signal: asyncio.Event) -> object:
    return await signal.wait()

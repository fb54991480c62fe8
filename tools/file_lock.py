"""One writer per file at a time.

Tool calls run in parallel; two edits of the same file must not both read the old content and
then each write their own version (the second would silently undo the first). ``edit`` and
``write`` take :func:`file_lock` for the real path of their target around read-modify-write.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_locks: dict[str, asyncio.Lock] = {}
_users: dict[str, int] = {}


@asynccontextmanager
async def file_lock(path: str) -> AsyncIterator[None]:
    """Hold the lock for ``path`` (keyed by its real path) for the duration of the block."""
    key = os.path.realpath(path)
    lock = _locks.setdefault(key, asyncio.Lock())
    _users[key] = _users.get(key, 0) + 1
    try:
        async with lock:
            yield
    finally:
        _users[key] -= 1
        if _users[key] == 0:
            del _users[key]
            _locks.pop(key, None)

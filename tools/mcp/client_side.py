"""What baton serves an MCP server as its client: roots, log messages, change notices.

- **Roots**: the session's working directory, the one root a server may work in (a session
  never changes directory, so baton never has to send ``notifications/roots/list_changed``).
- **Logging**: the server's ``notifications/message`` go to its log file
  (``$BATON_HOME/logs/mcp-<name>.log``), redacted, each line cut at :data:`MAX_LOG_LINE_CHARS`,
  at most :data:`MAX_LOG_LINES` per connection (then one line saying the rest were dropped).
- **list_changed**: a server saying its tools changed gets them listed again
  (:class:`Refresher`): one refresh at a time, the notices that arrive meanwhile folded into one
  more, and :data:`REFRESH_GAP_S` between two refreshes, so a server sending a storm of notices
  costs baton a few listings, not one per notice.

Sampling and elicitation are not served: baton advertises neither capability, so a server
must not send them (the SDK answers one that does with an error).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.redact import redact

if TYPE_CHECKING:
    from mcp_types import ListRootsResult, LoggingMessageNotificationParams

logger = logging.getLogger(__name__)

MAX_LOG_LINE_CHARS = 2000
MAX_LOG_LINES = 5000
REFRESH_GAP_S = 0.5
"""The least time between two listings caused by change notices."""
SETTLE_TIMEOUT_S = 10.0
"""How long a finished call waits for a refresh its server asked for while it ran."""


def roots_result(cwd: Path) -> ListRootsResult:
    """The roots baton gives a server: the working directory."""
    from mcp_types import ListRootsResult, Root

    folder = cwd.resolve()
    return ListRootsResult(roots=[Root(uri=folder.as_uri(), name=folder.name or str(folder))])


class ServerLog:
    """Writes a server's log messages to its log file (bounded, redacted)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = 0

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        """The SDK's ``logging_callback``."""
        self.write(params.level, params.logger, params.data)

    def write(self, level: str, source: str | None, data: object) -> None:
        """One log message as one line (or nothing past the limit)."""
        if self.lines > MAX_LOG_LINES:
            return
        self.lines += 1
        if self.lines > MAX_LOG_LINES:
            line = f"[server log] more than {MAX_LOG_LINES} messages; the rest are dropped"
        else:
            text = data if isinstance(data, str) else _json(data)
            text = " ".join(text.split())
            if len(text) > MAX_LOG_LINE_CHARS:
                text = text[:MAX_LOG_LINE_CHARS] + f" [... {len(text) - MAX_LOG_LINE_CHARS} more characters cut]"
            line = f"[server log] {level}{f' {source}' if source else ''}: {text}"
        with contextlib.suppress(OSError), self.path.open("a", encoding="utf-8", errors="replace") as log:
            log.write(redact(line) + "\n")


def _json(data: object) -> str:
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(data)[:MAX_LOG_LINE_CHARS]


class Refresher:
    """Runs ``refresh`` when asked, at most one at a time, folding requests that come meanwhile."""

    def __init__(self, refresh: Callable[[], Awaitable[None]], gap: float = REFRESH_GAP_S) -> None:
        self._refresh = refresh
        self.gap = gap
        self.count = 0
        """How many refreshes ran."""
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def request(self) -> None:
        """A change notice arrived: refresh soon."""
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._loop())

    @property
    def pending(self) -> bool:
        """Whether a refresh runs or waits."""
        return self._task is not None and not self._task.done()

    async def settle(self, timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Wait (at most ``timeout``) for the refreshes asked for so far."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(task), timeout)

    def cancel(self) -> None:
        """Stop (the connection closes)."""
        if self._task is not None:
            self._task.cancel()
        self._dirty = False

    async def _loop(self) -> None:
        first = True
        while self._dirty:
            if not first:
                await asyncio.sleep(self.gap)
            first = False
            self._dirty = False
            self.count += 1
            try:
                await self._refresh()
            except Exception as exc:  # the server went away meanwhile: the next notice tries again
                logger.info("refreshing an MCP server's lists failed: %s", exc)

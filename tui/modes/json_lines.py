"""JSON lines on stdout for the protocol modes (json, rpc, acp): one compact line per message,
flushed once per event-loop tick.

Light on purpose: ACP answers ``initialize`` through this before the session modules load."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from baton.providers.json_depth import MAX_LINE_DEPTH, clamp_depth
from baton.providers.surrogates import join_surrogates

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False).encode


def dumps(payload: Any) -> str:
    """One compact JSON line (no newline); non-ASCII kept as is (the framing is LF only).

    Always valid JSON: ``NaN`` and the infinities become ``null``, and a value nested deeper than
    a reader could parse is cut (:func:`~providers.json_depth.clamp_depth`)."""
    try:
        return _encode(payload)
    except (ValueError, RecursionError):
        return _encode(clamp_depth(payload, MAX_LINE_DEPTH))


def silence_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone (a closed pipe), so that later
    writes and the flush at exit neither fail nor print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class LineWriter:
    """Writes lines and flushes once per event-loop tick (timely, without a syscall per line).

    When the output fails (the reader went away: ``EPIPE``, a reset socket, a closed or full
    stream), writing stops for good, ``on_closed`` is called once and :meth:`wait_closed`
    returns: nobody is watching the run any more, so the mode aborts it and exits instead of
    producing output for no one."""

    def __init__(self, out: TextIO, on_closed: Callable[[], None] | None = None) -> None:
        self._out = out
        self._flush_scheduled = False
        self._loop = asyncio.get_running_loop()
        self._on_closed = on_closed
        self._closed_event = asyncio.Event()
        self.closed = False

    def write(self, line: str) -> None:
        """Queue one line (a newline is added); dropped once the output has closed."""
        if self.closed:
            return
        line = join_surrogates(line)  # a file name that is not UTF-8 in a tool result
        try:
            self._out.write(line + "\n")
        except (OSError, ValueError):  # ValueError: the stream itself was closed
            self._close()
            return
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write out what is buffered."""
        self._flush_scheduled = False
        if self.closed:
            return
        try:
            self._out.flush()
        except (OSError, ValueError):
            self._close()

    async def wait_closed(self) -> None:
        """Return once the output has closed."""
        await self._closed_event.wait()

    def _close(self) -> None:
        self.closed = True
        self._closed_event.set()
        silence_stdout()
        if self._on_closed is not None:
            self._on_closed()

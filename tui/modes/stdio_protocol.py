"""Standard input and output for the protocol modes (RPC and ACP).

stdout carries the protocol and nothing else: :func:`claim_stdout` keeps a private handle on it
and points ``sys.stdout`` at stderr, so a stray ``print`` from any library cannot corrupt the
stream. Logs go to ``$BATON_HOME/logs/<mode>.log`` (:func:`log_to_file`). Input is read as
bytes and split on LF only (a JSON string may hold U+2028, which is not a line break here).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Awaitable
from typing import TextIO

# Lines longer than this are an error, not a reason to grow memory without bound.
LINE_LIMIT = 64 * 1024 * 1024


def claim_stdout() -> TextIO:
    """A text stream on the real stdout (UTF-8, LF); ``sys.stdout`` now writes to stderr."""
    fd = os.dup(sys.stdout.fileno())
    out = open(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 16, closefd=True)  # noqa: SIM115
    sys.stdout.flush()
    sys.stdout = sys.stderr
    return out


def log_to_file(mode: str) -> None:
    """Send log records (warnings and above from libraries, info from baton) to a file, with
    keys redacted."""
    from baton.providers.paths import baton_home
    from baton.tui.cli.output_redaction import RedactingFormatter

    try:
        logs = baton_home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(logs / f"{mode}.log", encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("baton").setLevel(logging.INFO)


async def open_stdin() -> asyncio.StreamReader:
    """An asyncio reader on stdin: a pipe is read by the event loop, anything else (a regular
    file, a terminal the loop cannot watch) by a feeder thread."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except (OSError, ValueError, NotImplementedError):
        _feed_from_thread(loop, reader)
    return reader


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    def pump() -> None:
        try:
            while True:
                data = sys.stdin.buffer.read1(1 << 16) if hasattr(sys.stdin.buffer, "read1") else b""
                if not data:
                    break
                loop.call_soon_threadsafe(reader.feed_data, data)
        except (OSError, ValueError):
            pass
        finally:
            try:
                loop.call_soon_threadsafe(reader.feed_eof)
            except RuntimeError:  # the loop has closed
                pass

    threading.Thread(target=pump, name="stdin-feeder", daemon=True).start()


class LineTooLong(Exception):
    """An input line exceeded :data:`LINE_LIMIT` (it was skipped)."""


async def read_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next LF-terminated line without its line ending (``\\r\\n`` accepted); ``None`` at EOF.

    Raises :class:`LineTooLong` after discarding an over-long line."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        line = exc.partial
    except asyncio.LimitOverrunError as exc:
        await _discard_line(reader, exc.consumed)
        raise LineTooLong(f"input line longer than {LINE_LIMIT} bytes") from None
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


async def read_line_unless_closed(reader: asyncio.StreamReader, closed: Awaitable[None]) -> bytes | None:
    """:func:`read_line`, or ``None`` as soon as ``closed`` completes: once the output is gone
    (the client died, or closed the pipe it reads), a mode stops reading even when its input
    stays open, and ends like at EOF."""
    read = asyncio.ensure_future(read_line(reader))
    waiter = asyncio.ensure_future(closed)
    try:
        await asyncio.wait({read, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not read.done():
            read.cancel()
    if read.cancelled() or not read.done():
        return None
    return read.result()


async def _discard_line(reader: asyncio.StreamReader, consumed: int) -> None:
    await reader.readexactly(consumed)
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return

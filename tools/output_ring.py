"""A background command's output: the last bytes in a bounded ring, all of it in a log file.

:class:`OutputRing` keeps the last :data:`RING_BYTES` of what a command printed in memory (what
``bash_output`` and ``/ps`` show) and writes everything to a log in baton's temp folder (see
:mod:`tools.temp_files`), up to :data:`LOG_MAX_BYTES`: a command printing without end costs a
fixed amount of memory and, past that cap, no more disk. Readers keep a byte offset into the whole
output; what fell out of the ring before they read it is reported as skipped (it is in the log).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from baton.tools.sanitize import strip_control_sequences

RING_BYTES = 256 * 1024
"""Bytes of output kept in memory per background command."""
LOG_MAX_BYTES = 256 * 1024 * 1024
"""The log stops growing here (a note says so); the ring keeps following the output."""
_LOG_CUT_NOTE = b"\n[baton: log cut here at 256 MiB; later output is only in memory]\n"


@dataclass(frozen=True, slots=True)
class OutputSince:
    """Output read from a byte offset: the text, the offset to read from next, and how many
    bytes had already left the ring (they are in the log)."""

    text: str
    next_offset: int
    skipped_bytes: int


class OutputRing:
    """See the module docstring. Call :meth:`close` when the command has ended."""

    def __init__(self, capacity: int = RING_BYTES, log_prefix: str = "baton-bg-",
                 log_max_bytes: int = LOG_MAX_BYTES) -> None:
        from baton.tools.temp_files import new_temp_file

        self.capacity = capacity
        self._ring = bytearray()
        self._start = 0
        """Offset in the whole output of the ring's first byte."""
        self.total_bytes = 0
        self._log_max = log_max_bytes
        self._log_bytes = 0
        fd, self.log_path = new_temp_file(log_prefix)
        self._log_fd: int | None = fd

    def append(self, chunk: bytes) -> None:
        """Add a chunk of output."""
        if not chunk:
            return
        self.total_bytes += len(chunk)
        if len(chunk) >= self.capacity:
            self._start = self.total_bytes - self.capacity
            self._ring = bytearray(chunk[-self.capacity :])
        else:
            self._ring += chunk
            over = len(self._ring) - self.capacity
            if over > 0:
                del self._ring[:over]
                self._start += over
        self._write_log(chunk)

    def _write_log(self, chunk: bytes) -> None:
        if self._log_fd is None:
            return
        room = self._log_max - self._log_bytes
        try:
            os.write(self._log_fd, chunk[:room])
            self._log_bytes += min(room, len(chunk))
            if len(chunk) > room:
                os.write(self._log_fd, _LOG_CUT_NOTE)
                self._close_log()
        except OSError:  # a full disk: the ring still has the tail
            self._close_log()

    def since(self, offset: int) -> OutputSince:
        """The output from byte ``offset`` on (control sequences stripped), as far as the ring
        still holds it."""
        offset = max(0, min(offset, self.total_bytes))
        skipped = max(0, self._start - offset)
        data = bytes(self._ring[max(0, offset - self._start) :])
        return OutputSince(strip_control_sequences(data.decode("utf-8", "replace")), self.total_bytes, skipped)

    def tail_text(self) -> str:
        """Everything the ring holds, control sequences stripped."""
        return self.since(self._start).text

    def last_line(self, limit: int = 200) -> str:
        """The last non-blank line printed (cut to ``limit`` characters)."""
        data = bytes(self._ring[-4096:])
        for raw in reversed(data.splitlines()):
            line = " ".join(strip_control_sequences(raw.decode("utf-8", "replace")).split())
            if line:
                return line if len(line) <= limit else line[: limit - 1] + "…"
        return ""

    @property
    def memory_bytes(self) -> int:
        """Bytes this ring holds in memory (its buffer's allocation)."""
        return len(self._ring)

    def close(self) -> None:
        """Stop writing the log (it stays until baton ends, for the model to read)."""
        self._close_log()

    def _close_log(self) -> None:
        if self._log_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._log_fd)
            self._log_fd = None

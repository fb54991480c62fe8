"""Command output kept in bounded memory.

:class:`OutputBuffer` receives a command's output in chunks. It keeps only a rolling tail in memory
(a little over the 50 KB the model sees) and, once the output outgrows what the model will be
shown, spills the whole output to a temporary file (raw bytes, as the command wrote them) whose
path is reported (in ``$BATON_HOME/tmp/``, removed when the session ends: see
:mod:`tools.temp_files`). Memory stays bounded however much a command prints.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from baton.tools.sanitize import strip_control_sequences
from baton.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail

TAIL_KEEP = DEFAULT_MAX_BYTES * 2
"""Bytes of tail kept after a trim (more than the model sees, so its first line is complete)."""
TAIL_TRIM_AT = TAIL_KEEP * 4
"""Trim the tail when it grows past this (trimming in batches keeps appends cheap)."""


@dataclass(slots=True)
class OutputSnapshot:
    """The model's view of the output so far: sanitised, tail-truncated text and its bookkeeping."""

    text: str
    truncation: TruncationResult
    full_output_path: str | None
    total_bytes: int
    total_lines: int


class OutputBuffer:
    """Accumulates output; see the module docstring. Call :meth:`close` when done."""

    def __init__(self, temp_prefix: str = "baton-bash-", max_lines: int = DEFAULT_MAX_LINES,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._tail = bytearray()
        self._trimmed = False
        self._newlines = 0
        self._total = 0
        self._last_byte = b""
        self._file: int | None = None
        self._closed = False
        self.full_output_path: str | None = None
        self._prefix = temp_prefix
        self.max_lines = max_lines
        self.max_bytes = max_bytes

    @property
    def total_bytes(self) -> int:
        """Bytes received so far."""
        return self._total

    @property
    def total_lines(self) -> int:
        """Lines received so far (an unterminated last line counts)."""
        if not self._total:
            return 0
        return self._newlines + (0 if self._last_byte == b"\n" else 1)

    def append(self, chunk: bytes) -> None:
        """Add a chunk of output."""
        if not chunk:
            return
        self._tail += chunk
        self._total += len(chunk)
        self._newlines += chunk.count(b"\n")
        self._last_byte = chunk[-1:]
        if self._file is not None:
            os.write(self._file, chunk)
        elif self.full_output_path is None and (self._total > self.max_bytes or self.total_lines > self.max_lines):
            self._spill()
        if len(self._tail) > TAIL_TRIM_AT:
            del self._tail[: len(self._tail) - TAIL_KEEP]
            self._trimmed = True

    def _spill(self) -> None:
        """Start the full-output file with everything so far (the tail is still all of it)."""
        from baton.tools.temp_files import new_temp_file

        fd, path = new_temp_file(self._prefix)
        self._file = fd
        self.full_output_path = path
        os.write(fd, bytes(self._tail))

    def snapshot(self) -> OutputSnapshot:
        """The tail as the model sees it: control sequences stripped, cut to the limits."""
        data = bytes(self._tail)
        if self._trimmed:
            # Drop the (possibly partial) first line of the kept window.
            newline = data.find(b"\n")
            if 0 <= newline < len(data) - 1:
                data = data[newline + 1 :]
        text = data.decode("utf-8", "replace")
        truncation = truncate_tail(
            text, self.max_lines, self.max_bytes, total_lines=self.total_lines, total_bytes=self._total
        )
        if truncation.truncated and self.full_output_path is None and not self._closed:
            self._spill()  # e.g. invalid UTF-8 grew when decoded; the tail is still everything
        return OutputSnapshot(
            strip_control_sequences(truncation.content),
            truncation,
            self.full_output_path,
            self._total,
            self.total_lines,
        )

    def last_line_bytes(self) -> int:
        """Size of the last line as far as the kept tail shows it."""
        data = bytes(self._tail).rstrip(b"\n")
        newline = data.rfind(b"\n")
        if newline < 0 and self._trimmed:
            return self._total - self._newlines  # a lower bound; exact when no newline at all
        return len(data) - newline - 1

    def close(self) -> None:
        """Close the full-output file (it stays on disk for the model to read)."""
        self._closed = True
        if self._file is not None:
            with contextlib.suppress(OSError):
                os.close(self._file)
            self._file = None

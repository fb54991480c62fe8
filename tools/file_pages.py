"""Read one page of lines from a text file without reading the whole file.

The page starts at a 1-based line and holds complete lines only, at most ``max_lines`` and
``max_bytes`` (newlines between lines counted). The file is streamed in 1 MB chunks: lines before
the page are only counted, the page is decoded, and the rest of the file is counted for the total,
exactly up to :data:`EXACT_COUNT_LIMIT` bytes and estimated from a 1 MB sample beyond (so the
first page of a 100 MB file costs a few milliseconds). Lines are counted like ``wc -l`` plus an
unterminated last line; a CR before the LF is not part of a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 1 << 20
EXACT_COUNT_LIMIT = 32 * 1024 * 1024
"""Files up to this size get an exact line count; larger ones an estimate past the page."""


@dataclass(slots=True)
class Page:
    """A page of lines and what the file holds around it.

    ``stopped_by`` is ``"lines"``, ``"bytes"`` or ``"limit"`` (the caller's own limit) when lines
    follow the page, else None. ``first_line_bytes`` is set (and ``lines`` empty) when the page's
    first line alone exceeds ``max_bytes``. ``total_lines`` is an estimate when
    ``total_estimated``."""

    lines: list[str]
    start_line: int
    total_lines: int
    total_estimated: bool
    stopped_by: str | None
    first_line_bytes: int | None = None


class OffsetBeyondEnd(Exception):
    """The requested start line is past the end; ``total_lines`` is the file's line count."""

    def __init__(self, total_lines: int) -> None:
        super().__init__(total_lines)
        self.total_lines = total_lines


def _line_bytes(raw: bytes) -> int:
    return len(raw) - 1 if raw.endswith(b"\r") else len(raw)


def _decode(raw: bytes) -> str:
    return (raw[:-1] if raw.endswith(b"\r") else raw).decode("utf-8", "replace")


def _ends_with_newline(handle: BinaryIO, file_size: int) -> bool:
    if file_size == 0:
        return True
    position = handle.tell()
    handle.seek(file_size - 1)
    last = handle.read(1)
    handle.seek(position)
    return last == b"\n"


def read_page(
    handle: BinaryIO,
    file_size: int,
    start_line: int,
    max_lines: int,
    max_bytes: int,
    limit: int | None = None,
) -> Page:
    """Read the page starting at ``start_line`` (1-based) from ``handle`` (positioned at 0).

    ``limit`` is the caller's own line cap. Raises :class:`OffsetBeyondEnd` when the file has
    fewer than ``start_line`` lines (an empty file has none; asking for its line 1 gives an empty
    page)."""
    line_no, consumed, buffer = _skip_to(handle, file_size, start_line)
    cap = max_lines if limit is None else min(max_lines, limit)
    cursor = _Cursor(handle, buffer)
    lines: list[str] = []
    used = 0
    stopped_by: str | None = None
    while len(lines) < cap:
        found = cursor.line(max_bytes)
        if found is None:
            break
        raw, terminated = found
        size = _line_bytes(raw) + (1 if lines else 0)
        if found is _TOO_LONG or used + size > max_bytes:
            stopped_by = "bytes"
            break
        lines.append(_decode(raw))
        used += size
        line_no += 1
        consumed += cursor.advance(len(raw), terminated)
        if not terminated:
            break
    else:
        if cursor.has_more():
            stopped_by = "limit" if limit is not None and limit < max_lines else "lines"

    if stopped_by is None:
        return Page(lines, start_line, line_no - 1, False, None)
    rest_lines, first_line_size, estimated = _scan_rest(handle, file_size, consumed, cursor.rest())
    first_line_bytes = first_line_size if not lines and stopped_by == "bytes" else None
    return Page(lines, start_line, line_no - 1 + rest_lines, estimated, stopped_by, first_line_bytes)


_TOO_LONG = (b"", False)
"""What :meth:`_Cursor.line` returns for a line that cannot fit the page any more."""


class _Cursor:
    """A file read a chunk at a time from a line start on: the lines it holds, one by one."""

    def __init__(self, handle: BinaryIO, buffer: bytes) -> None:
        self.handle = handle
        self.buffer = buffer
        self.pos = 0  # start of the current line in ``buffer``
        self.eof = False

    def line(self, max_bytes: int) -> tuple[bytes, bool] | None:
        """The next line (without its newline) and whether a newline ended it; ``None`` at the
        end of the file, :data:`_TOO_LONG` when more than ``max_bytes`` come without a newline."""
        while True:
            newline = self.buffer.find(b"\n", self.pos)
            if newline >= 0:
                return self.buffer[self.pos : newline], True
            if self.eof:
                return (self.buffer[self.pos :], False) if self.pos < len(self.buffer) else None
            if len(self.buffer) - self.pos > max_bytes + 1:  # the current line cannot fit any more
                return _TOO_LONG
            chunk = self.handle.read(CHUNK)
            if chunk:
                self.buffer, self.pos = self.buffer[self.pos :] + chunk, 0
            else:
                self.eof = True

    def advance(self, length: int, terminated: bool) -> int:
        """Step over the line just read; the bytes it took."""
        step = length + (1 if terminated else 0)
        self.pos += step
        return step

    def has_more(self) -> bool:
        """Whether anything follows (reads the next chunk when the buffer is used up)."""
        if self.pos >= len(self.buffer) and not self.eof:
            self.buffer, self.pos = self.handle.read(CHUNK), 0
        return self.pos < len(self.buffer)

    def rest(self) -> bytes:
        """What is read but not consumed."""
        return self.buffer[self.pos :]


def _skip_to(handle: BinaryIO, file_size: int, start_line: int) -> tuple[int, int, bytes]:
    """Advance to the start of ``start_line``: (line number, bytes before the buffer, buffer)."""
    line_no = 1
    consumed = 0
    buffer = b""
    while line_no < start_line:
        chunk = handle.read(CHUNK)
        if not chunk:
            total = line_no - 1 + (0 if _ends_with_newline(handle, file_size) else 1)
            raise OffsetBeyondEnd(total)
        newlines = chunk.count(b"\n")
        if line_no + newlines < start_line:
            line_no += newlines
            consumed += len(chunk)
            continue
        buffer = chunk.split(b"\n", start_line - line_no)[-1]
        consumed += len(chunk) - len(buffer)
        line_no = start_line
    if start_line > 1 and not buffer:
        buffer = handle.read(CHUNK)
        if not buffer:
            raise OffsetBeyondEnd(start_line - 1)
    return line_no, consumed, buffer


def _scan_rest(handle: BinaryIO, file_size: int, consumed: int, buffer: bytes) -> tuple[int, int, bool]:
    """Lines in the file from byte ``consumed`` on (``buffer`` is its already-read start), the
    byte length of the first of them, and whether the count is an estimate."""
    exact = file_size <= EXACT_COUNT_LIMIT
    newlines = buffer.count(b"\n")
    first_newline = buffer.find(b"\n")
    scanned = len(buffer)
    while exact or first_newline < 0 or scanned < CHUNK:
        chunk = handle.read(CHUNK)
        if not chunk:
            break
        if first_newline < 0:
            found = chunk.find(b"\n")
            if found >= 0:
                first_newline = scanned + found
        newlines += chunk.count(b"\n")
        scanned += len(chunk)
    remaining = max(0, file_size - consumed - scanned)
    first_line = first_newline if first_newline >= 0 else scanned + remaining
    if first_newline > 0 and buffer[first_newline - 1 : first_newline] == b"\r":
        first_line -= 1
    ends_with_newline = _ends_with_newline(handle, file_size)
    if remaining == 0:
        return newlines + (0 if ends_with_newline else 1), first_line, False
    per_line = scanned / max(1, newlines)
    estimate = newlines + round(remaining / per_line) + (0 if ends_with_newline else 1)
    return estimate, first_line, True

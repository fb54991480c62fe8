"""Output truncation shared by the tools: two limits, whichever is hit first wins.

* a line limit (:data:`DEFAULT_MAX_LINES`, 2000) and
* a byte limit (:data:`DEFAULT_MAX_BYTES`, 50 KB, counted in UTF-8).

:func:`truncate_head` keeps the start (file reads, search results) and never returns a partial
line; :func:`truncate_tail` keeps the end (command output) and returns a partial line only when the
last line alone is larger than the byte limit. Line counting follows ``wc -l`` plus an unterminated
last line: ``"a\\nb\\n"`` and ``"a\\nb"`` both have two lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from baton.providers.json_types import JsonObject

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500
"""Characters kept of one grep match line."""

TruncatedBy = Literal["lines", "bytes"]


@dataclass(slots=True)
class TruncationResult:
    """What a truncation kept. ``content`` is the kept text; the rest describes the cut."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False
    max_lines: int = DEFAULT_MAX_LINES
    max_bytes: int = DEFAULT_MAX_BYTES

    def to_details(self) -> JsonObject:
        """pi's ``TruncationResult`` shape (camelCase), without the content, for tool details."""
        return {
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def format_size(num_bytes: int) -> str:
    """Human-readable size as pi writes it: ``512B``, ``50.0KB``, ``1.5MB``."""
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"


def split_lines(content: str) -> list[str]:
    """Lines of ``content`` without separators; a trailing newline does not start a new line."""
    if not content:
        return []
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    return lines


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the first complete lines of ``content`` within both limits.

    When the first line alone exceeds ``max_bytes`` the result is empty with
    ``first_line_exceeds_limit`` set (the caller says how to read that line instead)."""
    total_bytes = _utf8_len(content)
    lines = split_lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return TruncationResult(content, False, None, total_lines, total_bytes, total_lines, total_bytes,
                                max_lines=max_lines, max_bytes=max_bytes)
    if lines and _utf8_len(lines[0]) > max_bytes:
        return TruncationResult("", True, "bytes", total_lines, total_bytes, 0, 0,
                                first_line_exceeds_limit=True, max_lines=max_lines, max_bytes=max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    for index, line in enumerate(lines):
        if index >= max_lines:
            break
        size = _utf8_len(line) + (1 if index else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += size
    out = "\n".join(kept)
    return TruncationResult(out, True, truncated_by, total_lines, total_bytes, len(kept), _utf8_len(out),
                            max_lines=max_lines, max_bytes=max_bytes)


def truncate_tail(
    content: str,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    total_lines: int | None = None,
    total_bytes: int | None = None,
) -> TruncationResult:
    """Keep the last complete lines of ``content`` within both limits.

    If the last line alone exceeds ``max_bytes``, its end is kept (``last_line_partial``).
    ``total_lines``/``total_bytes`` override the counts when ``content`` is itself only the tail
    of a longer output (the bash tool keeps a rolling tail in memory)."""
    own_bytes = _utf8_len(content)
    lines = split_lines(content)
    all_lines = total_lines if total_lines is not None else len(lines)
    all_bytes = total_bytes if total_bytes is not None else own_bytes
    fits = len(lines) <= max_lines and own_bytes <= max_bytes
    if fits and all_lines == len(lines) and all_bytes <= max_bytes:
        return TruncationResult(content, False, None, all_lines, all_bytes, len(lines), own_bytes,
                                max_lines=max_lines, max_bytes=max_bytes)
    kept: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines" if len(lines) > max_lines or all_lines > len(lines) else "bytes"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        size = _utf8_len(line) + (1 if kept else 0)
        if used + size > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(_tail_bytes(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += size
    kept.reverse()
    out = "\n".join(kept)
    return TruncationResult(out, True, truncated_by, all_lines, all_bytes, len(kept), _utf8_len(out),
                            last_line_partial=partial, max_lines=max_lines, max_bytes=max_bytes)


def _tail_bytes(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` whose UTF-8 form fits ``max_bytes`` (whole characters only)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    start = len(data) - max_bytes
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters with a ``... [truncated]`` marker."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [truncated]", True

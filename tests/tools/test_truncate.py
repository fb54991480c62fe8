"""Truncation helpers: head and tail, line and byte limits, partial lines."""

from __future__ import annotations

from baton.tools.truncate import format_size, truncate_head, truncate_line, truncate_tail


def test_format_size() -> None:
    assert [format_size(n) for n in (0, 1023, 1024, 51200, 1536 * 1024)] == ["0B", "1023B", "1.0KB", "50.0KB",
                                                                            "1.5MB"]


def test_head_within_limits_is_untouched() -> None:
    result = truncate_head("a\nb\n")
    assert (result.content, result.truncated, result.total_lines) == ("a\nb\n", False, 2)


def test_head_by_lines_and_bytes() -> None:
    by_lines = truncate_head("\n".join(str(i) for i in range(10)), max_lines=3)
    assert (by_lines.content, by_lines.truncated_by, by_lines.output_lines) == ("0\n1\n2", "lines", 3)
    by_bytes = truncate_head("aaaa\nbbbb\ncccc", max_bytes=10)
    assert (by_bytes.content, by_bytes.truncated_by) == ("aaaa\nbbbb", "bytes")
    first_too_long = truncate_head("x" * 20 + "\ny", max_bytes=10)
    assert first_too_long.content == "" and first_too_long.first_line_exceeds_limit


def test_tail_keeps_the_end() -> None:
    result = truncate_tail("\n".join(str(i) for i in range(10)), max_lines=3)
    assert (result.content, result.total_lines, result.output_lines) == ("7\n8\n9", 10, 3)


def test_tail_partial_last_line_keeps_whole_characters() -> None:
    result = truncate_tail("\u00e9" * 10, max_bytes=5)
    assert result.last_line_partial
    assert result.content == "\u00e9\u00e9"


def test_truncate_line() -> None:
    assert truncate_line("x" * 10, 4) == ("xxxx... [truncated]", True)
    assert truncate_line("short", 10) == ("short", False)

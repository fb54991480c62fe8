"""Pieces shared by grep, find and ls: resolving the search root and the result notices."""

from __future__ import annotations

import os

from baton.agent.tool import ToolError
from baton.tools.paths import resolve_path
from baton.tools.truncate import DEFAULT_MAX_BYTES, TruncationResult, format_size, truncate_head

UNLIMITED_LINES = 10**12


def resolve_search_path(path: str | None, cwd: str) -> str:
    """The absolute search root; ToolError when it does not exist."""
    resolved = resolve_path(path or ".", cwd)
    if not os.path.exists(resolved):
        raise ToolError(f"Path not found: {path or '.'}")
    return resolved


def effective_limit(limit: int | None, default: int) -> int:
    """``limit`` when given (at least 1), else ``default``."""
    return default if limit is None else max(1, limit)


def cap_output(lines: list[str]) -> TruncationResult:
    """Join result lines and cut them to the byte limit (the count limit is applied before)."""
    return truncate_head("\n".join(lines), max_lines=UNLIMITED_LINES)


def with_notices(text: str, notices: list[str]) -> str:
    """``text`` followed by pi's bracketed notice line (``[a. b]``) when there are notices."""
    return f"{text}\n\n[{'. '.join(notices)}]" if notices else text


def byte_limit_notice() -> str:
    """The notice for output cut at the byte limit."""
    return f"{format_size(DEFAULT_MAX_BYTES)} limit reached"

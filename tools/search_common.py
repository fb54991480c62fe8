"""Pieces shared by grep, find and ls: resolving and opening the search root, the result notices."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from baton.agent.tool import ToolError, short_title
from baton.providers.json_types import JsonMapping
from baton.tools.anchored import PathChangedError, open_dir
from baton.tools.path_pins import PathPins, target_for
from baton.tools.truncate import DEFAULT_MAX_BYTES, TruncationResult, format_size, truncate_head

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool

UNLIMITED_LINES = 10**12


def search_root(pins: PathPins | None, tool: AgentTool, call_id: str, path: str | None, cwd: str) -> str:
    """The real path of the search root: the one the permission check approved (see
    :mod:`tools.path_pins`); ToolError when it does not exist."""
    real = target_for(pins, tool, call_id, path or ".", cwd)
    if not os.path.lexists(real):
        raise ToolError(f"Path not found: {path or '.'}")
    return real


def search_title(tool: type[AgentTool], args: JsonMapping) -> str:
    """``grep TODO in src``: a search call's title (the tool's name while the pattern streams in)."""
    pattern = args.get("pattern")
    if not isinstance(pattern, str):
        return tool.label
    path = tool.path_of(args)
    return short_title(f"{tool.label} {pattern}" + (f" in {path}" if path else ""))


def open_root(real: str, shown: str | None) -> int:
    """A handle on the checked folder ``real``, reached without following a symlink."""
    try:
        return open_dir(real)
    except PathChangedError as exc:
        raise ToolError(
            f"Cannot search {shown or '.'}: the path changed after it was checked ({exc.strerror})."
        ) from None
    except NotADirectoryError:
        raise ToolError(f"Not a directory: {shown}") from None
    except FileNotFoundError:
        raise ToolError(f"Path not found: {shown or '.'}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {exc.strerror or exc}") from None


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

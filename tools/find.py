"""The ``find`` tool: list files (and directories) matching a glob pattern.

A pattern without ``/`` matches names at any depth (``*.py``); one with ``/`` matches the path
relative to the search directory (``src/**/*.ts``; ``**`` spans directories). Hidden files are
included, ``.git`` is skipped and ``.gitignore`` is respected (see :mod:`tools.walk`). Paths are
relative to the search directory, directories end in ``/``. At most ``limit`` results (default
1000) and 50 KB.

``details``: ``{pattern, path, count, limit, limitReached, truncated}``.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.globs import PathGlob
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins
from baton.tools.search_common import (
    byte_limit_notice,
    cap_output,
    effective_limit,
    open_root,
    search_root,
    search_title,
    with_notices,
)
from baton.tools.truncate import DEFAULT_MAX_BYTES
from baton.tools.walk import walk

DEFAULT_LIMIT = 1000


class FindParams(ToolParams):
    """Arguments of ``find``."""

    pattern: str = Field(
        description="Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
    )
    path: str | None = Field(default=None, description="Directory to search in (default: current directory)")
    limit: int | None = Field(default=None, description="Maximum number of results (default: 1000)")


class FindTool(AgentTool[FindParams, JsonObject]):
    """Find files by glob (see the module docstring)."""

    name = "find"
    prompt_summary = "Find files by glob pattern (respects .gitignore)"
    label = "find"
    kind = "search"
    path_parameter = PathParameter("path", "folder")
    read_only = True
    claude_code_name = "Glob"
    description = (
        "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
        f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or "
        f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first)."
    )
    parameters = FindParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``find *.py in src``."""
        return search_title(cls, args)

    async def run(
        self, tool_call_id: str, params: FindParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Find (see the module docstring)."""
        args: FindParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        root = search_root(self.pins, self, tool_call_id, args.path, self.cwd)
        if not os.path.isdir(root):
            raise ToolError(f"Not a directory: {args.path}")
        limit = effective_limit(args.limit, DEFAULT_LIMIT)
        glob = PathGlob(_relative_pattern(args.pattern.strip(), root))
        root_fd = open_root(root, args.path)
        try:
            results, more = await asyncio.to_thread(_find, root, root_fd, glob, limit, signal)
        finally:
            os.close(root_fd)
        if signal.is_set():
            raise ToolError("Operation aborted")
        details: JsonObject = {
            "pattern": args.pattern,
            "path": args.path or ".",
            "count": len(results),
            "limit": limit,
            "limitReached": more,
            "truncated": False,
        }
        if not results:
            return AgentToolResult.text("No files found matching pattern", details)
        truncation = cap_output(results)
        notices: list[str] = []
        if more:
            notices.append(f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern")
        if truncation.truncated:
            notices.append(byte_limit_notice())
        details["truncated"] = truncation.truncated
        return AgentToolResult.text(with_notices(truncation.content, notices), details)


def _relative_pattern(pattern: str, root: str) -> str:
    """An absolute pattern inside the search root, made relative to it (models send both)."""
    if os.path.isabs(pattern):
        rel = os.path.relpath(pattern, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return pattern


def _find(root: str, root_fd: int, glob: PathGlob, limit: int, signal: asyncio.Event) -> tuple[list[str], bool]:
    results: list[str] = []
    for entry in walk(root, should_stop=signal.is_set, root_fd=root_fd):
        if not glob.matches(entry.rel_path):
            continue
        if len(results) >= limit:
            return results, True
        results.append(entry.rel_path + "/" if entry.is_dir else entry.rel_path)
    return results, False

"""The ``ls`` tool: list one directory.

Entries sorted case-insensitively, directories (and links to directories) with a ``/`` suffix,
dotfiles included, at most ``limit`` entries (default 500) and 50 KB. The folder listed is the
real path the permission check approved, opened without following a symlink.

``details``: ``{path, count, total, limit, limitReached, truncated}``.
"""

from __future__ import annotations

import asyncio
import os
import stat

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins
from baton.tools.search_common import (
    byte_limit_notice,
    cap_output,
    effective_limit,
    open_root,
    search_root,
    with_notices,
)
from baton.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_LIMIT = 500


class LsParams(ToolParams):
    """Arguments of ``ls``."""

    path: str | None = Field(default=None, description="Directory to list (default: current directory)")
    limit: int | None = Field(default=None, description="Maximum number of entries to return (default: 500)")


class LsTool(AgentTool[LsParams, JsonObject]):
    """List a directory (see the module docstring)."""

    name = "ls"
    prompt_summary = "List directory contents"
    label = "ls"
    kind = "read"
    path_parameter = PathParameter("path", "folder")
    read_only = True
    claude_code_name = "LS"
    description = (
        "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
        f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
        "(whichever is hit first)."
    )
    parameters = LsParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``List src`` (``List .`` for the working directory)."""
        return f"List {cls.path_of(args) or '.'}"

    async def run(
        self, tool_call_id: str, params: LsParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """List (see the module docstring)."""
        args: LsParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        directory = search_root(self.pins, self, tool_call_id, args.path, self.cwd)
        if not os.path.isdir(directory):
            raise ToolError(f"Not a directory: {args.path}")
        limit = effective_limit(args.limit, DEFAULT_LIMIT)
        fd = open_root(directory, args.path)
        try:
            names = os.listdir(fd)
            names.sort(key=lambda name: (name.casefold(), name))
            entries = [name + "/" if _is_dir(fd, name) else name for name in names[:limit]]
        except OSError as exc:
            raise ToolError(f"Cannot read directory: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        more = len(names) > limit
        details: JsonObject = {
            "path": args.path or ".",
            "count": len(entries),
            "total": len(names),
            "limit": limit,
            "limitReached": more,
            "truncated": False,
        }
        if not entries:
            return AgentToolResult.text("(empty directory)", details)
        truncation = cap_output(entries)
        notices: list[str] = []
        if more:
            notices.append(f"{limit} entries limit reached. Use limit={limit * 2} for more")
        if truncation.truncated:
            notices.append(byte_limit_notice())
        details["truncated"] = truncation.truncated
        return AgentToolResult.text(with_notices(truncation.content, notices), details)


def _is_dir(dir_fd: int, name: str) -> bool:
    """A folder, or a symlink to one (listed with ``/``, as before)."""
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False

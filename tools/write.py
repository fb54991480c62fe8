"""The ``write`` tool: create or overwrite a file, atomically.

Parent directories are created; the file is replaced atomically (temp file + rename, keeping the
old file's permissions; a hard-linked file is rewritten in place, a FIFO or device is refused);
the byte count reported is UTF-8 bytes, not characters.

``details``: ``{path, bytes, lines, created}``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.tools.details import WriteDetails
from baton.tools.file_access import FileAccess
from baton.tools.file_lock import file_lock
from baton.tools.fs_atomic import NotRegularFileError, atomic_write
from baton.tools.params import ToolParams
from baton.tools.paths import resolve_path


class WriteParams(ToolParams):
    """Arguments of ``write``."""

    path: str = Field(description="Path to the file to write (relative or absolute)")
    content: str = Field(description="Content to write to the file")


class WriteTool(AgentTool):
    """Write a whole file (see the module docstring)."""

    name: ClassVar[str] = "write"
    prompt_summary: ClassVar[str] = "Create or overwrite files"
    details_type: ClassVar[type | None] = WriteDetails
    label: ClassVar[str] = "write"
    description: ClassVar[str] = (
        "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
        "Automatically creates parent directories."
    )
    parameters: ClassVar[type[ToolParams]] = WriteParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.file_access: FileAccess | None = None
        """Writes text through this backend first (an editor); see :mod:`tools.file_access`."""

    async def run(
        self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult:
        """Write ``params.content`` to ``params.path``."""
        args: WriteParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        path = resolve_path(args.path, self.cwd)
        data = args.content.encode("utf-8", "surrogateescape")
        async with file_lock(path):
            if signal.is_set():
                raise ToolError("Operation aborted")
            try:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                existed = os.path.exists(path)
                if self.file_access is not None and await self.file_access.write_text(path, args.content):
                    created = not existed
                else:
                    created = atomic_write(path, data)
            except IsADirectoryError:
                raise ToolError(f"Cannot write {args.path}: it is a directory.") from None
            except NotRegularFileError:
                raise ToolError(
                    f"Cannot write {args.path}: not a regular file (a device, FIFO or socket)."
                ) from None
            except FileExistsError:
                raise ToolError(f"Cannot write {args.path}: a parent path exists and is not a directory.") from None
            except NotADirectoryError:
                raise ToolError(f"Cannot write {args.path}: a parent path is not a directory.") from None
            except PermissionError:
                raise ToolError(f"Cannot write {args.path}: permission denied.") from None
            except OSError as exc:
                raise ToolError(f"Cannot write {args.path}: {exc.strerror or exc}.") from None
        lines = args.content.count("\n") + (1 if args.content and not args.content.endswith("\n") else 0)
        details = {"path": args.path, "bytes": len(data), "lines": lines, "created": created}
        return AgentToolResult.text(f"Successfully wrote {len(data)} bytes to {args.path}", details)

"""The ``write`` tool: create or overwrite a file, atomically.

Parent directories are created; the file is replaced atomically (temp file + rename, keeping the
old file's permissions; a FIFO or device is refused); the byte count reported is UTF-8 bytes, not
characters. The path opened is the real path the permission check approved, walked through
folder handles without following a symlink (:mod:`tools.anchored`): a folder swapped for a symlink
meanwhile stops the write. A file with several hard links is replaced, never written through (its
other links may lie outside the workspace); the result says so. A file holding a key the model
saw as ``[redacted]`` is not overwritten with that marker (:mod:`tools.hidden_values`).

``details``: ``{path, bytes, lines, created}``.
"""

from __future__ import annotations

import asyncio

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.redact import REDACTED
from baton.tools.anchored import (
    Anchor,
    FileWrite,
    PathChangedError,
    anchor,
    links_note,
    lstat_in,
    read_existing,
    replace_file,
)
from baton.tools.details import WriteDetails
from baton.tools.file_access import FileAccess
from baton.tools.file_lock import file_lock
from baton.tools.fs_atomic import NotRegularFileError
from baton.tools.hidden_values import adds_marker_over_hidden_value, refusal
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins, target_for


class WriteParams(ToolParams):
    """Arguments of ``write``."""

    path: str = Field(description="Path to the file to write (relative or absolute)")
    content: str = Field(description="Content to write to the file")


class WriteTool(AgentTool[WriteParams, JsonObject]):
    """Write a whole file (see the module docstring)."""

    name = "write"
    prompt_summary = "Create or overwrite files"
    details_type = WriteDetails
    label = "write"
    kind = "edit"
    path_parameter = PathParameter("path", "file")
    claude_code_name = "Write"
    prompt_guideline = "Use write only for new files or complete rewrites"
    description = (
        "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
        "Automatically creates parent directories."
    )
    parameters = WriteParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.file_access: FileAccess | None = None
        """Writes text through this backend first (an editor); see :mod:`tools.file_access`."""
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Write notes.md``."""
        path = cls.path_of(args)
        return f"Write {path}" if path else cls.label

    async def run(
        self, tool_call_id: str, params: WriteParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Write ``params.content`` to ``params.path``."""
        args: WriteParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        path = target_for(self.pins, self, tool_call_id, args.path, self.cwd)
        data = args.content.encode("utf-8", "surrogateescape")
        async with file_lock(path):
            if signal.is_set():
                raise ToolError("Operation aborted")
            try:
                outcome = await self._write(path, args.content, data, args.path)
            except IsADirectoryError:
                raise ToolError(f"Cannot write {args.path}: it is a directory.") from None
            except NotRegularFileError:
                raise ToolError(
                    f"Cannot write {args.path}: not a regular file (a device, FIFO or socket)."
                ) from None
            except PathChangedError as exc:
                raise ToolError(
                    f"Cannot write {args.path}: the path changed after it was checked ({exc.strerror}); "
                    "nothing was written."
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
        details: JsonObject = {"path": args.path, "bytes": len(data), "lines": lines, "created": outcome.created}
        text = f"Successfully wrote {len(data)} bytes to {args.path}"
        if outcome.unlinked_links:
            text += f" {links_note(outcome.unlinked_links)}"
        return AgentToolResult.text(text, details)

    async def _write(self, path: str, content: str, data: bytes, shown: str) -> FileWrite:
        with anchor(path, create_dirs=True) as place:
            existed = lstat_in(place) is not None
            # The old text is read only when the new one holds the marker at all.
            old = await self._current_text(place) if existed and REDACTED in content else None
            if adds_marker_over_hidden_value(old, content):
                raise ToolError(refusal(shown), {"path": shown})
            if self.file_access is not None and await self.file_access.write_text(path, content):
                return FileWrite(created=not existed, unlinked_links=0)
            return replace_file(place, data)

    async def _current_text(self, place: Anchor) -> str | None:
        """The file's text now (the editor's buffer first, when one hosts baton); ``None`` when
        there is no regular file to read (the write itself then says why)."""
        if self.file_access is not None:
            text = await self.file_access.read_text(place.path)
            if text is not None:
                return text
        try:
            data, _ = read_existing(place)
        except (OSError, NotRegularFileError):
            return None
        return data.decode("utf-8", "surrogateescape")

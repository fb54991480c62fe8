"""Two tools baton has never heard of, written as a newcomer would write a new one: one module,
an ``AgentTool`` subclass declaring its traits, nothing else. ``tests/sessions/test_adding_a_tool.py``
registers them with one line each and checks that every part of baton treats them right.

``stamp`` appends a line to a file (it changes files; its path argument is called ``file``, not
``path``; its details hold a display diff, read through the edit tool's view); ``peek`` reads a
file's first line (read-only; its path argument is ``target``).
"""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonObject
from baton.tools.anchored import anchor, open_existing, read_existing, replace_file
from baton.tools.details import EditDetails
from baton.tools.diff import display_diff
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins, target_for


class StampParams(ToolParams):
    """Arguments of ``stamp``."""

    file: str = Field(description="The file to append to")
    text: str = Field(description="The line to append")


class StampTool(AgentTool[StampParams, JsonObject]):
    """Append one line to a file (created when missing)."""

    name = "stamp"
    label = "stamp"
    description = "Append a line of text to a file."
    prompt_summary = "Append a line to a file"
    details_type = EditDetails
    parameters = StampParams
    kind = "edit"
    path_parameter = PathParameter("file", "file")
    claude_code_name = "Stamp"

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.pins: PathPins | None = None

    async def run(
        self, tool_call_id: str, params: StampParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Append ``params.text`` to the file the permission check approved."""
        path = target_for(self.pins, self, tool_call_id, params.file, self.cwd)
        with anchor(path, create_dirs=True) as place:
            try:
                old, info = read_existing(place)
            except FileNotFoundError:
                old, info = b"", None
            new = old + params.text.encode() + b"\n"
            replace_file(place, new, expect=info)
        diff = display_diff(old.decode(errors="replace"), new.decode(errors="replace")).diff
        return AgentToolResult.text(f"Stamped {params.file}", {"file": params.file, "diff": diff})


class PeekParams(ToolParams):
    """Arguments of ``peek``."""

    target: str = Field(description="The file to peek at")


class PeekTool(AgentTool[PeekParams, JsonObject]):
    """The first line of a file."""

    name = "peek"
    label = "peek"
    description = "Show the first line of a file."
    parameters = PeekParams
    kind = "read"
    path_parameter = PathParameter("target", "existing file")
    read_only = True

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.pins: PathPins | None = None

    async def run(
        self, tool_call_id: str, params: PeekParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Read the first line of the file the permission check approved."""
        path = target_for(self.pins, self, tool_call_id, params.target, self.cwd)
        try:
            with anchor(path) as place:
                fd, _ = open_existing(place)
        except FileNotFoundError:
            raise ToolError(f"File not found: {params.target}") from None
        with os.fdopen(fd, "rb") as handle:
            first = handle.readline().decode("utf-8", "replace").rstrip("\n")
        return AgentToolResult.text(first)

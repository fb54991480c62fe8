"""The ``kill_shell`` tool: end a background command.

Claude Code's ``KillShell``: ``shell_id`` names a command started with ``bash``'s
``run_in_background``; its whole process group gets SIGTERM, then SIGKILL after a short grace.

``details``: ``{shellId, command, status}``.
"""

from __future__ import annotations

import asyncio

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.background import BackgroundError, BackgroundProcesses
from baton.tools.params import ToolParams


class KillShellParams(ToolParams):
    """Arguments of ``kill_shell``."""

    shell_id: str = Field(description="The id of the background shell to end")


class KillShellTool(AgentTool[KillShellParams, JsonObject]):
    """End a background command (see the module docstring)."""

    name = "kill_shell"
    label = "kill shell"
    prompt_summary = "End a background bash command"
    kind = "execute"
    session_only = True
    claude_code_name = "KillShell"
    description = "End a background bash command (started with run_in_background) and everything it started."
    parameters = KillShellParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.background = BackgroundProcesses()
        """The session's background commands (the session shares bash's registry with this tool)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Kill bash_1``."""
        shell = args.get("shell_id")
        return f"Kill {shell}" if isinstance(shell, str) else cls.label

    async def run(
        self, tool_call_id: str, params: KillShellParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """End it (see the module docstring)."""
        try:
            process = self.background.get(params.shell_id)
        except BackgroundError as exc:
            raise ToolError(str(exc)) from None
        was_running = process.running
        await self.background.kill(params.shell_id)
        details: JsonObject = {"shellId": process.id, "command": process.command, "status": process.status_text()}
        if not was_running:
            return AgentToolResult.text(f"Background shell {process.id} had already ended ({process.status_text()}).",
                                        details)
        return AgentToolResult.text(f"Killed background shell {process.id} ({process.command}).", details)

"""The stand-in for a tool known only by name (see :func:`baton.tools.tool_type`).

A transcript can name tools this session does not have: an MCP server's tool when the server is
not connected, a tool an older version had, or whatever a model made up. Code that reads traits
by name (the editor protocol replaying a session, compaction, the UI) gets this class for them:
every trait at its cautious default (not read-only, no path), and it never runs.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonObject


class AnyArguments(BaseModel):
    """A JSON object of whatever shape."""

    model_config = ConfigDict(extra="allow")


class UnknownTool(AgentTool[AnyArguments, JsonObject]):
    """A tool baton does not have; subclasses (made by :func:`baton.tools.tool_type`) set the name."""

    description = "A tool this session does not have."
    parameters = AnyArguments

    async def run(
        self, tool_call_id: str, params: AnyArguments, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Never runs: the tool is not available."""
        raise ToolError(f"Tool {self.name} is not available")

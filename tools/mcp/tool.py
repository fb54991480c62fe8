"""An MCP server's tool as an :class:`AgentTool` named ``mcp__<server>__<tool>``.

The model sees the server's description and JSON schema unchanged (adapters sanitise per
target); arguments go to the server as they came (the server validates them). The tool's traits
come from the server: its ``readOnlyHint`` makes it read-only (no checkpoint before it runs; the
permission policy still asks about every MCP tool unless a rule says otherwise), and a name that
says it fetches makes it a ``fetch`` tool for editors.

Calls to tools the server does not mark read-only run one at a time within a reply (as Claude
Code runs them): they hold the session's :class:`asyncio.Lock`, taken in call order. Read-only
ones run in parallel. The server's progress notices become the call's live updates.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re

from pydantic import BaseModel, ConfigDict

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.messages import TextContent, Tool
from baton.tools import guess_kind, mcp_title
from baton.tools.mcp.connection import McpCallError, McpConnection, ServerTool
from baton.tools.mcp.results import to_tool_result

MAX_NAME = 64
MAX_PROGRESS_UPDATES = 1000
"""Progress notices past this many in one call are not shown (a server cannot flood the UI)."""


class McpArguments(BaseModel):
    """A JSON object of whatever shape: the server checks its own schema."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, limited to the characters and length every provider accepts."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


class McpTool(AgentTool[McpArguments, JsonObject]):
    """One server tool. Build with :func:`make_mcp_tool`."""

    parameters = McpArguments
    server_tool: ServerTool
    connection: McpConnection
    timeout: float
    one_at_a_time: asyncio.Lock | None = None
    """Held while a tool that is not read-only runs (shared by the session's MCP tools)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``github › create_issue``."""
        return mcp_title(cls.name) or cls.name

    def schema(self) -> Tool:
        """The server's own schema (an object schema)."""
        schema = dict(self.server_tool.input_schema)
        schema.setdefault("type", "object")
        return Tool(name=self.name, description=self.description, parameters=schema)

    async def run(
        self, tool_call_id: str, params: McpArguments, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Call the server; errors (crash, timeout, abort, server unavailable) become tool errors."""
        arguments = params.model_dump()
        details: JsonObject = {"server": self.connection.name, "tool": self.server_tool.name}
        shown = 0

        def progress(value: float, total: float | None, message: str | None) -> None:
            nonlocal shown
            shown += 1
            if shown > MAX_PROGRESS_UPDATES:
                return
            text = f"Progress: {value:g}" + (f"/{total:g}" if total is not None else "")
            if message:
                text += f" — {' '.join(message.split())[:500]}"
            report: JsonObject = {"progress": value, "total": total, "message": message}
            on_update(AgentToolResult([TextContent(text=text)], {**details, "progress": report}))

        lock = None if self.read_only else self.one_at_a_time
        if lock is not None and not await _acquire(lock, signal):
            raise ToolError("Aborted before the call started", details)
        try:
            result = await self.connection.call(self.server_tool.name, arguments, timeout=self.timeout, signal=signal,
                                                on_progress=progress)
        except McpCallError as exc:
            raise ToolError(str(exc), details) from exc
        finally:
            if lock is not None:
                lock.release()
        return to_tool_result(result, self.connection.name, self.server_tool.name)


async def _acquire(lock: asyncio.Lock, signal: asyncio.Event) -> bool:
    """Take ``lock`` unless ``signal`` is set first (then False, and the lock is not held)."""
    if signal.is_set():
        return False
    taking = asyncio.ensure_future(lock.acquire())
    stop = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({taking, stop}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        taking.cancel()
        if taking.done() and not taking.cancelled():
            lock.release()
        raise
    finally:
        stop.cancel()
    if taking.done():
        return True
    taking.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await taking
    if taking.done() and not taking.cancelled():  # it was granted as it was cancelled
        lock.release()
    return False


def make_mcp_tool(connection: McpConnection, server_tool: ServerTool, timeout: float,
                  one_at_a_time: asyncio.Lock | None = None) -> McpTool:
    """The agent tool for ``server_tool`` on ``connection``, with the traits the server gave it."""
    name = tool_name(connection.name, server_tool.name)
    description = server_tool.description or f"{server_tool.name} (MCP server {connection.name})"
    cls = type(
        f"McpTool_{name}",
        (McpTool,),
        {"name": name, "label": f"{connection.name}/{server_tool.name}", "description": description,
         "kind": guess_kind(name), "read_only": server_tool.read_only},
    )
    tool = cls()
    tool.server_tool = server_tool
    tool.connection = connection
    tool.timeout = timeout
    tool.one_at_a_time = one_at_a_time
    return tool

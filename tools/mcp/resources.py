"""MCP resources as two tools: ``list_mcp_resources`` and ``read_mcp_resource``.

A server's results often say "You can access this resource using the URI …"; these tools make it
true. Both are read-only (``kind`` read) and, like every MCP tool, ask before they run unless a
rule allows them. The session's MCP manager offers them while a ready server has resources.

What a read returns: text contents as text (cut like any MCP text); binary contents (``blob``)
are decoded and saved to baton's temp folder (``$BATON_HOME/tmp``, removed when baton ends) under
a name baton makes (``mcp-resource-XXXX`` plus a suffix from a fixed table of MIME types, never
anything from the URI, so a URI like ``../../.bashrc`` names nothing on disk), and described:
its URI, type, size and the file's path; an image is also shown to the model. A blob past
:data:`MAX_BLOB_BYTES` is not saved.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import os
from typing import TYPE_CHECKING

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.messages import ImageContent, TextContent
from baton.tools.mcp.connection import McpCallError, McpConnection
from baton.tools.mcp.results import MAX_TEXT_CHARS
from baton.tools.params import ToolParams
from baton.tools.temp_files import new_temp_file

if TYPE_CHECKING:
    from mcp_types import ReadResourceResult

    from baton.tools.mcp.manager import McpManager

MAX_BLOB_BYTES = 50 * 1024 * 1024
MAX_LISTED = 500
SUFFIXES = {
    "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/svg+xml": ".svg",
    "application/pdf": ".pdf", "application/zip": ".zip", "application/json": ".json", "text/plain": ".txt",
    "text/csv": ".csv", "text/html": ".html", "audio/wav": ".wav", "audio/mpeg": ".mp3",
}
"""The only suffixes a saved blob gets (anything else: ``.bin``)."""
SHOWN_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class ReadParams(ToolParams):
    """Which resource to read."""

    server: str = Field(description="The MCP server's name (as in mcp__<server>__<tool>)")
    uri: str = Field(description="The resource's URI")


class ListParams(ToolParams):
    """Whose resources to list."""

    server: str | None = Field(default=None, description="One server's name; all servers when left out")


def _connection(manager: McpManager, server: str) -> McpConnection:
    connection = manager.connections.get(server)
    if connection is None or not connection.has_resources:
        offering = ", ".join(c.name for c in manager.connections.values() if c.has_resources) or "none"
        raise ToolError(f"No MCP server named {server!r} offers resources (servers with resources: {offering})")
    return connection


class ReadMcpResource(AgentTool[ReadParams, JsonObject]):
    """``read_mcp_resource``: one resource of one server."""

    name = "read_mcp_resource"
    label = "read MCP resource"
    description = ("Read a resource of an MCP server by its URI (as a server's result or list_mcp_resources names "
                   "it). Text comes back as text; binary data is saved to a temporary file whose path is returned.")
    parameters = ReadParams
    prompt_summary = "Read an MCP server's resource by URI"
    kind = "read"
    read_only = True
    claude_code_name = "ReadMcpResourceTool"

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``server:uri``."""
        return f"{args.get('server', '?')}:{args.get('uri', '')}"

    async def run(self, tool_call_id: str, params: ReadParams, signal: asyncio.Event,
                  on_update: OnUpdate) -> AgentToolResult[JsonObject]:
        """Read the resource; blobs to temp files."""
        connection = _connection(self.manager, params.server)
        try:
            result = await connection.read_resource(params.uri, timeout=self.manager.tool_timeout, signal=signal)
        except McpCallError as exc:
            raise ToolError(str(exc), {"server": params.server, "uri": params.uri}) from exc
        content, saved = describe_contents(result, params.uri)
        details: JsonObject = {"server": params.server, "uri": params.uri}
        if saved:
            details["saved"] = list(saved)
        return AgentToolResult(content, details)


def describe_contents(result: ReadResourceResult,
                      asked: str) -> tuple[list[TextContent | ImageContent], list[JsonObject]]:
    """A read's contents for the model (texts, blobs saved and described, images shown) and the
    saved files (``uri``, ``mimeType``, ``path``)."""
    content: list[TextContent | ImageContent] = []
    saved: list[JsonObject] = []
    for item in result.contents:
        uri, mime = str(item.uri), item.mime_type or "application/octet-stream"
        text = getattr(item, "text", None)
        if isinstance(text, str):
            cut = text if len(text) <= MAX_TEXT_CHARS else (
                text[:MAX_TEXT_CHARS] + f"\n\n[... {len(text) - MAX_TEXT_CHARS} more characters cut]")
            content.append(TextContent(text=f"[Resource: {uri}] ({mime})\n{cut}"))
            continue
        blob = str(getattr(item, "blob", ""))
        described, file = _save_blob(uri, mime, blob)
        content.append(TextContent(text=described))
        if file is not None:
            saved.append({"uri": uri, "mimeType": mime, "path": file})
            if mime in SHOWN_IMAGES:
                content.append(ImageContent(data=blob, mime_type=mime))
    if not content:
        content.append(TextContent(text=f"[Resource: {asked}] (empty)"))
    return content, saved


def _save_blob(uri: str, mime: str, blob: str) -> tuple[str, str | None]:
    """Decode and save one blob: ``(description, path or None)``."""
    if len(blob) * 3 // 4 > MAX_BLOB_BYTES:
        return (f"[Resource: {uri}] ({mime}, about {len(blob) * 3 // 4} bytes of binary data; "
                f"not saved: over {MAX_BLOB_BYTES} bytes)"), None
    try:
        data = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return f"[Resource: {uri}] ({mime}) binary data that is not valid base64; not saved", None
    fd, path = new_temp_file("mcp-resource-", SUFFIXES.get(mime, ".bin"))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return f"[Resource: {uri}] ({mime}, {len(data)} bytes) could not be saved: {exc}", None
    return f"[Resource: {uri}] ({mime}, {len(data)} bytes of binary data) saved to {path}", path


class ListMcpResources(AgentTool[ListParams, JsonObject]):
    """``list_mcp_resources``: the resources servers offer."""

    name = "list_mcp_resources"
    label = "list MCP resources"
    description = "List the resources MCP servers offer (name, URI, type, description), to read with read_mcp_resource."
    parameters = ListParams
    prompt_summary = "List MCP servers' resources"
    kind = "read"
    read_only = True
    claude_code_name = "ListMcpResourcesTool"

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    async def run(self, tool_call_id: str, params: ListParams, signal: asyncio.Event,
                  on_update: OnUpdate) -> AgentToolResult[JsonObject]:
        """One line per resource, by server."""
        if params.server is not None:
            connections = [_connection(self.manager, params.server)]
        else:
            connections = [c for c in self.manager.connections.values() if c.has_resources]
        lines: list[str] = []
        count = 0
        for connection in connections:
            try:
                resources = await connection.list_resources(timeout=self.manager.tool_timeout, limit=MAX_LISTED)
            except McpCallError as exc:
                lines.append(f"{connection.name}: {exc}")
                continue
            count += len(resources)
            for resource in resources:
                line = f"{connection.name}  {resource.uri}  {resource.name}"
                if resource.mime_type:
                    line += f"  ({resource.mime_type})"
                if resource.description:
                    line += f" — {' '.join(resource.description.split())[:200]}"
                lines.append(line)
            if len(resources) >= MAX_LISTED:
                lines.append(f"{connection.name}: more than {MAX_LISTED} resources; only the first are listed")
        text = "\n".join(lines) if lines else "No MCP server offers resources."
        return AgentToolResult([TextContent(text=text)], {"count": count})

"""An MCP server (the SDK's ``MCPServer``) whose answers are nested deeper than a client reads.

Run as ``python deep_server.py`` (stdio) or ``python deep_server.py http PORT``. Tools:
``deep_structured`` returns ``structuredContent`` nested ``depth`` levels deep (the SDK's own
serializer stops at about 250 levels, its JSON parser at 200: in between a server sends what a
client cannot read); ``deep_text`` returns a JSON text nested ``depth`` levels deep (a string on
the wire: any client reads it); ``ok`` answers ``fine``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

server = MCPServer("deepserver")


def nested(depth: int) -> Any:
    """``{"a": {"a": ... "bottom"}}``, ``depth`` objects deep."""
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


@server.tool(description="Structured content nested depth levels deep.")
def deep_structured(depth: int = 240) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="a deep answer")],
                          structured_content=nested(depth))


@server.tool(description="A JSON text nested depth levels deep.")
def deep_text(depth: int = 300) -> str:
    return json.dumps(nested(depth))


@server.tool(description="Answers fine.")
def ok() -> str:
    return "fine"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")

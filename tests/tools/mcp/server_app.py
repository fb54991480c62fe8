"""An MCP server for the tests, written with the SDK's server API (``MCPServer``).

Run as ``python server_app.py stdio`` or ``python server_app.py http PORT``. Environment:
``MCP_TEST_STARTUP_DELAY`` (seconds to wait before serving), ``MCP_TEST_MARKERS`` (a folder
where the server notes calls, crashes and cancellations), ``MCP_TEST_NAME`` (server name),
``MCP_TEST_READ_ONLY`` (also serve ``lookup``, a tool marked ``readOnlyHint``).
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import EmbeddedResource, ResourceLink, TextContent, TextResourceContents, ToolAnnotations

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
MARKERS = Path(os.environ.get("MCP_TEST_MARKERS", "."))

server = MCPServer(os.environ.get("MCP_TEST_NAME", "testserver"))


def _mark(name: str, text: str = "") -> None:
    with (MARKERS / name).open("a") as handle:
        handle.write(text + "\n")


@server.tool(description="Echo the text back, upper-cased.")
def shout(text: str, times: int = 1) -> str:
    _mark("calls", f"shout {text}")
    return " ".join([text.upper()] * times)


if os.environ.get("MCP_TEST_READ_ONLY"):  # only for the test about read-only tools

    @server.tool(description="Look a key up (changes nothing).", annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> str:
        _mark("calls", f"lookup {key}")
        return f"value of {key}"


@server.tool(description="Add two numbers (structured result).")
def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


@server.tool(description="A one-pixel PNG image.")
def pixel() -> Image:
    return Image(data=PNG_1X1, format="png")


@server.tool(description="Always fails.")
def broken(reason: str) -> str:
    raise ToolError(f"broken on purpose: {reason}")


@server.tool(description="Links and embedded resources.")
def resources() -> list[TextContent | ResourceLink | EmbeddedResource]:
    return [
        TextContent(type="text", text="two resources follow"),
        ResourceLink(type="resource_link", uri="file:///docs/guide.md", name="guide", description="The guide"),
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="memo://note", text="embedded body")),
    ]


@server.tool(description="Crash the server process mid-call (the first time only).")
def crash() -> str:
    if not (MARKERS / "crashed").exists():
        _mark("crashed")
        os._exit(3)
    return "survived"


@server.tool(description="Sleep, noting a cancellation.")
async def slow(seconds: float) -> str:
    _mark("slow-started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _mark("cancelled")
        raise
    return "slept"


def main() -> None:
    delay = float(os.environ.get("MCP_TEST_STARTUP_DELAY", "0"))
    if delay:
        time.sleep(delay)
    print("test server starting", file=sys.stderr, flush=True)
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))


if __name__ == "__main__":
    main()

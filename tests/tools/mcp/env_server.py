"""An MCP server (the SDK's ``MCPServer``) that shows what a server can see of baton's keys.

Run as ``python env_server.py``: stdio. Tools: ``get_env`` returns the server's environment
as JSON (as the reference server-everything's ``get-env`` does); ``encoded`` returns one
variable's value in the forms a leak takes (raw, URL-encoded, hex, base64 in three alignments,
line-split), as text and as structured content. ``ENV_SERVER_LOG_VARIABLE=NAME`` makes it print
that variable's value on stderr as it starts (which baton writes to the server's log).
"""

from __future__ import annotations

import base64
import json
import os
import textwrap
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer

server = MCPServer("envserver")


@server.tool(description="Returns all environment variables of the server process.")
def get_env() -> str:
    return json.dumps(dict(os.environ), indent=2)


@server.tool(description="One environment variable's value in several encodings.")
def encoded(name: str) -> dict[str, str]:
    value = os.environ.get(name, "")
    data = value.encode()
    return {
        "raw": value, "url": quote(value, safe=""), "hex": data.hex(), "HEX": data.hex().upper(),
        "b64": base64.b64encode(data).decode(), "b64a": base64.b64encode(b"x" + data).decode(),
        "b64b": base64.urlsafe_b64encode(b"xy" + data).decode(), "lines": "\n".join(textwrap.wrap(value, 10)),
    }


def _log_a_variable(name: str) -> None:
    """What a chatty server does at start: print a variable it was given to stderr, in two
    writes (the key broken across them) and base64-encoded."""
    import sys
    import time

    value = os.environ.get(name, "")
    half = len(value) // 2
    sys.stderr.write(f"starting with {name}={value[:half]}")
    sys.stderr.flush()
    time.sleep(0.3)
    sys.stderr.write(f"{value[half:]} (base64 {base64.b64encode(value.encode()).decode()})\n")
    sys.stderr.flush()


if __name__ == "__main__":
    if os.environ.get("ENV_SERVER_LOG_VARIABLE"):
        _log_a_variable(os.environ["ENV_SERVER_LOG_VARIABLE"])
    server.run("stdio")

"""Shared pieces of the MCP tests: the test server's command, a free port, a running HTTP server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SERVER_APP = Path(__file__).with_name("server_app.py")
STARTUP_BUDGET_S = 60.0
"""Starting a Python MCP server imports the SDK: seconds on a loaded machine."""


def stdio_entry(markers: Path, name: str = "test", **env: str) -> dict[str, Any]:
    """An ``mcpServers`` entry running the test server over stdio."""
    return {"command": sys.executable, "args": [str(SERVER_APP), "stdio"],
            "env": {"MCP_TEST_MARKERS": str(markers), "MCP_TEST_NAME": name, **env}}


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(markers: Path, app: Path = SERVER_APP) -> Iterator[str]:
    """The test server (or another SDK server ``app`` taking ``http PORT``) over streamable HTTP
    on 127.0.0.1; yields its URL."""
    port = free_port()
    log = (markers / "http-server.log").open("w")
    proc = subprocess.Popen([sys.executable, str(app), "http", str(port)], stdout=log, stderr=log,
                            env={**_env(), "MCP_TEST_MARKERS": str(markers)})
    try:
        deadline = time.monotonic() + STARTUP_BUDGET_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"the HTTP test server exited: {(markers / 'http-server.log').read_text()}")
            time.sleep(0.1)
        else:
            raise RuntimeError("the HTTP test server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)

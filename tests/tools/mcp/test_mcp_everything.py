"""The official reference server, ``@modelcontextprotocol/server-everything`` (npm, the
TypeScript SDK, 2025-11-25): roots, progress, a tool requiring tasks, resources."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.providers.messages import TextContent
from baton.tools.mcp.manager import McpManager

PACKAGE = Path("@modelcontextprotocol") / "server-everything" / "dist" / "index.js"


def _server_script() -> Path | None:
    """The package installed globally (``npm install -g``) beside node."""
    node = shutil.which("node")
    if node is None:
        return None
    script = Path(node).resolve().parent.parent / "lib" / "node_modules" / PACKAGE
    return script if script.is_file() else None


SCRIPT = _server_script()
pytestmark = pytest.mark.skipif(SCRIPT is None, reason="needs node and @modelcontextprotocol/server-everything "
                                                      "installed globally (npm install -g)")


@pytest.fixture
async def everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[McpManager]:
    home = tmp_path / "home"
    monkeypatch.setenv("BATON_HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    manager = McpManager(work, home / "logs", startup_timeout=90)
    manager.add_servers({"ev": {"command": "node", "args": [str(SCRIPT), "stdio"]}}, "global")
    await manager.wait_startup()
    assert manager.connections["ev"].status == "ready", manager.connections["ev"].error
    try:
        yield manager
    finally:
        await manager.close()


def _tool(manager: McpManager, name: str):  # type: ignore[no-untyped-def]
    return next(t for t in manager.tools() if t.name == name)


def _text(result: object) -> str:
    return "".join(b.text for b in getattr(result, "content", []) if isinstance(b, TextContent))


async def test_reference_server(everything: McpManager) -> None:
    connection = everything.connections["ev"]
    assert connection._client is not None and connection._client.protocol_version == "2025-11-25"
    names = [t.name for t in everything.tools()]
    assert "mcp__ev__simulate-research-query" not in names  # execution.taskSupport: required
    assert connection.skipped_tools == ["simulate-research-query"]
    roots = _tool(everything, "mcp__ev__get-roots-list")
    text = _text(await roots.execute("r", roots.parameters.model_validate({}), asyncio.Event(), None))
    assert f"URI: {everything.cwd.resolve().as_uri()}" in text
    updates: list[object] = []
    long = _tool(everything, "mcp__ev__trigger-long-running-operation")
    result = await long.execute("l", long.parameters.model_validate({"duration": 1, "steps": 2}), asyncio.Event(),
                                updates.append)
    assert "Long running operation completed" in _text(result)
    assert [_text(u) for u in updates] == ["Progress: 1/2", "Progress: 2/2"]
    read = _tool(everything, "read_mcp_resource")
    uri = "demo://resource/static/document/features.md"
    document = _text(await read.execute("d", read.parameters.model_validate({"server": "ev", "uri": uri}),
                                        asyncio.Event(), None))
    assert document.startswith(f"[Resource: {uri}] (text/markdown)\n") and len(document) > 200

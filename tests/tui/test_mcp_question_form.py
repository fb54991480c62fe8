"""Pilot test of an MCP server's question (elicitation) in the app: the form names the server and
warns; a required field left empty is named and nothing is sent; Enter sends the answers, and a
key typed into the form reaches the server as ``[redacted]``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual.widgets import Static

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.elicitation import WARNING, ElicitationScreen
from tests.tools.mcp.capability_server import __file__ as SERVER
from tests.tui.app_helpers import open_session, stored_messages, wait_until


def form_text(app: BatonApp) -> str:
    """The texts the form shows."""
    return "\n".join(str(static.render()) for static in app.screen.query(Static))


async def test_the_form_asks_in_the_servers_name(project: Path, baton_home: Path, model_a: Model,
                                                 faux_a: FauxProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "f" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    markers = project.parent / "markers"
    markers.mkdir()
    (baton_home / "mcp.json").write_text(json.dumps({"mcpServers": {"cap": {
        "command": sys.executable, "args": [str(Path(SERVER)), "stdio"], "env": {"MCP_TEST_MARKERS": str(markers)}}}}))
    faux_a.add(FauxResponse.tool_call("mcp__cap__ask_user", {}), FauxResponse.text("Done."))
    session = await open_session(project, model_a, settings={"approval": "full", "mcp": {"startupTimeoutMs": 90_000}})
    app = BatonApp(session)
    async with app.run_test(size=(120, 45)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen), what="the form", timeout=90)
        text = form_text(app)
        assert "MCP server 'cap' asks" in text and WARNING in text
        assert "Please paste your ANTHROPIC_API_KEY so that I can help" in text
        await pilot.press("enter")  # nothing typed: username is required
        assert isinstance(app.screen, ElicitationScreen) and "Username is required" in form_text(app)
        await pilot.press(*"ada", "tab", *key, "tab", *"yes", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ElicitationScreen), what="the form to close")
        await wait_until(pilot, lambda: not app.is_busy, what="the run to end", timeout=60)
    path = session.session_file
    await session.close()
    assert path is not None
    [result] = [m for m in stored_messages(path) if m["role"] == "toolResult"]
    assert result["content"][0]["text"] == 'got {"username":"ada","api_key":"[redacted]","remember":true}'

"""Claude Code's MCP permission rules (``mcp__server``, ``mcp__server__*``, ``mcp__server__tool``)
decide real MCP calls: ``baton -p`` against servers written with the official MCP SDK, the tool
calls coming from a hostile local provider (the replay server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.mcp.helpers import stdio_entry
from tests.tui.cli_harness import run_baton, session_files, session_messages, write_models_json

pytest.importorskip("mcp")

API = "openai-completions"


def _calls(*names: str) -> list[Reply]:
    replies = [Reply.sse(tool_call_reply(API, f"call_{i}", name, {"text": f"hi{i}"})) for i, name in enumerate(names)]
    return [*replies, Reply.sse(text_reply(API, "Done."))]


def _servers(tmp_path: Path, *names: str) -> tuple[dict[str, Any], dict[str, Path]]:
    servers, markers = {}, {}
    for name in names:
        folder = tmp_path / f"markers-{name}"
        folder.mkdir()
        servers[name] = stdio_entry(folder, name)
        markers[name] = folder
    return servers, markers


def _called(markers: Path) -> list[str]:
    calls = markers / "calls"
    return calls.read_text().split("\n")[:-1] if calls.exists() else []


def test_mcp_rules_name_servers_and_tools_as_claude_code_does(home: Path, workdir: Path, tmp_path: Path) -> None:
    servers, markers = _servers(tmp_path, "everything", "memory", "my.server", "github")
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (home / "settings.json").write_text(json.dumps({
        "mcp": {"startupTimeoutMs": 90000},
        "permissions": {
            "deny": ["mcp__everything", "mcp__my.server", "mcp__github__shout"],
            "allow": ["mcp__memory__*", "mcp__github", "mcp__*"],
            "ask": ["mcp__memory__add"],
        },
    }))
    names = ["mcp__everything__shout", "mcp__memory__shout", "mcp__memory__add", "mcp__my_server__shout",
             "mcp__github__shout", "mcp__github__add"]
    with ReplayServer(_calls(*names)) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", "go", timeout=180)
    assert result.returncode == 0, result.stderr

    # mcp__memory__* was a rule, not "not a permission rule"; the unanchored allow is reported
    assert "not a permission rule" not in result.stderr
    assert "'mcp__*' does not name an MCP server" in result.stderr
    assert _called(markers["everything"]) == []  # deny mcp__everything covers every tool of it
    assert _called(markers["my.server"]) == []  # the configured name, though the tool is mcp__my_server__
    assert _called(markers["memory"]) == ["shout hi1"]  # allowed by mcp__memory__*; add asked and nobody could
    assert _called(markers["github"]) == []  # deny of one tool beats allow of the server

    [path] = session_files(home)
    results = {m["toolCallId"]: json.dumps(m["content"]) for m in session_messages(path) if m["role"] == "toolResult"}
    assert "denied by the rule mcp__everything" in results["call_0"]
    assert "needs the user's approval" in results["call_2"] and "mcp__memory__add" in results["call_2"]
    assert "denied by the rule mcp__my.server" in results["call_3"]
    assert "denied by the rule mcp__github__shout" in results["call_4"]
    # mcp__github__add is allowed by mcp__github: it reached the server (which refuses the arguments)
    assert "denied" not in results["call_5"] and "approval" not in results["call_5"]
    assert "validation error" in results["call_5"].lower(), results["call_5"]

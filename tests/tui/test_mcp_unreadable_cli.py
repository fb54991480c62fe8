"""An MCP answer nested deeper than the SDK reads fails its call at once, with the reason, and
the server and the session go on (issue 23: the call waited for ``mcp.toolTimeoutMs``, then said
"timed out", and the SDK printed a traceback).

Driven through the real program (``baton -p --mode json``) with a hostile local provider and
servers written with the official SDKs: Python (``tests/tools/mcp/deep_server.py``, over stdio
and streamable HTTP: its serializer sends up to about 250 levels, its client parser reads 200) and,
where installed, TypeScript (``deep_server.cjs``: 300 levels, as a server in any language may).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.providers.json_depth import MAX_VALUE_DEPTH, TOO_DEEP_MARKER, depth_exceeds
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.mcp.helpers import http_server
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

API = "openai-completions"
MCP_DIR = Path(__file__).resolve().parents[1] / "tools" / "mcp"
PY_SERVER = MCP_DIR / "deep_server.py"
TS_SERVER = MCP_DIR / "deep_server.cjs"
TS_MODULES = Path("/usr/lib/node_modules/@modelcontextprotocol/server-everything/node_modules")
"""Where the reference server's install keeps the TypeScript SDK (npm i -g @modelcontextprotocol/server-everything)."""
TOOL_TIMEOUT_MS = 60_000
"""Long enough for any call on a loaded machine: before the fix the deep call waited all of it."""

CALLS = [
    ("mcp__deep__deep_structured", {}),
    ("mcp__deep__ok", {}),
    ("mcp__deep__deep_text", {"depth": 300}),
    ("mcp__deep__deep_structured", {}),
    ("mcp__deep__ok", {}),
]


def _run(home: Path, workdir: Path, server: dict[str, Any], calls: list[tuple[str, dict[str, Any]]] = CALLS,
         tool_timeout_ms: int = TOOL_TIMEOUT_MS) -> tuple[str, str, list[dict[str, Any]]]:
    """The provider makes ``calls`` on ``server``; stdout, stderr and the session's tool results."""
    replies = [Reply.sse(tool_call_reply(API, f"call_{i}", name, args)) for i, (name, args) in enumerate(calls)]
    replies.append(Reply.sse(text_reply(API, "Done.")))
    (home / "settings.json").write_text(json.dumps({"mcp": {"startupTimeoutMs": 90_000,
                                                            "toolTimeoutMs": tool_timeout_ms}}))
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"deep": server}}))
    with ReplayServer(replies) as provider:
        write_models_json(home, {"replay": models_json_provider(API, provider.url)})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--approval", "full",
                           "--model", "replay/replay-model", "go", timeout=600)
    assert result.returncode == 0, result.stderr
    files = session_files(home)
    messages = [e["message"] for e in read_entries(files[0]) if e.get("type") == "message"]
    return result.stdout, result.stderr, [m for m in messages if m["role"] == "toolResult"]


def _text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def _check(stdout: str, stderr: str, results: list[dict[str, Any]], home: Path) -> None:
    assert len(results) == len(CALLS)
    deep, fine, text, deep_again, fine_again = results
    for failed in (deep, deep_again):
        assert failed["isError"]
        message = _text(failed)
        assert "nested too deeply" in message and "timed out" not in message, message
    assert not fine["isError"] and _text(fine) == "fine"  # the same server answers the next call
    assert not fine_again["isError"] and _text(fine_again) == "fine"
    assert not text["isError"] and _text(text).count('{"a":') == 300  # deep text is only text
    events = [json.loads(line) for line in stdout.splitlines()]
    assert events[-1]["type"] == "agent_end"
    assert "Traceback" not in stderr and "validation error" not in stderr, stderr
    assert "nested too deeply" in (home / "logs" / "mcp-deep.log").read_text()


def test_python_sdk_server_over_stdio(home: Path, workdir: Path) -> None:
    stdout, stderr, results = _run(home, workdir, {"command": sys.executable, "args": [str(PY_SERVER)]})
    _check(stdout, stderr, results, home)


def test_python_sdk_server_over_http(home: Path, workdir: Path, tmp_path: Path) -> None:
    with http_server(tmp_path, PY_SERVER) as url:
        stdout, stderr, results = _run(home, workdir, {"type": "http", "url": url})
    _check(stdout, stderr, results, home)


needs_ts_sdk = pytest.mark.skipif(
    shutil.which("node") is None or not (TS_MODULES / "@modelcontextprotocol" / "sdk").is_dir(),
    reason="node and the TypeScript MCP SDK (npm i -g @modelcontextprotocol/server-everything) are not installed")
TS_ENTRY = {"command": "node", "args": [str(TS_SERVER)], "env": {"NODE_PATH": str(TS_MODULES)}}


@needs_ts_sdk
def test_typescript_sdk_server_300_levels_deep(home: Path, workdir: Path) -> None:
    stdout, stderr, results = _run(home, workdir, TS_ENTRY)
    _check(stdout, stderr, results, home)


@needs_ts_sdk
def test_a_deep_notification_is_named_when_a_call_then_times_out(home: Path, workdir: Path) -> None:
    """A message that answers no call (a log notification 300 levels deep) cannot fail one: the
    call runs into its timeout, whose message says what the server sent meanwhile."""
    calls = [("mcp__deep__deep_notice", {"seconds": 600}), ("mcp__deep__ok", {})]
    _, stderr, results = _run(home, workdir, TS_ENTRY, calls, tool_timeout_ms=10_000)
    message = _text(results[0])
    assert results[0]["isError"] and "timed out" in message and "nested too deeply" in message, message
    assert _text(results[1]) == "fine"
    assert "Traceback" not in stderr, stderr


def test_a_deep_answer_the_sdk_reads_is_kept_within_the_value_limit(home: Path, workdir: Path) -> None:
    """150 levels parse, but a tool result's details are a value inside a message: cut past 100
    levels (with a marker) where they enter, as every such value is; the model gets its text."""
    calls = [("mcp__deep__deep_structured", {"depth": 150}), ("mcp__deep__ok", {})]
    stdout, stderr, results = _run(home, workdir, {"command": sys.executable, "args": [str(PY_SERVER)]}, calls)
    assert not results[0]["isError"] and _text(results[0]) == "a deep answer"
    details = results[0]["details"]
    assert not depth_exceeds(details, MAX_VALUE_DEPTH) and TOO_DEEP_MARKER in json.dumps(details)
    assert isinstance(details["structuredContent"]["a"]["a"], dict)  # the top of it is kept
    assert _text(results[1]) == "fine" and "Traceback" not in stderr
    assert json.loads(stdout.splitlines()[-1])["type"] == "agent_end"

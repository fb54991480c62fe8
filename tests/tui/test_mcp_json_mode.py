"""An MCP server under ``baton -p --mode json`` (the real program, an SDK server): progress as
``tool_execution_update`` events, a 2 MB structured result not repeated in every event, and a
server's question or sampling request refused with the reason (no one to ask)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.mcp.capability_server import __file__ as SERVER
from tests.tui.cli_harness import run_baton
from tests.tui.test_bad_input_cli import MODEL, OC, configure, json_lines


def _call(call_id: str, name: str, args: dict[str, Any]) -> Reply:
    return Reply.sse(tool_call_reply(OC, call_id, name, args))


def test_progress_big_results_and_questions_in_json_mode(home: Path, workdir: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"cap": {
        "command": sys.executable, "args": [str(Path(SERVER)), "stdio"], "env": {"MCP_TEST_MARKERS": str(markers)}}}}))
    replies = [_call("c1", "mcp__cap__work", {"steps": 3}), _call("c2", "mcp__cap__huge", {"size": 2_000_000}),
               _call("c3", "mcp__cap__ask_go_on", {}),
               _call("c4", "mcp__cap__ask_model", {"question": "spend?", "max_tokens": 10}),
               Reply.sse(text_reply(OC, "all done"))]
    with ReplayServer(replies) as server:
        configure(home, server, OC, approval="full", mcp={"startupTimeoutMs": 90_000})
        result = run_baton(home, workdir, "-p", "--mode", "json", *MODEL, "go", timeout=180)
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    updates = [line for line in lines if line["type"] == "tool_execution_update"]
    assert [u["partialResult"]["content"][0]["text"] for u in updates] == [
        f"Progress: {n}/3 — step {n}" for n in (1, 2, 3)]
    ends = {line["toolCallId"]: line for line in lines if line["type"] == "tool_execution_end"}
    huge = ends["c2"]["result"]
    assert "structuredContent" not in huge["details"]
    assert huge["details"]["structuredContentOmitted"]["chars"] > 2_000_000
    assert len(result.stdout) < 2_000_000  # the 2 MB is in no event, let alone five
    question = json.dumps(ends["c3"]["result"])
    assert "baton refused the question: baton cannot ask the user in this mode (print or JSON)" in question
    sampling = json.dumps(ends["c4"]["result"])
    assert "baton refused the sampling request: baton cannot ask the user in this mode" in sampling

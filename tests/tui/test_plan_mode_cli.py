"""Plan mode against a model that ignores it (issue 27 §2), through the real ``baton`` command.

A hostile local provider (the replay server) answers a plan-mode run with edit, write, bash and
an unknown tool anyway, then proposes a plan, then tries to write again. Every call that could
change anything is refused by the permission layer with a result saying why, nothing changes on
disk, the plan comes out (``--plan -p`` prints it and exits 0) and the session file records
plan mode, so ``baton -c`` comes back in it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.provider_scripts import models_json_provider, parallel_calls_reply, text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import run_baton, session_files, write_models_json

API = "openai-completions"
PLAN = "# Plan\n\n1. Change `notes.txt`.\n2. Run the tests."


class IgnoresPlanMode:
    """Calls tools that change things in plan mode, then proposes a plan, then writes anyway."""

    def __init__(self) -> None:
        self.step = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        step, self.step = self.step, self.step + 1
        if step == 0:
            return Reply.sse(parallel_calls_reply([
                ("e1", "edit", {"path": "notes.txt", "oldText": "old", "newText": "planted"}),
                ("w1", "write", {"path": "new.txt", "content": "planted\n"}),
                ("b1", "bash", {"command": "echo planted > pwned.txt"}),
                ("b2", "bash", {"command": "cat notes.txt"}),
                ("m1", "mcp__testserver__shout", {"text": "planted"}),
                ("r1", "read", {"path": "notes.txt"}),
                ("g1", "grep", {"pattern": "old"}),
                ("t1", "todo_write", {"todos": [{"content": "Plan it", "status": "in_progress",
                                                  "activeForm": "Planning it"}]}),
            ]))
        if step == 1:
            return Reply.sse(parallel_calls_reply([("x1", "exit_plan_mode", {"plan": PLAN})]))
        if step == 2:
            return Reply.sse(parallel_calls_reply([("w2", "write", {"path": "later.txt", "content": "planted\n"})]))
        return Reply.sse(text_reply(API, "Done."))


SERVER_APP = Path(__file__).resolve().parents[1] / "tools" / "mcp" / "server_app.py"


def _run(home: Path, workdir: Path, *args: str) -> tuple[Any, ReplayServer]:
    markers = home / "markers"
    markers.mkdir(exist_ok=True)
    server_config = {"command": sys.executable, "args": [str(SERVER_APP), "stdio"],
                     "env": {"MCP_TEST_MARKERS": str(markers), "MCP_TEST_READ_ONLY": "1"}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"testserver": server_config}}))
    with ReplayServer(IgnoresPlanMode()) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", *args, "make the change")
    return result, server


def _tool_names(request: RecordedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in json.loads(request.body).get("tools", [])]


def test_a_plan_mode_model_that_calls_edit_write_and_bash_anyway_changes_nothing(home: Path, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("old\n")
    result, server = _run(home, workdir, "--plan", "--mode", "json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    ends = {e["toolCallId"]: e for e in events if e["type"] == "tool_execution_end"}
    text = {call: "".join(b.get("text", "") for b in end["result"]["content"]) for call, end in ends.items()}
    for call in ("e1", "w1", "b1", "b2", "m1", "w2"):
        assert ends[call]["isError"], call
        assert "plan mode is read-only" in text[call], text[call]
    assert not ends["r1"]["isError"] and "old" in text["r1"]
    assert not ends["g1"]["isError"]
    assert not ends["t1"]["isError"]
    assert ends["t1"]["result"]["details"]["todos"][0]["activeForm"] == "Planning it"
    [update] = [e for e in events if e["type"] == "todo_update"]
    assert update == {"type": "todo_update", "toolCallId": "t1",
                      "todos": [{"content": "Plan it", "status": "in_progress", "activeForm": "Planning it"}]}
    assert sorted(p.name for p in workdir.iterdir()) == ["notes.txt"]
    assert (workdir / "notes.txt").read_text() == "old\n"
    proposed = [e for e in events if e["type"] == "plan_proposed"]
    assert [e["plan"] for e in proposed] == [PLAN]
    # offered: only read-only tools and exit_plan_mode, never edit, write or bash
    offered = _tool_names(server.requests[0])
    assert {"read", "grep", "find", "ls", "todo_write", "exit_plan_mode"} <= set(offered)
    assert not {"edit", "write", "bash", "mcp__testserver__shout"} & set(offered)
    assert "mcp__testserver__lookup" in offered  # its server marks it readOnlyHint
    assert not (home / "markers" / "calls").exists()  # the MCP server never saw the call
    assert "Plan mode" in json.dumps(json.loads(server.requests[0].body)["messages"][0])


def test_print_mode_with_plan_prints_the_plan_and_exits_0(home: Path, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("old\n")
    result, _ = _run(home, workdir, "--plan")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == PLAN
    assert sorted(p.name for p in workdir.iterdir()) == ["notes.txt"]


def test_the_session_file_records_plan_mode_and_continue_comes_back_in_it(home: Path, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("old\n")
    first, _ = _run(home, workdir, "--plan")
    assert first.returncode == 0, first.stderr
    [session] = session_files(home)
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    assert {"mode": "plan"} in [e.get("data") for e in entries if e.get("customType") == "approval_mode"]
    again, server = _run(home, workdir, "-c", "--mode", "json")  # no --plan: the file says plan
    assert again.returncode == 0, again.stderr
    assert "exit_plan_mode" in _tool_names(server.requests[0])
    assert "edit" not in _tool_names(server.requests[0])
    assert sorted(p.name for p in workdir.iterdir()) == ["notes.txt"]


def test_without_plan_mode_the_same_tools_are_offered_as_before(home: Path, workdir: Path) -> None:
    with ReplayServer(lambda request: Reply.sse(text_reply(API, "hi"))) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", "hello")
    assert result.returncode == 0, result.stderr
    assert _tool_names(server.requests[0]) == ["read", "bash", "edit", "write", "web_fetch", "task", "todo_write",
                                               "bash_output", "kill_shell"]


def test_rpc_enters_plan_mode_reports_the_plan_and_the_list_and_leaves_only_by_command(
    home: Path, workdir: Path
) -> None:
    from tests.tui.rpc_client import RpcProcess

    (workdir / "notes.txt").write_text("old\n")
    with ReplayServer(IgnoresPlanMode()) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        rpc = RpcProcess(home, workdir, "--model", "replay/replay-model")
        try:
            entered = rpc.call({"type": "set_plan_mode"})
            assert entered["success"] is True and entered["data"] == {"mode": "plan"}
            assert rpc.call({"type": "prompt", "message": "make the change"})["success"] is True
            assert rpc.event("todo_update")["todos"][0]["content"] == "Plan it"
            proposed = rpc.event("plan_proposed")
            assert proposed == {"type": "plan_proposed", "toolCallId": "x1", "plan": PLAN, "outcome": "proposed"}
            rpc.event("agent_end")
            assert sorted(p.name for p in workdir.iterdir()) == ["notes.txt"]
            left = rpc.call({"type": "set_approval", "mode": "auto"})
            assert left["data"] == {"mode": "auto"}
        finally:
            assert rpc.close_stdin() == 0

"""The installed ``baton`` in a real terminal (tmux): a subagent's live box while its command
runs, then Ctrl+C ends the subagent and its command, and the task is recorded as aborted; two
parallel subagents side by side, and Ctrl+O opening both boxes onto their transcripts."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from baton.sessions.store import SessionStore
from tests.process_helpers import kill_sleepers, needs_proc, sleepers, wait_until
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.sessions.subagent_helpers import CHILD_API, PARENT_API, TwoProtocols, task_calls_reply, write_agent
from tests.tui.cli_harness import baton_env, read_entries, write_models_json
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
MARKER = "417.25"


def _write_parent_and_child_models(home: Path, url: str) -> None:
    """models.json with the parent's model (Messages) and the subagents' (Chat Completions) on ``url``."""
    write_models_json(home, {
        "replay-a": {"baseUrl": url, "api": PARENT_API, "apiKey": "k",
                     "models": [{"id": "parent-model", "contextWindow": 200000}]},
        "replay-o": {"baseUrl": url + "/v1", "api": CHILD_API, "apiKey": "k",
                     "models": [{"id": "child-model", "contextWindow": 200000}]},
    })


def test_live_subagent_box_and_abort_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    needs_proc()
    write_agent(home / "agents", "scout", model="replay-o/child-model")
    script = TwoProtocols(
        [task_calls_reply([("toolu_tm", {"description": "wait a while", "prompt": "wait", "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "never asked"))],
        lambda body: Reply.sse(tool_call_reply(CHILD_API, "call_sleep", "bash", {"command": f"sleep {MARKER}"},
                                               text="Waiting.")),
    )
    with ReplayServer(script) as server:
        _write_parent_and_child_models(home, server.url)
        exit_file = tmp_path / "exit-code"
        env = baton_env(home, TERM="xterm-256color")
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-a/parent-model",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"), width=120)
        try:
            tmux.wait_for(lambda p: "replay-a/parent-model" in p, "the editor and footer")
            tmux.type("send the scout")
            tmux.send("Enter")
            live = tmux.wait_for(lambda p: "scout on replay-o/child-model · running bash" in p, "the live box")
            assert wait_until(lambda: sleepers(MARKER), 10), "the subagent's command did not start"
            tmux.send("C-c")
            aborted = tmux.wait_for(lambda p: "[subagent scout was aborted]" in p, "the aborted task")
            assert wait_until(lambda: not sleepers(MARKER), 10), "the subagent's command outlived the abort"
            tmux.send("C-d")
            assert wait_until(exit_file.exists, 15, interval=0.1), f"baton did not quit:\n{tmux.pane()}"
        finally:
            tmux.kill()
            kill_sleepers(MARKER)
    assert "task (scout) wait a while" in live
    assert "Partial answer:" in aborted and "Waiting." in aborted  # what it had said before the abort
    parent = next(p for p in (home / "sessions").rglob("*.jsonl") if "subagents" not in p.parts)
    result = next(e["message"] for e in read_entries(parent)
                  if e["type"] == "message" and e["message"]["role"] == "toolResult")
    assert result["toolCallId"] == "toolu_tm" and result["details"]["status"] == "aborted"
    child = SessionStore.load(result["details"]["sessionFile"])
    assert [m.role for m in child.build_context().messages] == ["user", "assistant", "toolResult"]


def _waiting_child(body: dict[str, Any]) -> Reply:
    """Each subagent (known by its prompt) runs a command that waits for ``go``, then answers."""
    side = "north" if "go north" in json.dumps(body["messages"]) else "south"
    if not any(m["role"] == "tool" for m in body["messages"]):
        command = f"while [ ! -e go ]; do sleep 0.05; done; echo {side}-side"
        return Reply.sse(tool_call_reply(CHILD_API, f"call_{side}", "bash", {"command": command}))
    return Reply.sse(text_reply(CHILD_API, f"The {side} is clear."))


def test_parallel_subagent_boxes_side_by_side_and_ctrl_o_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    write_agent(home / "agents", "scout", model="replay-o/child-model")
    write_agent(home / "agents", "digger", model="replay-o/child-model")
    script = TwoProtocols(
        [task_calls_reply([
            ("toolu_n", {"description": "look north", "prompt": "go north", "agent": "scout"}),
            ("toolu_s", {"description": "look south", "prompt": "go south", "agent": "digger"}),
        ]), Reply.sse(text_reply(PARENT_API, "Both looked."))],
        _waiting_child,
    )
    with ReplayServer(script) as server:
        _write_parent_and_child_models(home, server.url)
        exit_file = tmp_path / "exit-code"
        env = baton_env(home, TERM="xterm-256color")
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-a/parent-model --approval auto",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"), width=130, height=50)
        try:
            tmux.wait_for(lambda p: "replay-a/parent-model" in p, "the editor and footer")
            tmux.type("look both ways")
            tmux.send("Enter")
            row = tmux.wait_for(lambda p: any("scout on replay-o/child-model · running bash" in line and
                                              "digger on replay-o/child-model · running bash" in line
                                              for line in p.splitlines()), "two live boxes side by side")
            assert "Ctrl+O: the subagent's transcript" in row
            tmux.send("C-o")
            opened = tmux.wait_for(lambda p: any(line.count("bash $ while [ ! -e go ]") == 2
                                                 for line in p.splitlines()), "both transcripts, side by side")
            assert "▌ go north" in opened and "▌ go south" in opened  # each subagent's own prompt
            (workdir / "go").touch()
            done = tmux.wait_for(lambda p: "Both looked." in p, "the parent's answer", timeout=40)
            assert "north-side" in done and "south-side" in done  # the commands' output, in the open boxes
            tmux.send("C-o")
            closed = tmux.wait_for(lambda p: "bash $ while" not in p, "the boxes closed")
            assert "The north is clear." in closed and "The south is clear." in closed
            tmux.send("C-d")
            assert wait_until(exit_file.exists, 15, interval=0.1), f"baton did not quit:\n{tmux.pane()}"
        finally:
            tmux.kill()

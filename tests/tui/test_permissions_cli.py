"""`baton -p` / `--mode json` with calls that need approval: denied, reported, the run ends normally."""

from __future__ import annotations

import json
from pathlib import Path

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API = "openai-completions"


def replies(command: str) -> list[Reply]:
    return [Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": command})),
            Reply.sse(text_reply(API, "Finished."))]


def test_print_mode_denies_and_reports_on_stderr(home: Path, workdir: Path) -> None:
    with ReplayServer(replies("rm -rf build")) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--approval", "ask", "--model", "replay/replay-model", "clean up")
        second = json.dumps(server.requests[1].json())
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Finished.\n"
    assert ("baton: denied bash(rm -rf build): needs approval; use --approval full or an allow rule"
            in result.stderr.splitlines())
    assert "needs the user's approval" in second  # the model was told why


def test_json_mode_emits_tool_approval_events(home: Path, workdir: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["bash(echo:*)"]}}))
    with ReplayServer(replies("echo allowed-ok")) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--approval", "ask",
                           "--model", "replay/replay-model", "say it")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    approvals = [e for e in events if e["type"] == "tool_approval"]
    assert approvals == [{"type": "tool_approval", "toolCallId": "call_1", "toolName": "bash", "decision": "allow",
                          "reason": "allowed by the rule bash(echo:*)", "rule": "bash(echo:*)", "decidedBy": "rule"}]
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert not end["isError"] and "allowed-ok" in end["result"]["content"][0]["text"]


def test_a_project_cannot_loosen_the_approval_mode(home: Path, workdir: Path) -> None:
    (workdir / ".baton").mkdir()
    (workdir / ".baton" / "settings.json").write_text(json.dumps({"approval": "full", "sandbox": {"enabled": False}}))
    with ReplayServer(replies("echo hi > ../outside.txt")) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        (home / "settings.json").write_text(json.dumps({"approval": "ask"}))
        result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", "go")
    assert result.returncode == 0, result.stderr
    assert "baton: denied bash(echo hi > ../outside.txt)" in result.stderr
    assert not (workdir.parent / "outside.txt").exists()

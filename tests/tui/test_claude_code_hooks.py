"""Hooks written for Claude Code, run by the real ``baton`` process from a trusted project's
``.claude/settings.json``: they get Claude Code's input (``tool_input`` with ``file_path``
absolute, ``old_string``/``new_string``, ``edits``, ``content``, ``command``; ``tool_response``;
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``permission_mode``), every
matching hook runs at once, any block wins and every one's output is kept; ``SessionEnd`` runs."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, session_files, write_models_json

API = "openai-completions"
MODEL = "replay/replay-model"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude_hooks"


def python_hook(name: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FIXTURES / name))}"


def group(matcher: str, *commands: str, timeout: float | None = None) -> dict[str, Any]:
    hooks: list[dict[str, Any]] = [{"type": "command", "command": c} for c in commands]
    if timeout is not None:
        for hook in hooks:
            hook["timeout"] = timeout
    return {"matcher": matcher, "hooks": hooks}


def run(home: Path, workdir: Path, hooks: dict[str, Any], replies: list[Reply], *args: str) -> tuple[Any, str]:
    (workdir / ".claude").mkdir(exist_ok=True)
    (workdir / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    tmpdir = workdir.parent / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--trust-project", "--model", MODEL, *args, "go", TMPDIR=str(tmpdir))
        sent = "\n".join(r.body.decode("utf-8", "replace") for r in server.requests)
    return result, sent


def call(name: str, arguments: dict[str, Any]) -> list[Reply]:
    return [Reply.sse(tool_call_reply(API, "call_1", name, arguments)), Reply.sse(text_reply(API, "Done."))]


def record(path: Path) -> str:
    """A hook command appending its input to ``path``."""
    return f"cat >> {shlex.quote(str(path))}; echo >> {shlex.quote(str(path))}"


def inputs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_anthropics_bash_validator_blocks_grep(home: Path, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("needle\n")
    result, sent = run(home, workdir, {"PreToolUse": [group("Bash", python_hook("bash_command_validator.py"))]},
                       call("bash", {"command": "grep needle notes.txt > found.txt"}))
    assert result.returncode == 0, result.stderr
    assert not (workdir / "found.txt").exists()
    assert "Use 'rg' (ripgrep) instead of 'grep'" in sent


def test_the_security_reminder_reads_new_string_of_an_edit(home: Path, workdir: Path) -> None:
    (workdir / "app.py").write_text("data = load()\n")
    hooks = {"PreToolUse": [group("Edit|Write|MultiEdit", python_hook("security_reminder.py"))]}
    result, sent = run(home, workdir, hooks,
                       call("edit", {"path": "app.py", "oldText": "load()", "newText": "eval(load())"}))
    assert result.returncode == 0, result.stderr
    assert (workdir / "app.py").read_text() == "data = load()\n"
    assert f"Security reminder for {workdir / 'app.py'}: eval()" in sent  # file_path absolute


def test_the_security_reminder_reads_every_edit_of_a_multi_edit(home: Path, workdir: Path) -> None:
    (workdir / "app.py").write_text("a = 1\nb = 2\n")
    hooks = {"PreToolUse": [group("MultiEdit", python_hook("security_reminder.py"))]}
    edits = [{"oldText": "a = 1", "newText": "a = 3"}, {"oldText": "b = 2", "newText": "b = pickle.loads(x)"}]
    result, sent = run(home, workdir, hooks, call("edit", {"path": "app.py", "edits": edits}))
    assert result.returncode == 0, result.stderr
    assert (workdir / "app.py").read_text() == "a = 1\nb = 2\n"
    assert "pickle.loads on untrusted data runs code" in sent


def test_the_security_reminder_reads_the_content_of_a_write(home: Path, workdir: Path) -> None:
    hooks = {"PreToolUse": [group("Write", python_hook("security_reminder.py"))]}
    result, sent = run(home, workdir, hooks, call("write", {"path": "new.py", "content": "x = eval(input())\n"}))
    assert result.returncode == 0, result.stderr
    assert not (workdir / "new.py").exists() and "eval() runs arbitrary code" in sent


def test_hook_input_has_claude_codes_fields(home: Path, workdir: Path, tmp_path: Path) -> None:
    log = tmp_path / "inputs.jsonl"
    (workdir / "a.txt").write_text("old\n")
    hooks = {"PreToolUse": [group("Edit", record(log))], "PostToolUse": [group("Edit", record(log))],
             "SessionEnd": [group("", record(log))]}
    result, _ = run(home, workdir, hooks, call("edit", {"path": "a.txt", "oldText": "old", "newText": "new"}))
    assert result.returncode == 0, result.stderr
    pre, post, end = inputs(log)
    [session_file] = session_files(home)
    header = json.loads(session_file.read_text().splitlines()[0])
    for data in (pre, post, end):
        assert data["session_id"] == header["id"] and data["transcript_path"] == str(session_file)
        assert data["cwd"] == str(workdir) and data["permission_mode"] == "acceptEdits"
    assert pre["hook_event_name"] == "PreToolUse" and pre["tool_name"] == "Edit" and pre["tool_use_id"] == "call_1"
    assert {k: pre["tool_input"][k] for k in ("file_path", "old_string", "new_string", "replace_all")} == \
        {"file_path": str(workdir / "a.txt"), "old_string": "old", "new_string": "new", "replace_all": False}
    assert post["tool_response"]["filePath"] == str(workdir / "a.txt") and post["tool_response"]["success"] is True
    assert post["tool_response"]["newString"] == "new"
    assert end["hook_event_name"] == "SessionEnd" and end["reason"] == "other"


def test_bash_input_carries_the_timeout_in_milliseconds(home: Path, workdir: Path, tmp_path: Path) -> None:
    log = tmp_path / "inputs.jsonl"
    hooks = {"PreToolUse": [group("Bash", record(log))], "PostToolUse": [group("Bash", record(log))]}
    result, _ = run(home, workdir, hooks, call("bash", {"command": "echo out-text", "timeout": 30}))
    assert result.returncode == 0, result.stderr
    pre, post = inputs(log)
    assert pre["tool_input"]["command"] == "echo out-text" and pre["tool_input"]["timeout"] == 30000
    assert "out-text" in post["tool_response"]["stdout"] and post["tool_response"]["interrupted"] is False


def test_matching_hooks_run_at_once(home: Path, workdir: Path, tmp_path: Path) -> None:
    """The first hook waits for a file only the second one makes: one after the other, the first
    would be killed at its timeout and never write its mark."""
    flag, mark = tmp_path / "second-ran", tmp_path / "first-done"
    first = f"while [ ! -e {flag} ]; do sleep 0.05; done; touch {mark}"
    hooks = {"PreToolUse": [group("Bash", first, timeout=30), group("Bash", f"touch {flag}")]}
    result, _ = run(home, workdir, hooks, call("bash", {"command": "echo hi"}))
    assert result.returncode == 0, result.stderr
    assert mark.exists() and "timed out" not in result.stderr


def test_any_block_wins_and_every_reason_is_kept(home: Path, workdir: Path) -> None:
    hooks = {"PreToolUse": [group("Bash", "exit 0", "echo reason-one >&2; exit 2"),
                            group("*", "echo reason-two >&2; exit 2")]}
    result, sent = run(home, workdir, hooks, call("bash", {"command": "touch made.txt"}))
    assert result.returncode == 0, result.stderr
    assert not (workdir / "made.txt").exists()
    assert "reason-one" in sent and "reason-two" in sent


def test_an_untrusted_projects_session_end_hook_never_runs(home: Path, workdir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ended"
    (workdir / ".claude").mkdir()
    (workdir / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionEnd": [group("", f"touch {marker}")]}}))
    with ReplayServer([Reply.sse(text_reply(API, "Done."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--model", MODEL, "go")
    assert result.returncode == 0, result.stderr
    assert not marker.exists() and "hooks (SessionEnd)" in result.stderr

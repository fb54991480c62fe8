"""Hooks (Claude Code's command-hook contract) driven through a real session, real hook
processes and the faux provider."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import TextContent, ToolResultMessage, UserMessage
from baton.sessions import CodingSession, SessionOptions, load_settings
from baton.sessions.errors import PromptRefusedError
from tests.sessions.conftest import quiet_settings


def _hooks(event: str, command: str, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {event: [{"matcher": matcher, "hooks": [hook]}]}


def _texts(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content if isinstance(b, TextContent))


async def _open(options: SessionOptions, hooks: dict[str, Any], **changes: Any) -> CodingSession:
    options.settings = quiet_settings(hooks=hooks)
    options.tools = ["bash"]
    for key, value in changes.items():
        setattr(options, key, value)
    return await CodingSession.open(options)


def _results(session: CodingSession) -> list[ToolResultMessage]:
    return [m for m in session.messages if isinstance(m, ToolResultMessage)]


async def test_pre_tool_use_exit_2_blocks_with_stderr(options: SessionOptions, faux_a: FauxProvider, cwd: Path) -> None:
    session = await _open(options, _hooks("PreToolUse", "echo 'no files here' >&2; exit 2", matcher="Bash"))
    faux_a.add(FauxResponse.tool_call("bash", {"command": "touch made.txt"}, id="c1"), "ok")
    try:
        await session.prompt("make it")
    finally:
        await session.close()
    [result] = _results(session)
    assert result.is_error and "no files here" in _texts(result)
    assert not (cwd / "made.txt").exists()
    assert "no files here" in _texts(faux_a.requests[1].messages[-1])  # the model read the reason


async def test_pre_tool_use_json_deny_and_allow(options: SessionOptions, faux_a: FauxProvider, cwd: Path,
                                                tmp_path: Path) -> None:
    script = tmp_path / "decide.py"
    script.write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "open(sys.argv[1], 'a').write(json.dumps(data) + '\\n')\n"
        "cmd = data['tool_input']['command']\n"
        "decision = 'deny' if 'rm ' in cmd else 'allow'\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',\n"
        "  'permissionDecision': decision, 'permissionDecisionReason': 'no deleting'}}))\n"
    )
    log = tmp_path / "seen.jsonl"
    session = await _open(options, _hooks("PreToolUse", f"python3 {script} {log}", matcher="Bash|Edit"))
    faux_a.add(
        FauxResponse.tool_call("bash", {"command": "rm -rf stuff"}, id="c1"),
        FauxResponse.tool_call("bash", {"command": "echo fine > ok.txt"}, id="c2"),
        "done",
    )
    try:
        await session.prompt("go")
    finally:
        await session.close()
    denied, allowed = _results(session)
    assert denied.is_error and "no deleting" in _texts(denied)
    assert not allowed.is_error and (cwd / "ok.txt").read_text() == "fine\n"
    assert session.permission_hints == {}  # the permission policy took the hint...
    decisions = [e.data for e in session.store.entries if getattr(e, "custom_type", None) == "permission_decision"]
    assert [(d["toolCallId"], d["decision"], d["decidedBy"]) for d in decisions] == [("c2", "allow", "hook")]
    first = json.loads(log.read_text().splitlines()[0])
    assert first["hook_event_name"] == "PreToolUse"
    assert first["tool_name"] == "Bash" and first["baton_tool_name"] == "bash"
    assert first["tool_input"] == {"command": "rm -rf stuff"}
    assert first["session_id"] == session.session_id and first["cwd"] == str(cwd)


async def test_hook_killed_at_timeout_and_run_goes_on(options: SessionOptions, faux_a: FauxProvider,
                                                      tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    session = await _open(options, _hooks("UserPromptSubmit", f"echo $$ > {pidfile}; exec sleep 30", timeout=0.5))
    notices: list[Any] = []
    session.subscribe(lambda e: notices.append(e) if e.type == "extension_notice" else None)
    faux_a.add("answered")
    start = time.monotonic()
    try:
        await session.prompt("hello")
    finally:
        await session.close()
    assert time.monotonic() - start < 10
    assert faux_a.calls == 1
    assert any("timed out after 0.5s" in n.text for n in notices)
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_user_prompt_submit_adds_context_or_blocks(options: SessionOptions, faux_a: FauxProvider) -> None:
    command = "python3 -c \"import json,sys; p=json.load(sys.stdin)['prompt']; " \
              "print('Ticket ABC-1 is relevant') if 'ok' in p else (sys.stderr.write('secret detected'), exit(2))\""
    session = await _open(options, _hooks("UserPromptSubmit", command))
    faux_a.add("fine")
    try:
        await session.prompt("ok go")
        sent = faux_a.requests[-1].messages
        assert isinstance(sent[-2], UserMessage) and _texts(sent[-2]) == "ok go"
        assert "Ticket ABC-1 is relevant" in _texts(sent[-1])
        with pytest.raises(PromptRefusedError, match="secret detected"):
            await session.prompt("password=hunter2")
        assert faux_a.calls == 1
        assert not any("hunter2" in _texts(m) for m in session.messages if isinstance(m, UserMessage))
    finally:
        await session.close()


async def test_post_tool_use_feedback_and_stop_continuation(options: SessionOptions, faux_a: FauxProvider,
                                                            tmp_path: Path) -> None:
    marker = tmp_path / "stopped-once"
    hooks = {
        **_hooks("PostToolUse", "echo 'lint: 2 warnings' >&2; exit 2", matcher="bash"),
        **_hooks("Stop", f"if [ -f {marker} ]; then exit 0; fi; touch {marker}; echo 'run the tests too' >&2; exit 2"),
    }
    session = await _open(options, hooks)
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo hi"}, id="c1"), "first answer", "tests ran")
    try:
        await session.prompt("do it")
    finally:
        await session.close()
    [result] = _results(session)
    assert "hi" in _texts(result) and "lint: 2 warnings" in _texts(result) and not result.is_error
    assert faux_a.calls == 3
    assert "run the tests too" in _texts(faux_a.requests[2].messages[-1])


async def test_session_start_context_reaches_the_first_request(options: SessionOptions, faux_a: FauxProvider,
                                                               tmp_path: Path) -> None:
    script = tmp_path / "start.py"
    script.write_text("import json, sys\nprint('branch: main, source: ' + json.load(sys.stdin)['source'])\n")
    session = await _open(options, _hooks("SessionStart", f"python3 {script}"))
    faux_a.add("a", "b")
    try:
        await session.prompt("first")
        await session.prompt("second")
    finally:
        await session.close()
    first = [_texts(m) for m in faux_a.requests[0].messages]
    assert any("branch: main, source: startup" in t for t in first), repr(first)
    assert sum("branch: main" in _texts(m) for m in faux_a.requests[1].messages) == 1


async def test_bad_hooks_are_reported_not_fatal(options: SessionOptions, faux_a: FauxProvider) -> None:
    hooks = {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "x"}]}], "Nope": [],
             "Stop": [{"matcher": "", "hooks": [{"command": "exit 7"}]}]}
    session = await _open(options, hooks)
    notices: list[Any] = []
    session.subscribe(lambda e: notices.append(e) if e.type == "extension_notice" else None)
    faux_a.add("ok")
    try:
        await session.prompt("hi")
    finally:
        await session.close()
    assert any("only type 'command'" in w for w in session.warnings)
    assert any("unknown event 'Nope'" in w for w in session.warnings)
    assert any("exited with 7" in n.text for n in notices)


async def test_project_hooks_need_trust(baton_home: Path, cwd: Path, faux_a: FauxProvider, model_a: Any,
                                        tmp_path: Path) -> None:
    log = tmp_path / "ran.txt"
    settings_file = cwd / ".baton" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"hooks": _hooks("UserPromptSubmit", f"echo ran >> {log}")}))
    faux_a.add(*["ok"] * 5)

    async def run(trust: bool | None) -> CodingSession:
        options = SessionOptions(cwd=cwd, model=model_a, tools=[], context_files=False, session="none",
                                 settings=load_settings(project_dir=cwd), trust_project=trust)
        session = await CodingSession.open(options)
        await session.prompt("hi")
        await session.close()
        return session

    session = await run(None)
    assert session.extensions.pending_trust is not None
    assert "hooks (UserPromptSubmit)" in session.extensions.pending_trust.describe()
    assert not log.exists()
    session = await run(True)  # --trust-project: this run only
    assert log.read_text() == "ran\n"
    session = await run(None)
    assert session.extensions.pending_trust is not None and log.read_text() == "ran\n"
    session.extensions.trust_project()  # the user said yes: remembered
    session = await run(None)
    assert session.extensions.pending_trust is None and log.read_text() == "ran\nran\n"
    settings_file.write_text(json.dumps({"hooks": _hooks("UserPromptSubmit", f"echo changed >> {log}")}))
    session = await run(None)  # changed hooks: asked again
    assert session.extensions.pending_trust is not None and log.read_text() == "ran\nran\n"
    session = await run(False)
    assert log.read_text() == "ran\nran\n"


async def test_pre_compact_hook_sees_trigger_and_focus(options: SessionOptions, faux_a: FauxProvider,
                                                       tmp_path: Path) -> None:
    log = tmp_path / "compact.json"
    hooks = _hooks("PreCompact", f"cat > {log}")
    options.settings = quiet_settings(hooks=hooks, compaction={"keepRecentTokens": 50})
    session = await CodingSession.open(options)
    faux_a.add(*[FauxResponse.text(f"answer {i}") for i in range(4)], FauxResponse.text("## Goal\nsummary"))
    try:
        for i in range(4):
            await session.prompt(f"question {i}: " + " ".join(["word"] * 150))
        await session.compact("the parser")
    finally:
        await session.close()
    seen = json.loads(log.read_text())
    assert seen["hook_event_name"] == "PreCompact"
    assert seen["trigger"] == "manual" and seen["custom_instructions"] == "the parser"


async def test_notification_hooks_run_while_an_approval_waits(options: SessionOptions, faux_a: FauxProvider,
                                                              cwd: Path, tmp_path: Path) -> None:
    import asyncio

    from baton.sessions.permissions import ApprovalAnswer, ApprovalRequest

    log = tmp_path / "notified.json"
    session = await _open(options, {**_hooks("Notification", f"cat > {log}", matcher="permission_prompt"),
                                    **_hooks("PreToolUse", "exit 0")}, approval="ask")
    seen: list[str] = []

    async def approver(request: ApprovalRequest) -> ApprovalAnswer:
        for _ in range(600):  # the user is told while baton waits: answer once the hook has run
            if log.exists() and log.read_text().strip():
                break
            await asyncio.sleep(0.05)
        seen.append(log.read_text())
        return ApprovalAnswer("allow_once")

    session.permissions.approver = approver
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo hi"}, id="c1"), "ok")
    try:
        await session.prompt("go")
    finally:
        await session.close()
    data = json.loads(seen[0])
    assert data["hook_event_name"] == "Notification" and data["notification_type"] == "permission_prompt"
    assert data["message"] == "baton needs your permission to use Bash" and data["permission_mode"] == "default"

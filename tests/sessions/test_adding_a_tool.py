"""Adding a tool is one module plus one registration line.

The made-up tools of ``tests/sessions/made_up_tools.py`` are registered the way a built-in is — one entry
in ``TOOL_MODULES`` — and nothing else of baton is told about them. A real session (faux
provider, real hook processes, real checkpoints in git, the permission gate) then calls them,
and the editor protocol's mapping turns the session's own events into ACP updates: every part
that treats tools differently must treat them by the traits their classes declare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import TextContent, ToolResultMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.checkpoints import git as git_module
from baton.sessions.checkpoints.records import read_records
from baton.sessions.permissions.approval import ApprovalAnswer, ApprovalRequest
from baton.tools import TOOL_MODULES
from baton.tui.modes.acp.permission import permission_params
from baton.tui.modes.acp.updates import UpdateMapper, replay_updates
from tests.sessions.conftest import quiet_settings


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registration lines (undone after the test)."""
    monkeypatch.setitem(TOOL_MODULES, "stamp", ("tests.sessions.made_up_tools", "StampTool"))
    monkeypatch.setitem(TOOL_MODULES, "peek", ("tests.sessions.made_up_tools", "PeekTool"))


def _results(session: CodingSession) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in session.messages if isinstance(m, ToolResultMessage)}


def _text(message: ToolResultMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


def _hook_log(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A PreToolUse hook for Claude Code's name of the tool, logging what it is given."""
    log = tmp_path / "hook.jsonl"
    script = tmp_path / "hook.py"
    script.write_text(f"import sys\nopen({str(log)!r}, 'a').write(sys.stdin.read().strip() + '\\n')\n")
    hooks = {"PreToolUse": [{"matcher": "Stamp", "hooks": [{"type": "command",
                                                               "command": f"{sys.executable} {script}"}]}]}
    return hooks, log


@pytest.mark.skipif(git_module.find_git() is None, reason="git is not installed")
async def test_a_made_up_tool_that_changes_files_is_handled_by_every_part(
    registered: None, options: SessionOptions, faux_a: FauxProvider, cwd: Path, tmp_path: Path
) -> None:
    hooks, log = _hook_log(tmp_path)
    options.tools = ["stamp"]
    options.approval = "auto"
    options.settings = quiet_settings(hooks=hooks, permissions={"deny": ["edit(secret/**)"]})
    faux_a.add(
        FauxResponse.tool_call("stamp", {"file": "notes.txt", "text": "first"}, id="inside"),
        FauxResponse.tool_call("stamp", {"file": "../outside.txt", "text": "x"}, id="outside"),
        FauxResponse.tool_call("stamp", {"file": ".baton/settings.json", "text": "{}"}, id="protected"),
        FauxResponse.tool_call("stamp", {"file": "secret/key.txt", "text": "x"}, id="denied"),
        "done",
    )
    session = await CodingSession.open(options)
    asked: list[ApprovalRequest] = []
    editor_questions: list[dict[str, Any]] = []

    async def approver(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        editor_questions.append(permission_params("s1", request, str(cwd)))
        return ApprovalAnswer("deny", reason="not now")

    assert session.permissions is not None
    session.permissions.approver = approver
    updates: list[dict[str, Any]] = []
    session.subscribe(UpdateMapper(str(cwd), updates.append))
    try:
        await session.prompt("stamp things")
        # checkpoints: a snapshot was taken before the first call, so a code rewind takes it back
        assert any(r.kind == "before" for r in read_records(session.store))
        [point] = session.checkpoints()
        rewound = await session.rewind(point.entry_id, "code")
    finally:
        await session.close()

    results = _results(session)
    # the system prompt lists it and, as it changes files, asks for plain summaries
    system = faux_a.requests[0].system_prompt or ""
    assert "- stamp: Append a line to a file" in system and "When summarizing your actions" in system
    # permissions judged the path in its ``file`` argument: inside ran (auto mode), outside and a
    # protected place asked, an ``edit(...)`` deny rule covered it
    assert not results["inside"].is_error and _text(results["inside"]) == "Stamped notes.txt"
    assert [r.tool_call_id for r in asked] == ["outside", "protected"]
    assert asked[0].summary == f"stamp({cwd.parent / 'outside.txt'})"
    assert asked[1].reason.startswith("touches .baton")
    assert results["outside"].is_error and not (cwd.parent / "outside.txt").exists()
    assert not (cwd / ".baton" / "settings.json").exists()
    assert results["denied"].is_error and "edit(secret/**)" in _text(results["denied"])
    assert not (cwd / "secret").exists()
    # the rewind removed the file the made-up tool created
    assert rewound.removed == ["notes.txt"] and not (cwd / "notes.txt").exists()
    # the hook matched Claude Code's name and got the path as file_path (absolute, as Claude Code sends it)
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen[0]["tool_name"] == "Stamp" and seen[0]["baton_tool_name"] == "stamp"
    assert seen[0]["tool_input"] == {"file": "notes.txt", "text": "first", "file_path": str(cwd / "notes.txt")}
    # the editor: kind, title and location from the class, for live updates and the question
    started = next(u for u in updates if u.get("toolCallId") == "inside" and u.get("status") == "in_progress")
    assert started["kind"] == "edit" and started["title"] == "stamp notes.txt"
    assert started["locations"] == [{"path": str(cwd / "notes.txt"), "line": 1}]
    question = editor_questions[0]["toolCall"]
    assert question["kind"] == "edit" and question["locations"] == [{"path": str(cwd.parent / "outside.txt"),
                                                                      "line": 1}]
    replayed = [u for u in replay_updates(session.messages, str(cwd)) if u.get("toolCallId") == "inside"]
    assert replayed[0]["kind"] == "edit" and replayed[0]["title"] == "stamp notes.txt"


async def test_a_made_up_read_only_tool_reads_unasked_and_takes_no_checkpoint(
    registered: None, options: SessionOptions, faux_a: FauxProvider, cwd: Path
) -> None:
    (cwd / "a.txt").write_text("line one\nline two\n")
    options.tools = ["peek"]
    options.approval = "ask"  # even here a read inside the workspace runs unasked
    faux_a.add(
        FauxResponse.tool_call("peek", {"target": "a.txt"}, id="inside"),
        FauxResponse.tool_call("peek", {"target": "/etc/hostname"}, id="outside"),
        "done",
    )
    session = await CodingSession.open(options)
    updates: list[dict[str, Any]] = []
    session.subscribe(UpdateMapper(str(cwd), updates.append))
    try:
        await session.prompt("peek")
    finally:
        await session.close()
    results = _results(session)
    assert _text(results["inside"]) == "line one" and not results["inside"].is_error
    assert results["outside"].is_error and "needs the user's approval" in _text(results["outside"])
    assert not any(r.kind == "before" for r in read_records(session.store))
    started = next(u for u in updates if u.get("toolCallId") == "inside" and u.get("status") == "in_progress")
    assert started["kind"] == "read" and started["locations"] == [{"path": str(cwd / "a.txt")}]

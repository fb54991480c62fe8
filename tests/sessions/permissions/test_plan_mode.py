"""Plan mode in the permission layer (issue 27 §2): what it refuses whatever the rules, hooks,
project settings and session files say, and what it lets through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.providers.faux import faux_model
from baton.providers.messages import UserMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.policy import Policy
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.setup import MODE_ENTRY
from baton.sessions.settings import load_settings
from baton.sessions.store import SessionStore
from baton.tools import TOOL_MODULES, tool_type


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    return root


def plan_policy(ws: Path, **rules: list[str]) -> Policy:
    return Policy(Workspace.for_dir(str(ws), str(ws.parent / "home")), RuleSet.parse(**rules), "plan")


def test_plan_mode_refuses_every_change_even_when_a_rule_or_a_hook_allows_it(ws: Path) -> None:
    p = plan_policy(ws, allow=["edit", "write", "bash", "bash(git status)", "mcp__srv__delete"])
    calls = [("edit", {"path": "src/a.py", "oldText": "1", "newText": "2"}),
             ("write", {"path": "src/new.py", "content": ""}),
             ("bash", {"command": "git status"}),  # a command is never proven read-only
             ("bash", {"command": "cat src/a.py"}),
             ("mcp__srv__delete", {}),  # an MCP tool nobody marked read-only
             ("made_up_tool", {})]
    for tool, args in calls:
        for hint in (None, "allow"):
            decision = p.decide(tool, args, hint)
            assert decision.action == "deny", (tool, hint)
            assert "plan mode is read-only" in decision.reason


def test_plan_mode_lets_reads_run_and_asks_for_read_only_mcp_tools(ws: Path) -> None:
    p = plan_policy(ws)
    assert p.decide("read", {"path": "src/a.py"}).action == "allow"
    assert p.decide("grep", {"pattern": "x", "path": "src"}).action == "allow"
    assert p.decide("ls", {}).action == "allow"
    assert p.decide("todo_write", {"todos": []}).action == "allow"
    assert p.decide("exit_plan_mode", {"plan": "p"}).action == "allow"
    assert p.decide("read", {"path": "/etc/hostname"}).action == "ask"  # outside: as in ask mode
    read_only_mcp = type("Lookup", (tool_type("mcp__srv__lookup"),), {"read_only": True})
    assert p.decide("mcp__srv__lookup", {}, traits=read_only_mcp).action == "ask"  # judged as in ask mode
    assert tool_type("todo_write").read_only and tool_type("exit_plan_mode").read_only


async def test_a_project_cannot_start_a_plan_mode_user_in_a_looser_mode(tmp_path: Path, baton_home: Path) -> None:
    project = tmp_path / "project"
    (project / ".baton").mkdir(parents=True)
    (baton_home / "settings.json").write_text(json.dumps({"approval": "plan"}))
    for looser in ("ask", "auto", "full"):
        (project / ".baton" / "settings.json").write_text(json.dumps({"approval": looser}))
        for trusted in (False, True):
            assert load_settings(project_dir=project, trust_project=trusted).approval == "plan", (looser, trusted)
    (baton_home / "settings.json").write_text(json.dumps({"approval": "auto"}))
    (project / ".baton" / "settings.json").write_text(json.dumps({"approval": "plan"}))
    assert load_settings(project_dir=project).approval == "plan"  # stricter: applies at once
    session = await CodingSession.open(SessionOptions(cwd=project, model=faux_model("m"), session="new",
                                                      context_files=False))
    try:
        assert session.permissions.mode == "plan"
    finally:
        await session.close()


async def test_a_session_file_can_bring_back_plan_mode_but_never_loosen(tmp_path: Path, baton_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model = faux_model("m")
    (baton_home / "settings.json").write_text(json.dumps({"approval": "ask"}))
    for recorded, expected in (("full", "ask"), ("auto", "ask"), ("plan", "plan")):
        path = tmp_path / f"{recorded}.jsonl"
        store = SessionStore.create(path.parent, project, path=path)
        store.append_message(UserMessage(content="hello"))
        store.append_custom(MODE_ENTRY, {"mode": recorded})
        store.close()
        session = await CodingSession.open(SessionOptions(cwd=project, model=model, session=str(path),
                                                          context_files=False))
        try:
            assert session.permissions.mode == expected, recorded
        finally:
            await session.close()
    # --approval (the user, now) wins over the file
    session = await CodingSession.open(SessionOptions(cwd=project, model=model, session=str(path),
                                                      context_files=False, approval="auto"))
    try:
        assert session.permissions.mode == "auto"
    finally:
        await session.close()


_TOOLS = st.sampled_from([*TOOL_MODULES, "mcp__srv__write", "mcp__srv__lookup", "made_up"])
_RULES = st.lists(st.sampled_from(["edit", "write", "bash", "bash(*)", "edit(**)", "write(/**)", "mcp__srv__write",
                                   "mcp__srv", "made_up", "read"]), max_size=4)
_ARGS = st.fixed_dictionaries({}, optional={"path": st.sampled_from(["src/a.py", "new.txt", "/etc/passwd", "..",
                                                                     ".git/config"]),
                                            "command": st.sampled_from(["ls", "rm -rf .", "cat src/a.py"])})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=_TOOLS, allow=_RULES, ask=_RULES, hint=st.sampled_from([None, "allow", "ask"]), args=_ARGS)
def test_plan_mode_allows_only_tools_whose_traits_say_read_only(
    ws: Path, tool: str, allow: list[str], ask: list[str], hint: str | None, args: dict[str, str]
) -> None:
    # and tools that only start calls judged one by one (task: its subagent meets plan mode too)
    decision = plan_policy(ws, allow=allow, ask=ask).decide(tool, args, hint)
    traits = tool_type(tool)
    if not traits.read_only and not traits.delegates:
        assert decision.action == "deny" and "plan mode is read-only" in decision.reason


async def test_switching_to_a_session_recorded_in_plan_mode_comes_back_in_it(tmp_path: Path, baton_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (baton_home / "settings.json").write_text(json.dumps({"approval": "auto"}))
    path = tmp_path / "planned.jsonl"
    store = SessionStore.create(path.parent, project, path=path)
    store.append_message(UserMessage(content="hello"))
    store.append_custom(MODE_ENTRY, {"mode": "plan"})
    store.close()
    session = await CodingSession.open(SessionOptions(cwd=project, model=faux_model("m"), session="new",
                                                      context_files=False))
    try:
        assert session.permissions.mode == "auto"
        await session.switch_session(str(path))
        assert session.permissions.mode == "plan"
    finally:
        await session.close()

"""Escape attempts through the real agent, tools and sandbox against the replay server.

In ``auto`` every attempt is blocked or asked (and with nobody to ask, denied); in ``full`` the
protected places still ask. Nothing here is allowed to change anything outside the test's
directory: each test checks the file it tried to create is absent (and removes it if not)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.sessions.permissions import gate
from baton.tools.sandbox import probe
from tests.sessions.permissions.helpers import counting_server, run_call

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


@pytest.fixture(autouse=True, params=["fresh bwrap", "long-lived sandbox"])
def sandbox_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every escape is tried in both kinds of sandbox: a fresh bwrap (a session's first command)
    and the long-lived one (every later command)."""
    monkeypatch.setattr(gate, "FIRST_HOSTED_RUN", 2 if request.param == "fresh bwrap" else 1)
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".baton").mkdir(parents=True)
    (root / ".baton" / "settings.json").write_text('{"approval": "ask"}\n')
    (root / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "link").symlink_to(tmp_path / "outside")
    return root


@pytest.fixture
def stray() -> Iterator[list[Path]]:
    """Paths outside the workspace an escape would create; each must not exist afterwards."""
    paths: list[Path] = []
    yield paths
    leaked = [p for p in paths if p.exists()]
    for path in leaked:
        path.unlink()
    assert not leaked, f"escaped: {leaked}"


def assert_denied_for_approval(outcome, tool: str) -> None:  # type: ignore[no-untyped-def]
    assert outcome.is_error
    approvals = outcome.approvals
    assert approvals and approvals[-1]["decision"] == "deny", outcome.events
    assert approvals[-1]["toolName"] == tool
    decisions = [e for e in outcome.entries if e.get("customType") == "permission_decision"]
    assert decisions and decisions[-1]["data"]["decision"] == "deny"


@pytest.mark.parametrize("path_kind", ["dotdot", "absolute", "symlink"])
async def test_auto_write_outside_is_denied_without_an_approver(ws: Path, path_kind: str) -> None:
    target = ws.parent / "outside" / f"{path_kind}.txt"
    path = {"dotdot": "../outside/dotdot.txt", "absolute": str(target), "symlink": "link/symlink.txt"}[path_kind]
    outcome = await run_call(ws, "write", {"path": path, "content": "x"})
    assert_denied_for_approval(outcome, "write")
    assert "needs the user's approval" in outcome.result_text
    assert not target.exists()


@needs_sandbox
@pytest.mark.user_home  # a home under /tmp would vanish in the sandbox's private /tmp, not be read-only
@pytest.mark.parametrize(
    "template",
    ["touch /etc/{name}", "echo x > ~/{name}", "cd /tmp/.. && touch {name}"],
)
async def test_auto_bash_writes_outside_are_blocked_by_the_sandbox(ws: Path, template: str, stray: list[Path]) -> None:
    name = f"baton-escape-{uuid.uuid4().hex[:8]}"
    stray.extend([Path("/etc") / name, Path(os.path.expanduser("~")) / name, Path("/") / name])
    outcome = await run_call(ws, "bash", {"command": template.format(name=name)})
    assert outcome.is_error
    assert "Read-only file system" in outcome.result_text
    assert "sandbox blocked" in outcome.result_text
    assert_denied_for_approval(outcome, "bash")


@needs_sandbox
async def test_the_sandbox_cannot_be_remounted_writable(ws: Path, stray: list[Path]) -> None:
    # Run by root, bwrap kept root's capabilities, and the command could make / writable again.
    name = f"baton-escape-{uuid.uuid4().hex[:8]}"
    stray.append(Path("/etc") / name)
    outcome = await run_call(ws, "bash", {"command": f"mount -o remount,rw / 2>&1; touch /etc/{name}"})
    assert outcome.is_error
    assert "Read-only file system" in outcome.result_text


@needs_sandbox
async def test_auto_bash_has_no_network(ws: Path) -> None:
    with counting_server() as (port, seen):
        outcome = await run_call(ws, "bash", {"command": f"curl -sS --max-time 3 http://127.0.0.1:{port}/"})
    assert outcome.is_error
    assert seen == []
    assert "sandbox blocked" in outcome.result_text


@needs_sandbox
async def test_sandbox_denial_offers_a_rerun_outside_the_sandbox(ws: Path) -> None:
    from baton.sessions.permissions import ApprovalAnswer

    with counting_server() as (port, seen):
        outcome = await run_call(ws, "bash", {"command": f"curl -sS --max-time 3 http://127.0.0.1:{port}/"},
                                 answers=[ApprovalAnswer("allow_once")])
    assert [r.kind for r in outcome.asked] == ["unsandboxed"]
    assert len(seen) == 1 and seen[0].startswith(b"GET /")
    assert not outcome.is_error and outcome.result_text.strip() == "ok"


@needs_sandbox
async def test_sandbox_keeps_the_workspace_writable_and_baton_dir_read_only(ws: Path) -> None:
    outcome = await run_call(ws, "bash", {"command": "echo hi > made.txt && cat made.txt && echo $TMPDIR > /tmp/x$$"})
    assert not outcome.is_error, outcome.result_text
    assert (ws / "made.txt").read_text() == "hi\n"
    sneaky = await run_call(ws, "bash", {"command": "cd .b*n && echo '{}' > settings.json"})
    assert sneaky.is_error and "Read-only file system" in sneaky.result_text
    assert json.loads((ws / ".baton" / "settings.json").read_text()) == {"approval": "ask"}


@pytest.mark.parametrize("mode", ["auto", "full"])
async def test_protected_paths_ask_in_every_mode(ws: Path, mode: str) -> None:
    before = (ws / ".baton" / "settings.json").read_text()
    bash = await run_call(ws, "bash", {"command": "echo '{\"approval\": \"full\"}' > .baton/settings.json"},
                          approval=mode)
    assert_denied_for_approval(bash, "bash")
    assert (ws / ".baton" / "settings.json").read_text() == before
    hook = await run_call(ws, "edit", {"path": ".git/hooks/pre-commit", "oldText": "a", "newText": "b"},
                          approval=mode)
    assert_denied_for_approval(hook, "edit")
    write = await run_call(ws, "write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"},
                           approval=mode)
    assert_denied_for_approval(write, "write")
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


async def test_full_mode_runs_what_auto_asks(ws: Path) -> None:
    outcome = await run_call(ws, "write", {"path": "../outside/full.txt", "content": "x"}, approval="full")
    assert not outcome.is_error
    assert (ws.parent / "outside" / "full.txt").read_text() == "x"
    assert outcome.approvals == []  # no rule was checked and nobody was asked


async def test_deny_rule_wins_in_full_mode(ws: Path) -> None:
    outcome = await run_call(ws, "bash", {"command": "echo hi"}, approval="full",
                             settings={"permissions": {"deny": ["bash(echo:*)"]}})
    assert outcome.is_error and "bash(echo:*)" in outcome.result_text
    assert outcome.approvals[-1] == {"type": "tool_approval", "toolCallId": "call_1", "toolName": "bash",
                                     "decision": "deny", "reason": "denied by the rule bash(echo:*)",
                                     "rule": "bash(echo:*)", "decidedBy": "rule"}


@needs_sandbox
async def test_sandbox_keeps_baton_home_read_only_even_under_tmp(ws: Path, baton_home: Path) -> None:
    assert baton_home.parent == ws.parent
    outcome = await run_call(ws, "bash", {"command": "cd ../baton-h*e && echo x > settings.json.new"})
    assert outcome.is_error and "Read-only file system" in outcome.result_text
    assert not (baton_home / "settings.json.new").exists()


@needs_sandbox
async def test_a_protected_path_created_in_the_sandbox_is_reported(tmp_path: Path, baton_home: Path) -> None:
    ws = tmp_path / "fresh"
    ws.mkdir()
    outcome = await run_call(ws, "bash", {"command": "mkdir .ba''ton && echo '{}' > .ba''ton/settings.json"})
    assert "created .baton, which baton protects" in outcome.result_text


@needs_sandbox
async def test_the_command_runs_in_the_kind_of_sandbox_under_test(ws: Path, sandbox_kind: str) -> None:
    outcome = await run_call(ws, "bash", {"command": "tr '\\0' ' ' < /proc/$PPID/cmdline"})
    parent = outcome.result_text
    if sandbox_kind == "long-lived sandbox":
        assert "sandbox_server" in parent  # its compiled bytecode (sandbox_server.cpython-*.pyc) or its source
    else:
        assert parent.split()[0].endswith("bwrap") and "--die-with-parent" in parent


@needs_sandbox
async def test_allowing_a_command_is_not_letting_it_out_of_the_sandbox(ws: Path, stray: list[Path]) -> None:
    """In ``ask`` the user's "allow" answers "may it run?": it runs in the sandbox, and only the
    second question — which names what the command would write — can let it out."""
    from baton.sessions.permissions import ApprovalAnswer

    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    target = Path("/var/tmp") / f"baton-escape-{uuid.uuid4().hex[:8]}"
    stray.append(target)
    outcome = await run_call(ws, "bash", {"command": f"touch {target}"}, approval="ask",
                             answers=[ApprovalAnswer("allow_once"), ApprovalAnswer("deny")])
    assert [r.kind for r in outcome.asked] == ["tool", "unsandboxed"]
    second = outcome.asked[1]
    assert second.reason == f"it would write {target}, which the sandbox keeps read-only"
    assert second.proposed_rule is None  # a rule never lets a command out of the sandbox
    assert outcome.is_error and f"the sandbox blocked this command: it would write {target}" in outcome.result_text
    assert not target.exists()

"""The policy table: modes, rules, protected paths, hook hints; paths judged by their real target."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.policy import Policy
from baton.sessions.permissions.rules import RuleSet


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out-link").symlink_to(tmp_path / "outside")
    return root


def policy(ws: Path, mode: str = "auto", sandbox: bool = True, **rules: list[str]) -> Policy:
    home = ws.parent / "baton-home"
    return Policy(Workspace.for_dir(str(ws), str(home)), RuleSet.parse(**rules), mode,  # type: ignore[arg-type]
                  sandbox_available=sandbox)


def action(p: Policy, tool: str, **args: str) -> str:
    return p.decide(tool, args).action


def test_auto_mode_table(ws: Path) -> None:
    p = policy(ws)
    assert action(p, "read", path="src/a.py") == "allow"
    assert action(p, "edit", path="src/a.py") == "allow"
    assert action(p, "write", path=str(ws / "new.txt")) == "allow"
    assert action(p, "write", path="../x") == "ask"
    assert action(p, "write", path="/etc/x") == "ask"
    assert action(p, "write", path="out-link/x") == "ask"  # a symlink pointing out of the workspace
    assert action(p, "write", path="src/../../x") == "ask"
    assert action(p, "read", path="/etc/passwd") == "ask"
    assert action(p, "ls") == "allow"
    bash = p.decide("bash", {"command": "touch /etc/x"})
    assert (bash.action, bash.sandbox) == ("allow", True)
    assert action(p, "mcp__srv__tool") == "ask"


def test_auto_without_a_sandbox_asks_for_bash(ws: Path) -> None:
    p = policy(ws, sandbox=False)
    decision = p.decide("bash", {"command": "ls"})
    assert decision.action == "ask" and "sandbox" in decision.reason


def test_ask_mode_asks_for_everything_but_reads_inside(ws: Path) -> None:
    p = policy(ws, "ask")
    assert action(p, "read", path="src/a.py") == "allow"
    assert action(p, "grep", path=".") == "allow"
    for tool, args in (("edit", {"path": "src/a.py"}), ("write", {"path": "a"}), ("bash", {"command": "ls"}),
                       ("mcp__s__t", {})):
        assert action(p, tool, **args) == "ask"


def test_full_mode_runs_everything_but_protected_paths(ws: Path) -> None:
    p = policy(ws, "full")
    assert action(p, "write", path="/etc/x") == "allow"
    assert p.decide("bash", {"command": "rm -rf /tmp/x"}).sandbox is False
    assert action(p, "edit", path=".git/hooks/pre-commit") == "ask"
    assert action(p, "write", path=".baton/settings.json") == "ask"
    assert action(p, "write", path=".git/config") == "ask"
    assert action(p, "write", path=".mcp.json") == "ask"
    assert action(p, "write", path=str(ws.parent / "baton-home" / "settings.json")) == "ask"
    assert action(p, "bash", command="echo '{}' > .baton/settings.json") == "ask"
    assert action(p, "read", path=".baton/settings.json") == "allow"


def test_deny_wins_over_every_mode_and_allow(ws: Path) -> None:
    p = policy(ws, "full", deny=["bash(rm:*)", "read(~/.ssh/**)", "edit(secrets/**)"], allow=["bash(rm -rf build)"])
    assert action(p, "bash", command="rm -rf build") == "deny"
    assert action(p, "bash", command="ls && rm x") == "deny"
    assert action(p, "read", path="~/.ssh/id_rsa") == "deny"
    assert action(p, "write", path="secrets/key") == "deny"  # edit rules cover write
    assert p.decide("bash", {"command": "rm x"}, hint="allow").action == "deny"


def test_allow_and_ask_rules_and_hints(ws: Path) -> None:
    p = policy(ws, "ask", allow=["bash(npm run test:*)", "edit(src/**)", "mcp__srv__read"], ask=["bash(git push:*)"])
    assert action(p, "bash", command="npm run test:unit") == "allow"
    assert action(p, "bash", command="npm run test && curl x | sh") == "ask"
    assert action(p, "edit", path="src/a.py") == "allow"
    assert action(p, "edit", path="other.py") == "ask"
    assert action(p, "mcp__srv__read") == "allow"
    assert action(p, "mcp__srv__write") == "ask"
    auto = policy(ws, "auto", ask=["bash(git push:*)"])
    assert action(auto, "bash", command="git push origin") == "ask"
    assert auto.decide("bash", {"command": "ls"}, hint="ask").action == "ask"
    assert auto.decide("write", {"path": "/etc/x"}, hint="allow").action == "allow"
    assert auto.decide("write", {"path": ".baton/x"}, hint="allow").action == "ask"  # protected still wins


def test_rule_paths_resolve_dotdot_and_symlinks(ws: Path) -> None:
    p = policy(ws, "ask", allow=["edit(src/**)"])
    assert action(p, "edit", path="src/../src/a.py") == "allow"
    assert action(p, "edit", path="src/../other.py") == "ask"
    (ws / "src" / "sneaky").symlink_to(ws.parent / "outside")
    assert action(p, "edit", path="src/sneaky/x") == "ask"
    assert action(p, "edit", path="@src/a.py") == "allow"


def test_home_and_case(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = ws.parent / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    p = policy(ws, "full", deny=["Read(~/.ssh/**)"])
    assert action(p, "read", path="~/.ssh/id_rsa") == "deny"
    assert action(p, "read", path=str(home / ".ssh" / "id_rsa")) == "deny"
    assert action(p, "read", path="~/.SSH/id_rsa") == "allow"  # paths are case-sensitive here


def test_proposed_rules_are_narrow(ws: Path) -> None:
    p = policy(ws, "ask")
    assert p.decide("bash", {"command": "npm   test"}).proposed_rule == "bash(npm test)"
    assert p.decide("edit", {"path": "src/a.py"}).proposed_rule == "edit(src/a.py)"
    assert p.decide("read", {"path": "/etc/passwd"}).proposed_rule == "read(/etc/**)"
    assert p.decide("mcp__s__t", {}).proposed_rule == "mcp__s__t"


@settings(deadline=None, max_examples=60)
@given(st.lists(st.sampled_from(["a", "b", "link", "..", "missing", "dangling"]), min_size=1, max_size=6))
def test_fast_realpath_agrees_with_realpath(parts: list[str]) -> None:
    import os
    import tempfile

    from baton.sessions.permissions.paths import fast_realpath

    with tempfile.TemporaryDirectory() as raw:
        root = os.path.realpath(raw)
        os.makedirs(os.path.join(root, "a", "b", "a", "b"))
        os.symlink(os.path.join(root, "a", "b"), os.path.join(root, "link"))
        os.symlink(os.path.join(root, "a", "b", "link"), os.path.join(root, "a", "b", "a", "link"))
        os.symlink(os.path.join(root, "nowhere", "x"), os.path.join(root, "dangling"))
        os.symlink(os.path.join(root, "nowhere", "x"), os.path.join(root, "a", "dangling"))
        path = os.path.normpath(os.path.join(root, *parts))
        assert fast_realpath(path) == os.path.realpath(path)

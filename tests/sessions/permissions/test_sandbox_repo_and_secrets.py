"""The repository's control files and the user's secrets, against a hostile model: git must not
run the model's code outside the sandbox (its hooks, ``core.fsmonitor``, a swapped ``.git``), and
no stored key or credential store is readable, by a sandboxed command or, unasked, by a file tool.

Protected names in commands are spelled so that no text check sees them (``.g''it``), as a model
would: what stops the attempt must be the sandbox."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from baton.sessions.permissions import ApprovalAnswer
from baton.sessions.settings import load_settings
from baton.tools.grep import GrepTool
from baton.tools.sandbox import probe
from tests.sessions.permissions.helpers import run_call

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")
both_kinds = pytest.mark.usefixtures("sandbox_kind")
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "protocol.file.allow=always"]
SECRET = "sk-stored-7731-never-in-the-sandbox"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "init")
    return root


def assert_refused(text: str) -> None:
    assert "Read-only file system" in text or "Device or resource busy" in text, text


# ------------------------------------------------------------------ git


@needs_sandbox
@both_kinds
async def test_the_repository_cannot_be_swapped_or_rewired(repo: Path, outside_tmp: Path) -> None:
    stray = outside_tmp / "ran-by-git.txt"
    hook = f"printf '#!/bin/sh\\ntouch {stray}\\n'"
    attempts = [
        # move .git aside and make a new one with a hook
        f"mv .git .git-aside && mkdir -p .g''it/ho''oks && {hook} > .g''it/ho''oks/pre-commit && "
        "chmod +x .g''it/ho''oks/pre-commit",
        # point the repository at a folder whose config runs a command
        f"mkdir -p {outside_tmp}/evil && echo {outside_tmp}/evil > .g''it/commondir",
        f"printf '[core]\\n\\tfsmonitor = touch {stray}\\n' >> .g''it/con''fig",
        f"{hook} > .g''it/ho''oks/post-commit",
        "rm -rf .g''it/objects",
    ]
    for command in attempts:
        outcome = await run_call(repo, "bash", {"command": command})
        assert outcome.is_error
        assert_refused(outcome.result_text)
    assert not (repo / ".git-aside").exists() and not (repo / ".git" / "commondir").exists()
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "the user's next commit")
    assert not stray.exists(), "the user's git ran the model's code"
    assert git(repo, "log", "--oneline").count("\n") == 2


@needs_sandbox
@both_kinds
async def test_a_worktree_and_a_submodule_keep_what_their_git_file_points_to(tmp_path: Path, repo: Path) -> None:
    # The worktree's git folders live in the main repository (here in /tmp, which the sandbox
    # replaces with its own): git must still work, and none of it may be written.
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    outcome = await run_call(worktree, "bash", {"command": "git status --short --branch && git log --oneline"})
    assert not outcome.is_error and "init" in outcome.result_text, outcome.result_text
    for command in ['echo x > "$(git rev-parse --git-common-dir)/ho""oks/pre-commit"',
                    'echo x > "$(git rev-parse --git-dir)/HEAD"',
                    "echo 'gitdir: /var/tmp/elsewhere' > .g''it"]:
        outcome = await run_call(worktree, "bash", {"command": command})
        assert_refused(outcome.result_text)
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert (worktree / ".git").read_text().startswith(f"gitdir: {repo}")
    # A submodule's working tree holds a .git file pointing into the parent's .git/modules.
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q")
    (library / "lib.txt").write_text("lib\n")
    git(library, "add", "lib.txt")
    git(library, "commit", "-qm", "lib")
    git(repo, "submodule", "add", "-q", str(library), "sub")
    pointer = (repo / "sub" / ".git").read_text()
    outcome = await run_call(repo, "bash", {"command": "echo 'gitdir: /var/tmp/elsewhere' > sub/.g''it"})
    assert_refused(outcome.result_text)
    assert (repo / "sub" / ".git").read_text() == pointer


@needs_sandbox
@both_kinds
async def test_a_workspace_holding_several_repositories_protects_each(tmp_path: Path, baton_home: Path) -> None:
    ws = tmp_path / "src"
    for name in ("app", "lib"):
        (ws / name).mkdir(parents=True)
        git(ws / name, "init", "-q")
    outcome = await run_call(ws, "bash", {"command": "echo x > app/.g''it/ho''oks/pre-commit; "
                                                     "mv lib/.git lib/.git-aside"})
    assert outcome.result_text.count("Read-only file system") + outcome.result_text.count("busy") == 2
    assert not (ws / "app" / ".git" / "hooks" / "pre-commit").exists() and (ws / "lib" / ".git").is_dir()


@needs_sandbox
@both_kinds
async def test_a_git_folder_made_in_a_workspace_without_one_is_reported(tmp_path: Path, baton_home: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    outcome = await run_call(ws, "bash", {"command": "mkdir .g''it && echo /var/tmp/elsewhere > .g''it/commondir"})
    assert "created .git, which baton protects" in outcome.result_text


@needs_sandbox
@both_kinds
async def test_claude_and_mcp_settings_are_read_only(repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n")
    (repo / ".mcp.json").write_text("{}\n")
    for command in ["""echo '{"hooks": {}}' > .cl''aude/settings.json""", "mkdir .cl''aude/commands",
                    """echo '{"mcpServers": {}}' > .mc''p.json"""]:
        outcome = await run_call(repo, "bash", {"command": command})
        assert_refused(outcome.result_text)
    assert (repo / ".claude" / "settings.json").read_text() == "{}\n"
    assert (repo / ".mcp.json").read_text() == "{}\n"


@needs_sandbox
@both_kinds
async def test_a_commit_by_the_model_asks_before_it_runs_outside_the_sandbox(repo: Path) -> None:
    (repo / "b.txt").write_text("b\n")
    command = "git add b.txt && git -c user.email=m@example.com -c user.name=m commit -qm 'by the model'"
    outcome = await run_call(repo, "bash", {"command": command}, answers=[ApprovalAnswer("deny")])
    assert [request.kind for request in outcome.asked] == ["unsandboxed"]
    assert "by the model" not in git(repo, "log", "--oneline")


# ------------------------------------------------------------------ secrets


@pytest.fixture
def user_home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder outside /tmp (the sandbox's /tmp is its own anyway) holding credentials and a
    baton home reached through a symlink, with the workspace ``~/project``."""
    home = outside_tmp / "home"
    for path, text in {".ssh/id_rsa": f"-----BEGIN KEY {SECRET}\n", ".aws/credentials": f"key={SECRET}\n",
                       ".netrc": f"password {SECRET}\n", ".docker/config.json": json.dumps({"auth": SECRET}),
                       ".npmrc": f"//registry/:_authToken={SECRET}\n", "notes/plan.txt": "the plan\n",
                       ".baton-real/models.json": json.dumps({"providers": {"x": {"apiKey": SECRET}}}),
                       ".baton-real/sessions/--other-project--/s.jsonl": f'{{"secret": "{SECRET}"}}\n',
                       ".baton-real/tmp/baton-bash-1.log": "full output of a command\n"}.items():
        (home / path).parent.mkdir(parents=True, exist_ok=True)
        (home / path).write_text(text)
    (home / ".baton").symlink_to(home / ".baton-real")
    (home / "project").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BATON_HOME", str(home / ".baton"))
    return home


@needs_sandbox
@both_kinds
async def test_stored_keys_and_credential_stores_are_not_in_the_sandbox(user_home: Path) -> None:
    command = ("cat ~/.bat''on/models.json ~/.bat''on-real/models.json ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc "
               "~/.docker/config.json ~/.npmrc 2>&1; ls -A ~/.bat''on/sessions ~/.bat''on-real/sessions; "
               "grep -r sk- ~ 2>/dev/null; cat ~/.bat''on/tmp/baton-bash-1.log; echo done")
    outcome = await run_call(user_home / "project", "bash", {"command": command})
    assert SECRET not in outcome.result_text
    assert "--other-project--" not in outcome.result_text, "another project's sessions are visible"
    assert "full output of a command" in outcome.result_text, "bash's full-output files stay readable"
    assert outcome.result_text.rstrip().endswith("done")
    write = await run_call(user_home / "project", "bash",
                           {"command": "echo ssh-ed25519 AAAA >> ~/.ssh/authorized_keys"})
    assert_refused(write.result_text)
    assert not (user_home / ".ssh" / "authorized_keys").exists()


@needs_sandbox
@both_kinds
async def test_the_hidden_list_is_a_setting(user_home: Path) -> None:
    settings = {"sandbox": {"hiddenPaths": ["~/notes", "!~/.npmrc"]}}
    outcome = await run_call(user_home / "project", "bash", {"command": "cat ~/notes/plan.txt ~/.npmrc 2>&1"},
                             settings=settings)
    assert "the plan" not in outcome.result_text, "an added place is hidden"
    # visible in the sandbox (the key itself then meets the second wall, the redactor)
    assert "//registry/:_authToken=" in outcome.result_text, "a default the user's settings took away is not"
    assert SECRET not in outcome.result_text


def test_a_project_may_add_hidden_places_but_never_take_one_away(tmp_path: Path, user_home: Path) -> None:
    from baton.sessions.permissions.setup import hidden_places

    own = tmp_path / "settings.json"
    own.write_text(json.dumps({"sandbox": {"hiddenPaths": ["!~/.npmrc"]}}))
    project = tmp_path / "cloned"
    (project / ".baton").mkdir(parents=True)
    (project / ".baton" / "settings.json").write_text(json.dumps(
        {"sandbox": {"hiddenPaths": ["!~/.ssh", "!~/.baton", "~/notes"]}}))
    hidden, problems = hidden_places(load_settings(own, project_dir=project))
    assert hidden.match(str(user_home / ".ssh" / "id_rsa")) is not None
    assert hidden.match(str(user_home / ".baton-real" / "models.json")) is not None
    assert hidden.match(str(user_home / "notes" / "plan.txt")) is not None
    assert hidden.match(str(user_home / ".npmrc")) is None, "the user's own settings unhide"
    assert len(problems) == 2 and "only your own settings can unhide" in problems[0]


@pytest.mark.parametrize(("tool", "args", "approval", "rules"), [
    ("read", {"path": "~/.ssh/id_rsa"}, "full", []),
    ("read", {"path": "~/.aws/credentials"}, "auto", ["read(~/**)"]),
    ("read", {"path": "~/.baton-real/models.json"}, "full", []),
    ("read", {"path": "~/.baton/sessions/--other-project--/s.jsonl"}, "full", ["read"]),
    ("grep", {"pattern": "sk-", "path": "~"}, "full", []),
    ("edit", {"path": "~/.ssh/id_rsa", "oldText": "KEY", "newText": "x"}, "full", ["edit"]),
])
async def test_file_tools_never_touch_hidden_places_unasked(user_home: Path, tool: str, args: dict[str, str],
                                                             approval: str, rules: list[str]) -> None:
    outcome = await run_call(user_home / "project", tool, args, approval=approval,
                             settings={"permissions": {"allow": rules}}, extra_tools=[GrepTool(str(user_home))])
    assert outcome.is_error and "needs the user's approval" in outcome.result_text, outcome.result_text
    assert SECRET not in outcome.result_text
    assert (user_home / ".ssh" / "id_rsa").read_text().startswith("-----BEGIN KEY")


async def test_bashs_full_output_stays_readable_by_the_read_tool(user_home: Path) -> None:
    outcome = await run_call(user_home / "project", "read", {"path": "~/.baton/tmp/baton-bash-1.log"},
                             approval="full")
    assert not outcome.is_error and "full output of a command" in outcome.result_text


def test_hidden_places_follow_the_real_path(user_home: Path) -> None:
    from baton.sessions.permissions.setup import hidden_places

    hidden, _ = hidden_places(load_settings(user_home / "none.json"))
    assert hidden.match(os.path.realpath(user_home / ".baton" / "models.json")) is not None
    assert hidden.match(str(user_home / ".baton" / "tmp" / "x.log")) is None
    assert hidden.below(str(user_home)) is not None and hidden.below(str(user_home / "project")) is None

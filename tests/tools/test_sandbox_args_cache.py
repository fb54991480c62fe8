"""bwrap's arguments are kept between commands and worked out again only when the file system
answers they came from change: every change a command (or the user) can make between two commands
must still reach the next command's arguments."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.tools.hidden_paths import HiddenPaths
from baton.tools.path_facts import PathFacts, RecordedFacts
from baton.tools.sandbox import Sandbox, probe
from baton.tools.sandbox_host import SandboxHosts
from tests.tools.hosted_commands import run


def fresh_args(sandbox: Sandbox) -> list[str]:
    """The arguments worked out from scratch (nothing kept)."""
    return sandbox._bwrap_args(PathFacts())


NAMES = ("a", "lib/inner", "lib", "c/d/e")

Change = tuple[str, str]


def apply(root: Path, hidden: Path, change: Change) -> None:
    """One change a command or the user could make between two commands."""
    kind, name = change
    target = root / name
    if target.is_symlink() or target.is_file():
        target.unlink()
    if kind == "git-dir":
        (target / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    elif kind == "git-file":
        target.mkdir(parents=True, exist_ok=True)
        pointer = target / ".git"
        if pointer.is_dir():
            shutil.rmtree(pointer)
        (root / "gitdirs" / name).mkdir(parents=True, exist_ok=True)
        pointer.write_text(f"gitdir: {root / 'gitdirs' / name}\n")
    elif kind == "gitmodules":  # rewritten in place: the folder's entries do not change
        with open(root / ".gitmodules", "r+") as handle:
            handle.truncate(0)
            handle.write(f'[submodule "x"]\n\tpath = {name}\n')
    elif kind == "remove":
        shutil.rmtree(target, ignore_errors=True)
    elif kind == "symlink":
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(root / "gitdirs")
    elif kind == "rename":
        other = root / f"{name.replace('/', '-')}-moved"
        if target.exists() and not other.exists():
            target.rename(other)
    elif kind == "settings":
        target.mkdir(parents=True, exist_ok=True)
        (root / ".claude").mkdir(exist_ok=True)
    elif kind == "hidden":
        (hidden / name.replace("/", "-")).mkdir(parents=True, exist_ok=True)
    elif kind == "hidden-gone":
        shutil.rmtree(hidden / name.replace("/", "-"), ignore_errors=True)


changes = st.lists(st.tuples(st.sampled_from(["git-dir", "git-file", "gitmodules", "remove", "symlink", "rename",
                                               "settings", "hidden", "hidden-gone"]), st.sampled_from(NAMES)),
                   max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=changes)
def test_kept_arguments_always_equal_arguments_worked_out_afresh(tmp_path_factory: pytest.TempPathFactory,
                                                                 changes: list[Change]) -> None:
    base = tmp_path_factory.mktemp("ws")
    root = base / "ws"
    (root / ".git").mkdir(parents=True)  # a repository: its .gitmodules is read
    (root / ".gitmodules").write_text("")
    hidden = base / "home"
    hidden.mkdir()
    places = tuple(str(hidden / n.replace("/", "-")) for n in NAMES)
    sandbox = Sandbox(str(root), hidden=HiddenPaths(places))
    assert sandbox.bwrap_args() == fresh_args(sandbox)
    for change in changes:
        with contextlib.suppress(OSError):  # a change the tree does not allow now (through a symlink...)
            apply(root, hidden, change)
        assert sandbox.bwrap_args() == fresh_args(sandbox), change


def test_nothing_changed_means_nothing_is_worked_out_again(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sandbox = Sandbox(str(tmp_path))
    first = sandbox.bwrap_args()
    kept = sandbox._worked_out
    assert sandbox.bwrap_args() == first and sandbox._worked_out is kept
    (tmp_path / "new.txt").write_text("a file the arguments do not depend on")
    assert sandbox.bwrap_args() == first and sandbox._worked_out is kept
    (tmp_path / ".mcp.json").write_text("{}")
    assert f"{tmp_path}/.mcp.json" in sandbox.bwrap_args() and sandbox._worked_out is not kept


def test_the_settings_and_environment_are_part_of_what_is_kept(tmp_path: Path, outside_tmp: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = Sandbox(str(tmp_path))
    assert "--unshare-net" in sandbox.bwrap_args()
    sandbox.network = True
    assert "--unshare-net" not in sandbox.bwrap_args()
    extra = tmp_path.parent / f"{tmp_path.name}-extra"
    extra.mkdir()
    sandbox.extra_writable.append(str(extra))
    assert str(extra) in sandbox.bwrap_args()
    monkeypatch.setenv("TMPDIR", str(outside_tmp))  # a temp dir other than /tmp gets a private tmpfs
    args = sandbox.bwrap_args()
    assert args[args.index(str(outside_tmp)) - 1] == "--tmpfs"
    assert sandbox.bwrap_args() == fresh_args(sandbox)


def test_recorded_facts_notice_a_file_rewritten_in_place(tmp_path: Path) -> None:
    pointer = tmp_path / ".git"
    pointer.write_text("gitdir: /one\n")
    facts = RecordedFacts()
    assert facts.pointer_text(str(pointer)) == "gitdir: /one\n"
    assert facts.unchanged()
    with open(pointer, "r+") as handle:  # same inode, same size, same folder entries
        handle.write("gitdir: /two\n")
    os.utime(pointer, ns=(0, 0))
    assert not facts.unchanged()


# ------------------------------------------------------------------ the real sandbox

needs_bwrap = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")


@needs_bwrap
async def test_a_submodule_named_by_gitmodules_rewritten_in_place_is_protected_at_the_next_command(
        hosts: SandboxHosts, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".gitmodules").write_text("")
    sandbox = Sandbox(str(ws))
    # The command makes a repository two levels down (no folder scan finds it) and runs again, so
    # the arguments without it are the ones kept; then it names it in .gitmodules, in place.
    await run(hosts, sandbox, "mkdir -p lib/inner/.git/hooks")
    await run(hosts, sandbox, "true")
    await run(hosts, sandbox, "printf '[submodule \"x\"]\\n\\tpath = lib/inner\\n' 1<> .gitmodules")
    _, out = await run(hosts, sandbox, "echo x > lib/inner/.git/hooks/post-checkout && echo written")
    assert "Read-only file system" in out and "written" not in out
    assert not (ws / "lib/inner/.git/hooks/post-checkout").exists()


@needs_bwrap
async def test_a_repository_moved_to_another_name_is_protected_at_the_next_command(hosts: SandboxHosts,
                                                                                 tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "one" / ".git" / "hooks").mkdir(parents=True)
    sandbox = Sandbox(str(ws))
    _, out = await run(hosts, sandbox, "echo x > one/.git/hooks/pre-commit")
    assert "Read-only file system" in out
    await run(hosts, sandbox, "true")
    # The host cannot move a read-only mount point; the user (or a background job) can.
    (ws / "one").rename(ws / "two")
    _, out = await run(hosts, sandbox, "echo x > two/.git/hooks/pre-commit && echo written")
    assert "Read-only file system" in out and "written" not in out


@needs_bwrap
async def test_a_credential_folder_made_on_the_host_between_commands_is_hidden(hosts: SandboxHosts, tmp_path: Path,
                                                                               outside_tmp: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = outside_tmp / ".aws"
    sandbox = Sandbox(str(ws), hidden=HiddenPaths((str(secret),)))
    await run(hosts, sandbox, "true")
    await run(hosts, sandbox, "true")
    secret.mkdir()
    (secret / "credentials").write_text("the-key\n")
    _, out = await run(hosts, sandbox, f"cat {secret}/credentials 2>&1")
    assert "the-key" not in out

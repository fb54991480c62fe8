"""The checkpoint store: a shadow git repository per workspace, driven through the real git."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from baton.sessions.checkpoints import git as git_module
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.store import CheckpointStore
from tests.process_helpers import wait_until

GIT = git_module.find_git()
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` except .git: bytes and permission bits (symlinks: target)."""
    state: dict[str, tuple[bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                state[rel] = (os.readlink(full).encode(), -1)
            else:
                state[rel] = (full.read_bytes(), full.stat().st_mode & 0o777)
    return state


def make_store(ws: Path, home: Path, **kwargs: object) -> CheckpointStore:
    assert GIT is not None
    return CheckpointStore(ws, git=GIT, home=home, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "b.txt").write_bytes(b"\x00\x01binary\r\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "gone.txt").write_text("will be deleted\n")
    os.symlink("src/a.py", root / "link")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_restore_brings_back_bytes_modes_and_deleted_files_and_removes_new_ones(ws: Path, home: Path) -> None:
    store = make_store(ws, home)
    before = tree_state(ws)
    first = store.snapshot()
    (ws / "src" / "a.py").write_text("print('changed')\n")
    (ws / "run.sh").chmod(0o644)
    (ws / "gone.txt").unlink()
    (ws / "link").unlink()
    os.symlink("b.txt", ws / "link")
    (ws / "new" / "deep").mkdir(parents=True)
    (ws / "new" / "deep" / "created.txt").write_text("new\n")
    current = store.snapshot(first.commit)
    assert current.changes.added == ["new/deep/created.txt"]
    assert current.changes.deleted == ["gone.txt"]
    assert current.changes.modified == ["link", "run.sh", "src/a.py"]

    outcome = store.restore(first.commit, current.commit)

    assert tree_state(ws) == before
    assert not (ws / "new").exists()  # directories emptied by the restore go too
    assert outcome.removed == ["new/deep/created.txt"]
    assert outcome.restored == ["gone.txt", "link", "run.sh", "src/a.py"]
    # The index follows the restore: the next snapshot of the unchanged tree is the checkpoint.
    again = store.snapshot(first.commit)
    assert again.commit == first.commit and not again.changes


def test_unchanged_workspace_costs_three_quick_git_calls(ws: Path, home: Path) -> None:
    store = make_store(ws, home)
    first = store.snapshot()
    calls = git_module.invocations
    second = store.snapshot(first.commit)
    # permission changes (diff-files), status, empty folders; no commit
    assert git_module.invocations - calls == 3
    assert second.commit == first.commit and not second.changes


def test_ignored_files_are_neither_snapshotted_nor_touched(ws: Path, home: Path) -> None:
    subprocess.run([GIT or "git", "init", "-q", str(ws)], check=True)
    (ws / ".gitignore").write_text("*.log\n")
    (ws / ".git" / "info" / "exclude").write_text("secret.env\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("x\n")
    (ws / "app.log").write_text("log 1\n")
    (ws / "secret.env").write_text("KEY=1\n")
    store = make_store(ws, home)
    first = store.snapshot()
    (ws / "app.log").write_text("log 2\n")
    (ws / "secret.env").write_text("KEY=2\n")
    (ws / "node_modules" / "pkg" / "index.js").write_text("y\n")
    (ws / "src" / "a.py").write_text("edited\n")
    current = store.snapshot(first.commit)
    assert current.changes.files == ["src/a.py"]
    store.restore(first.commit, current.commit)
    assert (ws / "app.log").read_text() == "log 2\n"
    assert (ws / "secret.env").read_text() == "KEY=2\n"
    assert (ws / "node_modules" / "pkg" / "index.js").read_text() == "y\n"
    assert (ws / "src" / "a.py").read_text() == "print('a')\n"


def test_large_file_is_skipped_reported_and_left_alone(ws: Path, home: Path) -> None:
    store = make_store(ws, home)
    first = store.snapshot()
    big = ws / "data.bin"
    with open(big, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    (ws / "src" / "a.py").write_text("edited\n")
    current = store.snapshot(first.commit)
    assert current.skipped == ["data.bin"]
    assert current.changes.files == ["src/a.py"]
    outcome = store.restore(first.commit, current.commit)
    assert big.stat().st_size == 50 * 1024 * 1024
    assert "data.bin" not in outcome.removed


def test_users_repository_is_byte_identical_with_a_dirty_index(ws: Path, home: Path) -> None:
    g = GIT or "git"
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x", "GIT_COMMITTER_NAME": "u",
           "GIT_COMMITTER_EMAIL": "u@x"}
    subprocess.run([g, "init", "-q"], cwd=ws, check=True)
    subprocess.run([g, "add", "-A"], cwd=ws, check=True)
    subprocess.run([g, "commit", "-qm", "init"], cwd=ws, check=True, env=env)
    (ws / "src" / "a.py").write_text("staged\n")
    subprocess.run([g, "add", "src/a.py"], cwd=ws, check=True)
    (ws / "src" / "a.py").write_text("staged then edited\n")
    (ws / "untracked.txt").write_text("u\n")

    def repo_bytes() -> dict[str, str]:
        out = {}
        for dirpath, _, filenames in os.walk(ws / ".git"):
            for name in filenames:
                full = Path(dirpath) / name
                out[str(full.relative_to(ws))] = hashlib.sha256(full.read_bytes()).hexdigest()
        return out

    before = repo_bytes()
    store = make_store(ws, home)
    first = store.snapshot()
    (ws / "src" / "a.py").write_text("agent edit\n")
    (ws / "agent-new.txt").write_text("n\n")
    current = store.snapshot(first.commit)
    store.restore(first.commit, current.commit)
    assert repo_bytes() == before
    assert (ws / "src" / "a.py").read_text() == "staged then edited\n"
    assert not (ws / "agent-new.txt").exists()


def _store_script(ws: Path, home: Path, body: str) -> str:
    return textwrap.dedent(f"""
        from pathlib import Path
        from baton.sessions.checkpoints.store import CheckpointStore
        store = CheckpointStore(Path({str(ws)!r}), git={GIT!r}, home=Path({str(home)!r}))
    """) + textwrap.dedent(body)


def _fsck(store: CheckpointStore) -> None:
    store.git.run("fsck", "--no-progress", "--strict")


def test_concurrent_processes_do_not_corrupt_the_shadow_repository(ws: Path, home: Path) -> None:
    for i in range(200):
        (ws / "src" / f"f{i}.txt").write_text(f"{i}\n")
    script = _store_script(ws, home, """
        import sys
        prev = None
        for n in range(5):
            Path(sys.argv[1]).write_text(str(n))
            prev = store.snapshot(prev).commit
        print(prev)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(ws / f"p{i}.txt")], stdout=subprocess.PIPE)
             for i in range(3)]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    store = make_store(ws, home)
    _fsck(store)
    final = store.snapshot()
    assert {"p0.txt", "p1.txt", "p2.txt"} <= set(store.git.run("ls-tree", "-r", "--name-only", final.commit)
                                                  .decode().split())


def test_killed_during_a_snapshot_the_next_start_recovers(ws: Path, home: Path) -> None:
    for i in range(3000):
        (ws / "src" / f"f{i}.txt").write_text(f"{i}\n")
    script = _store_script(ws, home, """
        import sys
        n = 0
        while True:
            n += 1
            for i in range(0, 3000, 7):
                Path(sys.argv[1], f"src/f{i}.txt").write_text(f"{n}-{i}")
            store.snapshot()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script, str(ws)])
    try:
        wait_until((home / "checkpoints").exists, 30, interval=0.01)
        time.sleep(0.6)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = make_store(ws, home)
    (store.git_dir / "index.lock").write_text("stale")  # as a kill inside git leaves it
    snap = store.snapshot()
    _fsck(store)
    assert store.git.run("show", f"{snap.commit}:src/f5.txt").decode() == (ws / "src" / "f5.txt").read_text()


def test_killed_during_a_restore_the_next_start_finishes_it(ws: Path, home: Path) -> None:
    for i in range(3000):
        (ws / "src" / f"f{i}.txt").write_text(f"original {i}\n")
    store = make_store(ws, home)
    first = store.snapshot()
    before = tree_state(ws)
    killed_mid_restore = False
    for attempt in range(5):
        for i in range(3000):
            (ws / "src" / f"f{i}.txt").write_text(f"changed {attempt} {i}\n")
        current = store.snapshot(first.commit)
        script = _store_script(ws, home, f"store.restore({first.commit!r}, {current.commit!r})")
        proc = subprocess.Popen([sys.executable, "-c", script])
        journal = store.root / "journal.json"
        while proc.poll() is None and not journal.exists():
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if journal.exists():
            killed_mid_restore = True
            break
    assert killed_mid_restore, "the restore always finished before it could be killed"
    with store.locked():  # any next use of the store, e.g. the next start-up, finishes it
        pass
    assert not (store.root / "journal.json").exists()
    assert tree_state(ws) == before
    _fsck(store)
    assert store.snapshot(first.commit).commit == first.commit


def test_lock_timeout_is_a_clear_error(ws: Path, home: Path) -> None:
    store = make_store(ws, home)
    other = make_store(ws, home)
    with store.locked(), pytest.raises(CheckpointError, match="held the checkpoint lock"), other.locked(timeout=0.1):
        pass


def test_prune_forgets_old_snapshots(ws: Path, home: Path) -> None:
    store = make_store(ws, home)
    first = store.snapshot()
    assert store.prune(keep_days=30) == 0
    assert store.has_commit(first.commit)
    (ws / "b.txt").write_text("x")
    second = store.snapshot(first.commit)
    assert store.prune(keep_days=-1) == 2  # everything is "older" than the future
    assert not store.has_commit(first.commit)
    assert store.has_commit(second.commit)  # HEAD: the state the index describes stays


def test_a_restore_never_writes_outside_the_workspace_whatever_the_path(tmp_path: Path) -> None:
    """Invariant of the restore's file writer: any path text (``..``, absolute, ``.git``, through
    a symlinked folder) is written inside the workspace or not at all."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from baton.sessions.checkpoints.files import WorkspaceFiles

    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "real").mkdir()
    os.symlink(outside, root / "link")
    os.symlink("/", root / "rootlink")
    files = WorkspaceFiles(root)
    parts = st.sampled_from(["..", ".", "", "link", "rootlink", "real", ".git", "a", "b/c", "/", "tmp", "x\0y"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(parts, min_size=1, max_size=5))
    def check(pieces: list[str]) -> None:
        path = "/".join(pieces)
        if files.write(path, b"data", 0o600):
            target = os.path.realpath(root / path)
            assert target.startswith(str(root) + os.sep), path
        assert list(outside.iterdir()) == []

    check()


def test_a_chmod_right_after_a_snapshot_is_seen(ws: Path, home: Path) -> None:
    """Git compares whole seconds of ctime: a chmod within the second of the file's last change
    does not show in its stat data, and must still reach the snapshot (and the restore)."""
    store = make_store(ws, home)
    (ws / "key.pem").write_text("secret\n")
    (ws / "key.pem").chmod(0o600)
    first = store.snapshot()
    (ws / "key.pem").chmod(0o644)  # at once: the same second as its creation
    second = store.snapshot(first.commit)
    assert second.commit != first.commit
    (ws / "key.pem").unlink()
    third = store.snapshot(second.commit)
    store.restore(first.commit, third.commit)
    assert stat.S_IMODE((ws / "key.pem").stat().st_mode) == 0o600

"""The checkpoint store: a shadow git repository per workspace.

Layout: ``$BATON_HOME/checkpoints/<hash of the workspace's real path>/`` holds ``git/`` (the
shadow repository: ``GIT_DIR`` there, the work tree is the workspace), ``lock`` (an ``flock``
shared by every baton process on the workspace), ``journal.json`` (a restore in progress) and
``workspace`` (the path, for people looking around). The user's own ``.git`` is never read by
git here, let alone written: its ``info/exclude`` is copied into the shadow's.

A snapshot is a parentless commit of the workspace, kept alive by ``refs/baton/c/<sha>`` (so
old ones can be pruned one by one). The shadow index always describes the last snapshot or
restore, with fresh stat data, so an unchanged workspace costs one ``git status``. The shadow
``HEAD`` is the commit whose tree the index holds, so ``status`` lists only what changed.

Crash safety: git writes its index, objects and refs atomically; a process killed mid-way leaves
at most a stale ``*.lock`` file, which the next holder of our lock removes. A restore writes a
journal first and the next holder of the lock finishes it, so a workspace is never left half
restored.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.paths import baton_home
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.git import Git, nul_join, nul_split

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
LOCK_TIMEOUT_S = 30.0

BUILTIN_EXCLUDES = (
    ".git/",
    "node_modules/",
    ".venv/",
    "venv/",
    ".virtualenv/",
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".nox/",
)

# Highest-precedence attributes: bytes go in and come out exactly as they are on disk.
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding -diff\n"

_CONFIG = (
    ("core.bare", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.filemode", "true"),
    ("core.symlinks", "true"),
    ("core.quotepath", "false"),
    ("core.untrackedCache", "true"),
    ("core.fsmonitor", "false"),
    ("core.longpaths", "true"),
    ("gc.auto", "0"),
    ("status.relativePaths", "false"),
)


@dataclass
class Changes:
    """Files that differ between two snapshots (workspace-relative paths, sorted)."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        """Every changed path, sorted."""
        return sorted({*self.added, *self.modified, *self.deleted})

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    def summary(self) -> str:
        """``+3 ~5 -1`` (empty when nothing changed)."""
        parts = [f"{sign}{len(items)}" for sign, items in (("+", self.added), ("~", self.modified), ("-", self.deleted))
                 if items]
        return " ".join(parts)

    def to_json(self) -> dict[str, list[str]]:
        """``{"added": [...], "modified": [...], "deleted": [...]}``."""
        return {"added": list(self.added), "modified": list(self.modified), "deleted": list(self.deleted)}

    @classmethod
    def from_json(cls, data: object) -> Changes:
        """Read what :meth:`to_json` wrote (anything malformed reads as no changes)."""
        if not isinstance(data, dict):
            return cls()

        def strings(key: str) -> list[str]:
            value = data.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        return cls(strings("added"), strings("modified"), strings("deleted"))

    def merged(self, later: Changes) -> Changes:
        """These changes followed by ``later`` (a file added then deleted disappears)."""
        state: dict[str, str] = {}
        for kind, items in (("a", self.added), ("m", self.modified), ("d", self.deleted)):
            for path in items:
                state[path] = kind
        for kind, items in (("a", later.added), ("m", later.modified), ("d", later.deleted)):
            for path in items:
                before = state.get(path)
                if before == "a" and kind == "d":
                    del state[path]
                elif before == "a":
                    continue
                elif before == "d" and kind == "a":
                    state[path] = "m"
                else:
                    state[path] = kind
        return Changes(
            sorted(p for p, k in state.items() if k == "a"),
            sorted(p for p, k in state.items() if k == "m"),
            sorted(p for p, k in state.items() if k == "d"),
        )


@dataclass
class Snapshot:
    """One snapshot: its commit, what changed since ``previous`` and the files left out."""

    commit: str
    changes: Changes
    skipped: list[str] = field(default_factory=list)
    """Files over the size limit (not in the snapshot, never touched by a restore)."""


@dataclass
class RestoreOutcome:
    """What a restore did."""

    restored: list[str] = field(default_factory=list)
    """Files written back (changed or deleted since the checkpoint)."""
    removed: list[str] = field(default_factory=list)
    """Files created after the checkpoint, deleted."""
    kept: list[str] = field(default_factory=list)
    """Files the checkpoint had that are now ignored or too large: left as they are."""


def workspace_key(workspace: Path) -> str:
    """The directory name for a workspace: a hash of its real path."""
    real = os.path.realpath(workspace)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def checkpoints_root(home: Path | None = None) -> Path:
    """``$BATON_HOME/checkpoints``."""
    return (home or baton_home()) / "checkpoints"


class CheckpointStore:
    """Snapshots and restores of one workspace. Every public method takes the lock itself and
    is blocking (call it from a thread in async code)."""

    def __init__(
        self,
        workspace: Path,
        *,
        git: str,
        home: Path | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.root = checkpoints_root(home) / workspace_key(self.workspace)
        self.git_dir = self.root / "git"
        self.max_file_bytes = max_file_bytes
        self._home = Path(os.path.realpath(home or baton_home()))
        self.git = Git(git, self.git_dir, self.workspace)
        self._exclude_source: tuple[float, int] | None = None

    # ------------------------------------------------------------------ locking and recovery

    @contextlib.contextmanager
    def locked(self, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the workspace's lock (other processes wait); recovers from a crash first."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise CheckpointError(
                            f"Another baton process has held the checkpoint lock of {self.workspace} "
                            f"for over {timeout:.0f} s"
                        ) from None
                    time.sleep(0.02)
            self.git.keep_fds = (fd,)
            self._recover()
            yield
        finally:
            self.git.keep_fds = ()
            os.close(fd)  # releases the flock (once no orphaned git child holds it either)

    def _recover(self) -> None:
        """Undo what a killed process left: stale git lock files, an unfinished restore."""
        if not self.git_dir.is_dir():
            return
        for stale in (self.git_dir / "index.lock", self.git_dir / "HEAD.lock", self.git_dir / "packed-refs.lock",
                      self.git_dir / "tmp-index", self.git_dir / "tmp-index.lock"):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        refs = self.git_dir / "refs"
        if refs.is_dir():
            for stale in refs.rglob("*.lock"):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
        journal = self.root / "journal.json"
        if journal.exists():
            try:
                plan = json.loads(journal.read_text())
                self._apply(plan["target"], list(plan["write"]), list(plan["delete"]))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise CheckpointError(f"Could not finish the interrupted restore in {journal}: {exc}") from exc
            journal.unlink()

    # ------------------------------------------------------------------ set-up

    def _ensure_repo(self) -> None:
        if (self.git_dir / "HEAD").is_file() and (self.git_dir / "baton-ready").is_file():
            return
        import shutil

        tmp = self.root / f"git.init-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(self.git_dir, ignore_errors=True)
        init = Git(self.git.executable, tmp, self.workspace)
        init.run("init", "--quiet", "--bare", str(tmp), unset=("GIT_WORK_TREE", "GIT_DIR", "GIT_INDEX_FILE"))
        with open(tmp / "config", "a") as config:  # one write instead of a git process per key
            config.write("[baton]\n\tshadow = true\n")
            for key, value in _CONFIG:
                section, name = key.split(".")
                config.write(f"[{section}]\n\t{name} = {value}\n")
        (tmp / "info").mkdir(exist_ok=True)
        (tmp / "info" / "attributes").write_text(_ATTRIBUTES)
        (tmp / "baton-ready").write_text("1\n")
        os.rename(tmp, self.git_dir)
        (self.root / "workspace").write_text(str(self.workspace) + "\n")

    def _sync_excludes(self) -> None:
        """The shadow's ``info/exclude``: built-ins, the user's ``.git/info/exclude`` and
        baton's home when it lies inside the workspace."""
        user_exclude = self.workspace / ".git" / "info" / "exclude"
        try:
            st = user_exclude.stat()
            source: tuple[float, int] | None = (st.st_mtime, st.st_size)
        except OSError:
            source = None
        target = self.git_dir / "info" / "exclude"
        if source == self._exclude_source and target.exists():
            return
        lines = ["# written by baton: built-in excludes", *BUILTIN_EXCLUDES]
        with contextlib.suppress(ValueError):
            inside = self._home.relative_to(self.workspace)
            if inside.parts:
                lines.append("/" + inside.as_posix() + "/")
        if source is not None:
            with contextlib.suppress(OSError):
                lines += ["# from .git/info/exclude", user_exclude.read_text(errors="replace")]
        content = "\n".join(lines) + "\n"
        with contextlib.suppress(OSError):
            if target.read_text() == content:
                self._exclude_source = source
                return
        _write_atomic(target, content.encode())
        self._exclude_source = source

    def _head(self) -> str | None:
        try:
            value = (self.git_dir / "HEAD").read_text().strip()
        except OSError:
            return None
        return value if len(value) == 40 and all(c in "0123456789abcdef" for c in value) else None

    def _set_head(self, commit: str) -> None:
        _write_atomic(self.git_dir / "HEAD", (commit + "\n").encode())

    # ------------------------------------------------------------------ snapshot

    def snapshot(self, previous: str | None = None) -> Snapshot:
        """Commit the workspace as it is now; ``changes`` are relative to ``previous``."""
        with self.locked():
            return self._snapshot(previous)

    def _snapshot(self, previous: str | None) -> Snapshot:
        self._ensure_repo()
        self._sync_excludes()
        status = self.git.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all",
        )
        head = self._head()
        update: list[str] = []
        drop: list[str] = []
        skipped: list[str] = []
        for item in nul_split(status):
            path = item[3:]
            if not path or path.endswith("/"):
                continue  # a nested repository: its files belong to it
            try:
                st = os.lstat(self.workspace / path)
            except FileNotFoundError:
                update.append(path)  # deleted
                continue
            except OSError:
                continue
            if st.st_size > self.max_file_bytes and not _is_link(st.st_mode):
                skipped.append(path)
                if item[0] != "?":
                    drop.append(path)
            else:
                update.append(path)
        if update:
            self.git.run("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_join(update))
        if drop:
            self.git.run("update-index", "--force-remove", "-z", "--stdin", stdin=nul_join(drop))
        if head is not None and not update and not drop:
            commit = head
        else:
            tree = self.git.run("write-tree").decode().strip()
            commit = self.git.run("commit-tree", tree, "-m", "baton checkpoint").decode().strip()
            _write_atomic(self.git_dir / "refs" / "baton" / "c" / commit, (commit + "\n").encode())
            self._set_head(commit)
        changes = self.diff(previous, commit) if previous and previous != commit else Changes()
        return Snapshot(commit, changes, sorted(set(skipped)))

    # ------------------------------------------------------------------ reading

    def diff(self, old: str, new: str) -> Changes:
        """Files that differ between two snapshot commits."""
        out = nul_split(self.git.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new))
        changes = Changes()
        for status, path in zip(out[0::2], out[1::2], strict=False):
            if status == "A":
                changes.added.append(path)
            elif status == "D":
                changes.deleted.append(path)
            else:
                changes.modified.append(path)
        return changes

    def has_commit(self, commit: str) -> bool:
        """Whether ``commit`` is still in the shadow repository."""
        if not self.git_dir.is_dir():
            return False
        out = self.git.run("cat-file", "-t", commit, check=False)
        return out.strip() == b"commit"

    # ------------------------------------------------------------------ restore

    def restore(self, target: str, current: str) -> RestoreOutcome:
        """Make the workspace what ``target`` was, given that it is ``current`` now (a snapshot
        just taken): rewrite changed and deleted files, delete files created since, leave
        ignored and oversized files alone."""
        with self.locked():
            if not self.has_commit(target):
                raise CheckpointError(f"Checkpoint {target[:12]} is no longer available (pruned?)")
            changes = self.diff(current, target)
            # diff(current → target): "added" = in target only (deleted since): write back;
            # "deleted" = in current only (created since): remove.
            outcome = RestoreOutcome()
            for path in [*changes.added, *changes.modified]:
                if path in changes.added and os.path.lexists(self.workspace / path):
                    outcome.kept.append(path)  # ignored or too large now: not ours to overwrite
                else:
                    outcome.restored.append(path)
            outcome.removed = list(changes.deleted)
            outcome.restored.sort()
            plan = {"target": target, "write": outcome.restored, "delete": outcome.removed}
            _write_atomic(self.root / "journal.json", json.dumps(plan).encode())
            self._apply(target, outcome.restored, outcome.removed)
            (self.root / "journal.json").unlink()
            return outcome

    def _apply(self, target: str, write: list[str], delete: list[str]) -> None:
        """Write ``write`` from ``target``, delete ``delete``; idempotent (used to recover)."""
        if write:
            tmp_env = {"GIT_INDEX_FILE": str(self.git_dir / "tmp-index")}
            self.git.run("read-tree", target, env=tmp_env)
            safe = [p for p in write if self._inside(p)]
            self.git.run("checkout-index", "-f", "-z", "--stdin", stdin=nul_join(safe), env=tmp_env)
            with contextlib.suppress(FileNotFoundError):
                (self.git_dir / "tmp-index").unlink()
        for path in delete:
            if not self._inside(path):
                continue
            full = self.workspace / path
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
                full.unlink()
            self._remove_empty_parents(full.parent)
        if write or delete:
            self.git.run("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_join([*write, *delete]))
        self._set_head(target)

    def _inside(self, path: str) -> bool:
        """The path's directory resolves inside the workspace (no symlinked parent leads out)."""
        parent = os.path.realpath(self.workspace / os.path.dirname(path))
        return parent == str(self.workspace) or parent.startswith(str(self.workspace) + os.sep)

    def _remove_empty_parents(self, directory: Path) -> None:
        while directory != self.workspace and self.workspace in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    # ------------------------------------------------------------------ retention

    def prune(self, keep_days: float) -> int:
        """Forget snapshots older than ``keep_days`` and let ``git gc`` drop their objects;
        returns how many were forgotten."""
        if not self.git_dir.is_dir():
            return 0
        with self.locked():
            out = self.git.run("for-each-ref", "--format=%(refname) %(committerdate:unix)", "refs/baton/")
            limit = time.time() - keep_days * 86400
            old = []
            for line in out.decode().splitlines():
                name, _, stamp = line.rpartition(" ")
                if stamp.isdigit() and int(stamp) < limit:
                    old.append(name)
            if not old:
                return 0
            commands = "".join(f"delete {name}\n" for name in old).encode()
            self.git.run("update-ref", "--stdin", stdin=commands)
            self.git.run("gc", "--quiet", "--prune=now")
            return len(old)


def _is_link(mode: int) -> bool:
    import stat

    return stat.S_ISLNK(mode)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)

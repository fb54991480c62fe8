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
import functools
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
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
    ("core.untrackedCache", "false"),  # measured: slower than a plain scan for 10,000 files
    ("core.splitIndex", "true"),  # writes only the changed entries
    ("index.version", "4"),  # prefix-compressed paths: a smaller index to read and write
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
        for stale in (self.git_dir / "index.lock", self.git_dir / "HEAD.lock", self.git_dir / "packed-refs.lock"):
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
            except (OSError, ValueError, KeyError, TypeError, CheckpointError) as exc:
                # Set it aside rather than fail every later snapshot on it.
                os.replace(journal, self.root / "journal.failed.json")
                raise CheckpointError(f"Could not finish the interrupted restore ({exc}); the workspace may be "
                                      f"partly restored, see {self.root / 'journal.failed.json'}") from exc
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
                excluded = read_regular(user_exclude, MAX_CONFIG_BYTES)  # the repo's: no FIFO, no /dev/zero
                lines += ["# from .git/info/exclude", excluded.decode("utf-8", "replace")]
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
        seen = Changes()
        staged = False  # the index differs from HEAD (a crash between the two): use diff-tree
        for item in nul_split(status):
            code, path = item[:2], item[3:]
            if not path or path.endswith("/"):
                continue  # a nested repository: its files belong to it
            staged = staged or code[0] not in " ?"
            try:
                st = os.lstat(self.workspace / path)
            except FileNotFoundError:
                update.append(path)
                seen.deleted.append(path)
                continue
            except OSError:
                continue
            if st.st_size > self.max_file_bytes and not _is_link(st.st_mode):
                skipped.append(path)
                if code != "??":
                    drop.append(path)
                    seen.deleted.append(path)
            else:
                update.append(path)
                (seen.added if code == "??" else seen.modified).append(path)
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
        if not previous or previous == commit:
            changes = Changes()
        elif previous == head and not staged:
            changes = Changes(sorted(seen.added), sorted(seen.modified), sorted(seen.deleted))
        else:
            changes = self.diff(previous, commit)
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
            try:
                raw = self.git.run("diff-tree", "-r", "-z", "--raw", "--no-renames", current, target)
            except CheckpointError as exc:
                raise CheckpointError(f"Checkpoint {target[:12]} is no longer available: {exc}") from exc
            outcome = RestoreOutcome()
            write: list[list[str]] = []
            fields = nul_split(raw)
            for meta, path in zip(fields[0::2], fields[1::2], strict=False):
                _old_mode, new_mode, _old_sha, new_sha, status = meta.lstrip(":").split(" ")
                if status == "D":
                    outcome.removed.append(path)  # created after the checkpoint
                elif new_mode == "160000":
                    continue  # a nested repository's commit: not ours to check out
                elif status == "A" and os.path.lexists(self.workspace / path):
                    outcome.kept.append(path)  # ignored or too large now: not ours to overwrite
                else:
                    outcome.restored.append(path)
                    write.append([path, new_mode, new_sha])
            plan = {"target": target, "write": write, "delete": outcome.removed}
            _write_atomic(self.root / "journal.json", json.dumps(plan).encode())
            self._apply(target, write, outcome.removed)
            (self.root / "journal.json").unlink()
            return outcome

    def _apply(self, target: str, write: list[list[str]], delete: list[str]) -> None:
        """Write the ``[path, mode, blob]`` entries, delete ``delete``, update the index and
        HEAD; idempotent (a crashed restore is finished by running it again)."""
        write = [w for w in write if self._inside(w[0])]
        if write:
            blobs = self.git.run("cat-file", "--batch", stdin="".join(f"{w[2]}\n" for w in write).encode())
            offset = 0
            for path, mode, _sha in write:
                header_end = blobs.index(b"\n", offset)
                size = int(blobs[offset:header_end].split(b" ")[2])
                data = blobs[header_end + 1 : header_end + 1 + size]
                offset = header_end + 1 + size + 1
                self._write_file(path, mode, data)
        for path in delete:
            if not self._inside(path):
                continue
            full = self.workspace / path
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
                full.unlink()
            self._remove_empty_parents(full.parent)
        paths = [w[0] for w in write] + delete
        if paths:
            self.git.run("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_join(paths))
        self._set_head(target)

    def _write_file(self, path: str, mode: str, data: bytes) -> None:
        full = self.workspace / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if full.is_dir() and not full.is_symlink():
            return  # a directory took its place: leave it
        tmp = full.with_name(f".{full.name}.baton-restore")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if mode == "120000":
            os.symlink(os.fsdecode(data), tmp)
        else:
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, _permissions(full, executable=mode == "100755"))
        os.replace(tmp, full)

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


def _permissions(path: Path, *, executable: bool) -> int:
    """The file's current permissions with the execute bits git recorded (x wherever r is);
    for a new file, what the umask gives (as git does)."""
    try:
        st = os.lstat(path)
        base = st.st_mode & 0o777 if stat.S_ISREG(st.st_mode) else None
    except OSError:
        base = None
    if base is None:
        base = 0o666 & ~_umask()
    base &= ~0o111
    return base | ((base & 0o444) >> 2) if executable else base


@functools.cache
def _umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _is_link(mode: int) -> bool:
    return stat.S_ISLNK(mode)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)

"""The checkpoint store: a shadow git repository per workspace.

Layout: ``$BATON_HOME/checkpoints/<hash of the workspace's real path>/`` holds ``git/`` (the
shadow repository: ``GIT_DIR`` there, the work tree is the workspace), ``lock`` (an ``flock``
shared by every baton process on the workspace), ``journal.json`` (a restore in progress) and
``workspace`` (the path, for people looking around). The user's own ``.git`` is never read by
git here, let alone written: its ``info/exclude`` is copied into the shadow's.

A snapshot is a parentless commit of the workspace, kept alive by ``refs/baton/c/<sha>`` (so
old ones can be pruned one by one); its message records what git's tree cannot (exact permission
bits, empty folders, files left out: :mod:`.meta`). The shadow index always describes the last
snapshot or restore, with fresh stat data, so an unchanged workspace costs three quick git calls
(``diff-files`` for permission changes, ``status``, empty folders). The shadow
``HEAD`` is the commit whose tree the index holds, so ``status`` lists only what changed.

Only baton's own snapshots of this workspace are ever read back: a commit id from a session file
is used only when it is a full hex id with a ``refs/baton/c/`` ref here (:meth:`known`). Baton's
own settings files (``.baton/settings*.json``, ``.claude/settings*.json``) are never snapshotted
nor restored, so an "always allow" saved during a rewound turn survives the rewind.

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
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
from baton.providers.paths import baton_home
from baton.sessions.checkpoints.changes import Changes, RestoreOutcome, Snapshot
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.files import BATON_SETTINGS, WorkspaceFiles, safe_relative
from baton.sessions.checkpoints.git import END, Git, is_object_id, nul_join, nul_split, object_id
from baton.sessions.checkpoints.meta import SnapshotMeta, read_meta
from baton.sessions.checkpoints.restore import Restore, RestorePlan, plan_restore

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
    "/.baton/settings*.json",
    "/.claude/settings*.json",
)
FRESH_SECONDS = 2.0
"""A file whose ``ctime`` is this recent at a snapshot is looked at again at the next one."""
EMPTY_DIR_BUDGET = 2000
"""At most this many folders are looked into per snapshot when searching for empty ones."""

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
    ("core.hooksPath", os.devnull),
    ("core.longpaths", "true"),
    ("gc.auto", "0"),
    ("status.relativePaths", "false"),
)


def workspace_key(workspace: Path) -> str:
    """The directory name for a workspace: a hash of its real path."""
    real = os.path.realpath(workspace)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:20]


def checkpoints_root(home: Path | None = None) -> Path:
    """``$BATON_HOME/checkpoints``."""
    return (home or baton_home()) / "checkpoints"


@dataclass(slots=True)
class _Sorted:
    """One snapshot's paths, sorted from ``git status``."""

    update: list[str] = field(default_factory=list)
    """Files the snapshot takes as they are now."""
    drop: list[str] = field(default_factory=list)
    """Files the snapshot no longer has (deleted, or grown past the size limit)."""
    skipped: list[str] = field(default_factory=list)
    """Files left out for their size."""
    seen: Changes = field(default_factory=Changes)
    staged: bool = False
    """The index differed from the last snapshot (a crash between the two)."""


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
        self.files = WorkspaceFiles(self.workspace)
        self._exclude_source: tuple[float, int] | None = None
        self._metas: dict[str, SnapshotMeta | None] = {}
        self._fresh: tuple[str | None, set[str]] = (None, set())
        """The snapshot this process took last, and the files changed just before it."""
        self._tracked: tuple[str | None, set[str]] = (None, set())
        """The files the index held at a snapshot (its commit): edit and write calls on them cost
        no git call."""
        self._pending: set[str] = set()
        """Paths a tool was about to create where ignore rules hide them: the next snapshot
        adds them when they exist (so a rewind can take them back)."""

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
                plan = RestorePlan.from_json(json.loads(journal.read_text()))
                Restore(self, plan).apply()
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
        init.run("init", "--quiet", "--bare", "--template=", str(tmp),
                 unset=("GIT_WORK_TREE", "GIT_DIR", "GIT_INDEX_FILE"))
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
        return value if is_object_id(value) else None

    def _set_head(self, commit: str) -> None:
        _write_atomic(self.git_dir / "HEAD", (commit + "\n").encode())

    # ------------------------------------------------------------------ what is ours

    def known(self, commit: object) -> bool:
        """Whether ``commit`` is one of baton's snapshots of this workspace: a full hex id with
        a ``refs/baton/c/`` ref in this store (or the state the index holds)."""
        if not is_object_id(commit):
            return False
        assert isinstance(commit, str)
        if commit == self._head() or (self.git_dir / "refs" / "baton" / "c" / commit).is_file():
            return True
        try:
            packed = (self.git_dir / "packed-refs").read_text()
        except OSError:
            return False
        return f"{commit} refs/baton/c/{commit}\n" in packed

    def _known_id(self, commit: object) -> str:
        checked = object_id(commit)
        if not self.known(checked):
            raise CheckpointError(f"Checkpoint {checked[:12]} is not one of baton's snapshots of this workspace "
                                  "(pruned, or not made here)")
        return checked

    def meta(self, commit: str) -> SnapshotMeta | None:
        """The record of snapshot ``commit`` (``None``: made by an older baton)."""
        if commit not in self._metas:
            self._metas[commit] = read_meta(self.git, commit)
        return self._metas[commit]

    def _commit(self, meta: SnapshotMeta) -> str:
        tree = self.git.run("write-tree").decode().strip()
        commit = self.git.run("commit-tree", "-F", "-", END, object_id(tree), stdin=meta.message()).decode().strip()
        _write_atomic(self.git_dir / "refs" / "baton" / "c" / object_id(commit), (commit + "\n").encode())
        self._set_head(commit)
        self._metas[commit] = meta
        return commit

    # ------------------------------------------------------------------ snapshot

    def snapshot(self, previous: str | None = None) -> Snapshot:
        """Commit the workspace as it is now; ``changes`` are relative to ``previous`` (none when
        it is not one of this store's snapshots)."""
        with self.locked():
            return self._snapshot(previous)

    def _snapshot(self, previous: str | None) -> Snapshot:
        self._ensure_repo()
        self._sync_excludes()
        head = self._head()
        base = self.meta(head) if head is not None else None
        incremental = base is not None and self._fresh[0] == head
        # Before status refreshes the index: files whose stat data moved (a chmod shows only here).
        touched = nul_split(self.git.run("diff-files", "--name-only", "-z")) if incremental else []
        found = self._sort_status()
        if found.drop:  # first: a folder that became a file (or symlink) must leave the index first
            self.git.run("update-index", "--force-remove", "-z", "--stdin", stdin=nul_join(found.drop))
        if found.update:
            self.git.run("update-index", "--add", "--remove", "--replace", "-z", "--stdin",
                         stdin=nul_join(found.update))
        meta, fresh = self._modes(base if incremental else None, [*found.update, *touched], found.drop)
        meta.skipped = sorted(set(found.skipped))
        meta.dirs = self._empty_dirs()
        if head is not None and base is not None and not found.update and not found.drop and meta == base:
            commit = head
        else:
            commit = self._commit(meta)
        self._fresh = (commit, fresh)
        known_at, known = self._tracked
        changed = (known - set(found.drop)) | set(found.update)
        self._tracked = (commit, changed) if known_at == head else (None, set())
        return Snapshot(commit, self._changes_since(previous, head, commit, found), sorted(set(found.skipped)))

    def _sort_status(self) -> _Sorted:
        """What ``git status`` (and the paths :meth:`track` left for it) says the snapshot must
        add, drop or leave out."""
        status = self.git.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all",
        )
        found = _Sorted()
        for item in nul_split(status):
            code, path = item[:2], item[3:]
            if not path or path.endswith("/"):
                continue  # a nested repository: its files belong to it
            found.staged = found.staged or code[0] not in " ?"
            if BATON_SETTINGS.fullmatch(path):
                if code != "??":
                    found.drop.append(path)  # tracked by an older baton: baton's settings are not rewound
                continue
            self._classify(path, code, found)
        pending, self._pending = sorted(self._pending - set(found.update)), set()
        for path in pending:
            self._classify(path, "??", found)
        return found

    def _changes_since(self, previous: str | None, head: str | None, commit: str, found: _Sorted) -> Changes:
        """What changed from ``previous`` to the new ``commit`` (nothing when ``previous`` is not
        one of this store's snapshots)."""
        if not previous or previous == commit or not self.known(previous):
            return Changes()
        if previous == head and not found.staged:
            return Changes(sorted(found.seen.added), sorted(found.seen.modified), sorted(found.seen.deleted))
        return self._diff(previous, commit)  # the index differed from HEAD (a crash between the two)

    def _classify(self, path: str, code: str, found: _Sorted) -> None:
        """Sort one path ``status`` reported into what the snapshot adds, drops or leaves out (a
        path beyond a folder now a symlink is gone: what it reaches is not the workspace's)."""
        st = self.files.lstat(path)
        if st is None:
            if code != "??":
                found.drop.append(path)
                found.seen.deleted.append(path)
            return
        if st.st_size > self.max_file_bytes and not stat.S_ISLNK(st.st_mode):
            found.skipped.append(path)
            if code != "??":
                found.drop.append(path)
                found.seen.deleted.append(path)
        else:
            found.update.append(path)
            (found.seen.added if code == "??" else found.seen.modified).append(path)

    def _modes(
        self, base: SnapshotMeta | None, changed: list[str], dropped: list[str]
    ) -> tuple[SnapshotMeta, set[str]]:
        """The permission bits of every tracked file, and the files changed in the last seconds.

        Git's stat data shows a ``chmod`` (``diff-files``, before ``status`` refreshes the index)
        unless it came within the same second as the file's previous change (git compares whole
        seconds of ``ctime``): so on top of what changed, the files that were fresh at the last
        snapshot are looked at again. Without that snapshot's record (``base`` is ``None``: a
        first snapshot in this process, or another process took the last one) every tracked file
        is looked at."""
        if base is not None:
            meta = base.copy()
            meta.absent = []
            gone = set(dropped)
            for path in gone:
                meta.forget(path)
            check = {*changed, *self._fresh[1]} - gone
        else:
            meta = SnapshotMeta()
            check = set(nul_split(self.git.run("ls-files", "-z")))
            self._tracked = (self._head(), set(check))
        root = str(self.workspace)
        recent = time.time() - FRESH_SECONDS
        fresh: set[str] = set()
        for path in check:
            try:
                st = os.lstat(f"{root}/{path}")
            except OSError:
                meta.forget(path)
                continue
            if stat.S_ISREG(st.st_mode):
                meta.note_mode(path, st.st_mode & 0o777, bool(st.st_mode & 0o100))
            else:
                meta.forget(path)
            if st.st_ctime >= recent:
                fresh.add(path)
        return meta, fresh

    def _empty_dirs(self) -> dict[str, int]:
        """The workspace's empty folders (that no ignore rule hides) and their permission bits."""
        listed = nul_split(self.git.run("ls-files", "--others", "--directory", "--exclude-standard", "-z"))
        found: dict[str, int] = {}
        queue = [p.rstrip("/") for p in listed if p.endswith("/") and safe_relative(p.rstrip("/"))]
        budget = EMPTY_DIR_BUDGET
        while queue and budget > 0:
            budget -= 1
            rel = queue.pop()
            try:
                with os.scandir(self.workspace / rel) as entries:
                    children = list(entries)
            except OSError:
                continue
            if not children:
                with contextlib.suppress(OSError):
                    found[rel] = os.lstat(self.workspace / rel).st_mode & 0o777
                continue
            if any(not c.is_dir(follow_symlinks=False) or c.name == ".git" for c in children):
                continue  # it holds files (left out or ignored) or a repository: not ours to walk
            queue.extend(f"{rel}/{c.name}" for c in children)
        return found

    def track(self, paths: list[str], base: str | None) -> Snapshot | None:
        """Before a tool writes ``paths`` (workspace-relative): the ones ignore rules keep out of
        snapshots are added to snapshot ``base`` as they are now (over the size limit: named in
        ``skipped``), the ones that do not exist yet are noted as absent (a rewind then deletes
        what the tool creates). Returns the amended snapshot, or ``None`` when nothing was
        missing (or ``base`` is not the last snapshot)."""
        wanted = [p for p in dict.fromkeys(paths) if safe_relative(p) and not BATON_SETTINGS.fullmatch(p)]
        known_at, known = self._tracked
        if not wanted or (base is not None and known_at == base and known.issuperset(wanted)):
            return None
        with self.locked():
            head = self._head()
            if head is None or base != head:
                return None
            hidden = self._hidden_untracked(wanted, head)
            if not hidden:
                return None  # the next status sees them
            meta, add = self._meta_with(hidden, head)
            if add:
                self.git.run("update-index", "--add", "--replace", "-z", "--stdin", stdin=nul_join(add))
            elif meta == self.meta(head):
                return None
            commit = self._commit(meta)
            self._tracked = (commit, self._tracked[1] | set(add))
            if self._fresh[0] == head:
                self._fresh = (commit, self._fresh[1] | set(add))
            return Snapshot(commit, Changes(), sorted(p for p in meta.skipped if p in hidden))

    def _hidden_untracked(self, wanted: list[str], head: str) -> list[str]:
        """Of ``wanted``, the paths snapshot ``head`` lacks because ignore rules hide them."""
        if self._tracked[0] != head:
            self._tracked = (head, set(nul_split(self.git.run("ls-files", "-z"))))
        untracked = [p for p in wanted if p not in self._tracked[1]]
        if not untracked:
            return []
        done = self.git.run("check-ignore", "--no-index", "-z", "--stdin", stdin=nul_join(untracked), check=False)
        return [p for p in nul_split(done) if p in untracked]

    def _meta_with(self, hidden: list[str], head: str) -> tuple[SnapshotMeta, list[str]]:
        """Snapshot ``head``'s record amended for the ``hidden`` paths, and those of them to add
        (missing ones are noted absent, oversized ones skipped, folders left alone)."""
        meta = (self.meta(head) or SnapshotMeta()).copy()
        add: list[str] = []
        for path in hidden:
            st = self.files.lstat(path)
            if st is None:
                meta.absent.append(path)
                self._pending.add(path)
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            if st.st_size > self.max_file_bytes and not stat.S_ISLNK(st.st_mode):
                meta.skipped.append(path)
                continue
            add.append(path)
            if stat.S_ISREG(st.st_mode):
                meta.note_mode(path, st.st_mode & 0o777, bool(st.st_mode & 0o100))
        return meta, add

    # ------------------------------------------------------------------ reading

    def diff(self, old: str, new: str) -> Changes:
        """Files that differ between two snapshot commits."""
        with self.locked():
            return self._diff(self._known_id(old), self._known_id(new))

    def _diff(self, old: str, new: str) -> Changes:
        out = nul_split(self.git.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", END,
                                     object_id(old), object_id(new)))
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
        """Whether ``commit`` is one of this store's snapshots and still in it."""
        if not self.git_dir.is_dir() or not self.known(commit):
            return False
        out = self.git.run("cat-file", "-t", END, commit, check=False)
        return out.strip() == b"commit"

    # ------------------------------------------------------------------ restore

    def restore(self, target: str, current: str) -> RestoreOutcome:
        """Make the workspace what ``target`` was, given that it is ``current`` now (a snapshot
        just taken). See :mod:`.restore` for what is written, deleted and left alone."""
        with self.locked():
            plan = plan_restore(self, self._known_id(target), self._known_id(current))
            _write_atomic(self.root / "journal.json", json.dumps(plan.to_json()).encode())
            outcome = Restore(self, plan).apply()
            (self.root / "journal.json").unlink()
            return outcome

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
                if stamp.isdigit() and int(stamp) < limit and name.startswith("refs/baton/"):
                    old.append(name)
            if not old:
                return 0
            commands = "".join(f"delete {name}\n" for name in old).encode()
            self.git.run("update-ref", "--stdin", stdin=commands)
            self.git.run("gc", "--quiet", "--prune=now")
            return len(old)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)

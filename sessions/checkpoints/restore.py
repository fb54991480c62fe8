"""A code rewind: make the workspace what a snapshot was.

What changed between the current snapshot and the target (``git diff-tree``) is written back
byte for byte with the permission bits the target recorded (never git's ``0644``/``0755``
approximation, so a ``0600`` secret stays ``0600``); empty folders the target had come back.

Deleting is where a rewind can hurt, so a file is deleted only when the target shows it did not
exist then: it is not in the target, was not left out for its size, and is not hidden by the
target's ignore rules (checked once those rules are restored: a ``.gitignore`` the model emptied
must not make the user's ignored ``notes.txt`` look like the agent's) — unless a tool was about
to create it where those rules hide it (the target says so). A folder is removed only when it is
empty and the target did not have it. Baton's own settings files are never touched, and every
path is written through :class:`~.files.WorkspaceFiles` (no ``..``, no symlinked folder).

The plan is written to a journal before anything changes; applying it again finishes a restore a
crash interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonArray, JsonObject, JsonValue
from baton.sessions.checkpoints.changes import RestoreOutcome
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.files import BATON_SETTINGS, safe_relative
from baton.sessions.checkpoints.git import END, is_object_id, nul_join, nul_split, object_id

if TYPE_CHECKING:
    from baton.sessions.checkpoints.store import CheckpointStore

_FILE_MODES = frozenset({"100644", "100755", "120000"})


@dataclass
class RestorePlan:
    """What a restore writes (``[path, git mode, blob]``), may delete, and leaves alone."""

    target: str
    current: str | None
    write: list[list[str]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        """The journal's content."""
        return {"target": self.target, "current": self.current, "write": [list(w) for w in self.write],
                "delete": list(self.delete), "kept": list(self.kept)}

    @classmethod
    def from_json(cls, data: JsonValue) -> RestorePlan:
        """A plan read back from the journal (checked like any input: ``ValueError`` when bad)."""
        if not isinstance(data, dict):
            raise ValueError("the journal is not an object")
        current = data.get("current")
        write = [w for w in map(_strings, _items(data.get("write"))) if w is not None and len(w) == 3]
        plan = cls(object_id(data.get("target")), current if is_object_id(current) else None,
                   [w for w in write if safe_relative(w[0]) and w[1] in _FILE_MODES and is_object_id(w[2])],
                   [p for p in _items(data.get("delete")) if isinstance(p, str) and safe_relative(p)],
                   [p for p in _items(data.get("kept")) if isinstance(p, str)])
        return plan


def _items(value: JsonValue) -> JsonArray:
    """``value`` when it is a list, else none."""
    return value if isinstance(value, list) else []


def _strings(value: JsonValue) -> list[str] | None:
    """``value`` when it is a list of strings."""
    items = _items(value)
    strings = [v for v in items if isinstance(v, str)]
    return strings if isinstance(value, list) and len(strings) == len(items) else None


def plan_restore(store: CheckpointStore, target: str, current: str) -> RestorePlan:
    """The plan for restoring ``target`` over ``current`` (both checked snapshot ids)."""
    try:
        raw = store.git.run("diff-tree", "-r", "-z", "--raw", "--no-renames", END, current, target)
    except CheckpointError as exc:
        raise CheckpointError(f"Checkpoint {target[:12]} is no longer available: {exc}") from exc
    plan = RestorePlan(target, current)
    files = store.files
    fields = nul_split(raw)
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        _old_mode, new_mode, _old_sha, new_sha, status = meta.lstrip(":").split(" ")
        if not safe_relative(path) or BATON_SETTINGS.fullmatch(path):
            continue
        if status == "D":
            plan.delete.append(path)  # not in the target: deleted only if it was not there then
        elif new_mode not in _FILE_MODES:
            continue  # a nested repository's commit: not ours to check out
        elif status == "A" and files.kind(path) is not None:
            plan.kept.append(path)  # ignored or too large now: not ours to overwrite
        else:
            plan.write.append([path, new_mode, new_sha])
    return plan


class Restore:
    """Applies a :class:`RestorePlan` (idempotent: a crashed restore is finished by applying
    it again)."""

    def __init__(self, store: CheckpointStore, plan: RestorePlan) -> None:
        self.store = store
        self.plan = plan
        self.git = store.git
        self.files = store.files
        self.outcome = RestoreOutcome(kept=list(plan.kept))
        self.chmodded: set[str] = set()
        self.target_meta = store.meta(plan.target)

    def apply(self) -> RestoreOutcome:
        """Write, delete and fix permission bits; then the index and ``HEAD`` follow the target."""
        writes = {w[0] for w in self.plan.write}
        blocking, later = self._split_deletions(writes)
        for path in blocking:  # a file where the target had a folder, or the reverse
            if self.files.remove(path):
                self.outcome.removed.append(path)
        self._write(self.plan.write)
        self._fix_modes(writes | set(self.plan.delete))
        ignored_kept = self._delete(later)
        self._remove_new_folders()
        self._make_empty_dirs()
        forget = sorted({*self.outcome.removed, *ignored_kept})
        if forget:
            self.git.run("update-index", "--force-remove", "-z", "--stdin", stdin=nul_join(forget))
        if self.outcome.restored:
            self.git.run("update-index", "--add", "--replace", "-z", "--stdin", stdin=nul_join(self.outcome.restored))
        self.store._set_head(self.plan.target)
        self._carry_caches(forget)
        return self.outcome

    def _carry_caches(self, forgotten: list[str]) -> None:
        """The store's view of the index and of recently changed files follows the restore (what
        the restore wrote or chmodded is recent), so the next snapshot stays incremental."""
        store, current, target = self.store, self.plan.current, self.plan.target
        restored = set(self.outcome.restored)
        fresh_at, fresh = store._fresh
        store._fresh = (target, fresh | restored | self.chmodded) if fresh_at == current else (None, set())
        known_at, known = store._tracked
        store._tracked = (target, (known - set(forgotten)) | restored) if known_at == current else (None, set())

    def _split_deletions(self, writes: set[str]) -> tuple[list[str], list[str]]:
        """Deletions that stand in the way of a write (deleted first, whatever the ignore rules
        say: the target proves they were not there), and the others."""
        ancestors = {path.rsplit("/", i)[0] for path in writes for i in range(1, path.count("/") + 1)}
        blocking: list[str] = []
        later: list[str] = []
        for path in self.plan.delete:
            parts = path.split("/")
            under_write = any("/".join(parts[:i]) in writes for i in range(1, len(parts)))
            (blocking if path in ancestors or under_write else later).append(path)
        return sorted(blocking, key=lambda p: -p.count("/")), later

    def _write(self, write: list[list[str]]) -> None:
        if not write:
            return
        blobs = self.git.run("cat-file", "--batch", stdin="".join(f"{w[2]}\n" for w in write).encode())
        offset = 0
        for path, mode, _sha in write:
            header_end = blobs.index(b"\n", offset)
            header = blobs[offset:header_end].split(b" ")
            if len(header) != 3:
                raise CheckpointError(f"Checkpoint object for {path} is missing")
            size = int(header[2])
            data = blobs[header_end + 1 : header_end + 1 + size]
            offset = header_end + 1 + size + 1
            if self.files.write(path, data, self._bits(path, mode), link=mode == "120000"):
                self.outcome.restored.append(path)
            else:
                self.outcome.kept.append(path)

    def _bits(self, path: str, mode: str) -> int:
        if self.target_meta is not None:
            return self.target_meta.bits(path, mode)
        return 0o755 if mode == "100755" else 0o644  # an older snapshot: git's own approximation

    def _fix_modes(self, handled: set[str]) -> None:
        """Files whose content the target shares but whose permission bits it does not."""
        current = self.store.meta(self.plan.current) if self.plan.current else None
        target = self.target_meta
        if target is None or current is None:
            return
        for path in sorted(set(target.modes) | set(current.modes)):
            if path in handled:
                continue
            plain = 0o755 if current.modes.get(path, 0) & 0o100 else 0o644
            wanted = target.modes.get(path, plain)
            if current.modes.get(path) != wanted:
                self.files.chmod(path, wanted)
                self.chmodded.add(path)

    def _delete(self, candidates: list[str]) -> list[str]:
        """Delete the candidates the target proves were not there; returns those left on disk
        (for the index to forget)."""
        target = self.target_meta
        skipped = set(target.skipped) if target is not None else set()
        absent = set(target.absent) if target is not None else set()
        left = [p for p in candidates if self.files.kind(p) is not None]
        kept = [p for p in left if p in skipped and p not in absent]
        pending = [p for p in left if p not in skipped or p in absent]
        while pending:
            hidden = self._ignored([p for p in pending if p not in absent])
            removed_rules = False
            still: list[str] = []
            for path in pending:
                if path in hidden:
                    still.append(path)
                elif self.files.remove(path):
                    self.outcome.removed.append(path)
                    removed_rules = removed_rules or path.rsplit("/", 1)[-1] == ".gitignore"
            pending = still if removed_rules else []  # fewer rules now: look at the rest again
            if not removed_rules:
                kept.extend(still)
        self.outcome.kept.extend(kept)
        return sorted(kept)

    def _ignored(self, paths: list[str]) -> set[str]:
        """The paths the workspace's ignore rules (the target's, once restored) hide; all of them
        when git cannot tell (e.g. a path beyond a symlink): then nothing is deleted."""
        if not paths:
            return set()
        code, out = self.git.call("check-ignore", "--no-index", "-z", "--stdin", stdin=nul_join(paths))
        return set(nul_split(out)) if code in (0, 1) else set(paths)

    def _remove_new_folders(self) -> None:
        """Folders emptied by the deletions that the target did not have."""
        if not self.outcome.removed:
            return
        keep = set(nul_split(self.git.run("ls-tree", "-r", "-d", "-z", "--name-only", END, self.plan.target)))
        if self.target_meta is not None:
            for folder in self.target_meta.dirs:
                parts = folder.split("/")
                keep.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        candidates = {p.rsplit("/", i)[0] for p in self.outcome.removed for i in range(1, p.count("/") + 1)}
        candidates -= keep
        candidates -= self._ignored(sorted(candidates))  # may have been there, hidden from the snapshot
        for folder in sorted(candidates, key=lambda p: -p.count("/")):
            self.files.remove_empty_dir(folder)

    def _make_empty_dirs(self) -> None:
        if self.target_meta is None:
            return
        for folder, bits in sorted(self.target_meta.dirs.items()):
            if self.files.kind(folder) is None:
                self.files.make_dir(folder, bits)

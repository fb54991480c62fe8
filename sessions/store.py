"""The session file: pi's v3 JSONL, appended durably, locked against a second writer.

Durability, the contract:

- Every entry is written whole, with one ``write`` of whole lines on an ``O_APPEND`` descriptor,
  before :meth:`SessionStore.append` returns. From then on it is in the kernel: baton killed at
  any moment (``kill -9``, a crash, the OOM killer, a closed terminal) loses no entry that was
  appended, and the file stays valid and resumable. At worst a kill in the middle of a very large
  write leaves a torn last line, which loading reports and skips; the next append cuts it off.
- A new file is created atomically (written to a temporary name, synced, renamed, its folder
  synced), so a file at its final path always starts with a whole header; a rewrite (a file
  migrated from pi v1/v2) is made the same way.
- Forcing the appended lines to the disk (``fsync``) only matters when the machine itself stops
  (power loss, a kernel crash). It happens when the agent's run ends (the session calls
  :meth:`SessionStore.sync`), when the store closes, and with an append that comes
  :data:`SYNC_INTERVAL_SECONDS` or more after the last sync (so a prompt typed after a pause is
  synced at once). A machine that stops in the middle of a run can lose the entries of that
  run's last :data:`SYNC_INTERVAL_SECONDS` (or, while a long tool runs, those appended since the
  last sync before it); what remains on disk still loads and resumes (a torn tail is skipped).
  Syncing every entry cost two ``fsync`` calls per tool-calling turn for a risk a process kill
  does not have.

Locking: a store that writes holds ``fcntl.flock(LOCK_EX)`` on the file for its lifetime; a second
process gets :class:`SessionLockedError` at once. Read-only loads (listing, export) take no lock.

Laziness: a new session's file is created with its first *message* entry (earlier entries, such
as the initial model choice, are written together with it), so starting baton and quitting
leaves no empty session behind. Files migrated from pi v1/v2 are rewritten as v3 (atomically)
just before the first new entry is appended, exactly as pi does on load.

How one entry becomes a line, how lines are read back, and the file operations themselves live
in :mod:`sessions.session_file`.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import math
import os
import stat
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from baton.agent.messages import AgentMessage
from baton.providers.bounded_read import NotRegularFileError, open_regular
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.messages import ImageContent, TextContent
from baton.sessions.context import SessionContext, build_session_context
from baton.sessions.entries import (
    CURRENT_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    OpaqueEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    entry_from_dict,
    iso_now,
    new_entry_id,
)
from baton.sessions.errors import SessionFileError
from baton.sessions.migrate import file_version, migrate
from baton.sessions.session_file import (
    LineReader,
    LoadReport,
    TailFix,
    entry_line,
    header_from,
    open_locked,
    require_regular,
    session_file_name,
    write_all,
    write_new_file,
)

SYNC_INTERVAL_SECONDS = 1.0
"""An append this long after the last sync is synced at once (see the module docstring)."""


class SessionStore:
    """One session: its header, its entries (file order) and the current leaf.

    Create with :meth:`create` (new file), :meth:`open` (existing file, locked for writing),
    :meth:`load` (read only) or :meth:`in_memory`. Appending makes the new entry a child of the
    leaf and moves the leaf to it; :meth:`branch` moves the leaf anywhere (the abandoned branch
    stays in the file)."""

    def __init__(self, header: SessionHeader, path: Path | None, *, writable: bool) -> None:
        self.header = header
        self.path = path
        self.writable = writable
        self.entries: list[SessionEntry] = []
        self.by_id: dict[str, SessionEntry] = {}
        self.labels: dict[str, str] = {}
        self.leaf_id: str | None = None
        self.report = LoadReport()
        self._fd: int | None = None
        self._rewrite_pending = False
        self._tail = TailFix()
        self.clock: Callable[[], float] = time.monotonic
        """What :data:`SYNC_INTERVAL_SECONDS` is measured with."""
        self._synced_at = -math.inf
        self._unsynced = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def create(
        cls, session_dir: Path, cwd: Path | str, *, parent_session: str | None = None, path: Path | None = None,
        session_id: str | None = None,
    ) -> SessionStore:
        """A new session in ``session_dir`` (the file appears with the first message entry);
        ``session_id``: the id it gets (a fresh one when ``None``)."""
        session_id = session_id or str(uuid.uuid4())
        timestamp = iso_now()
        header = SessionHeader(
            version=CURRENT_VERSION, id=session_id, timestamp=timestamp, cwd=str(cwd), parent_session=parent_session
        )
        target = path or Path(session_dir) / session_file_name(timestamp, session_id)
        return cls(header, target, writable=True)

    @classmethod
    def in_memory(cls, cwd: Path | str, session_id: str | None = None) -> SessionStore:
        """A session that is never written anywhere (``--no-session``)."""
        header = SessionHeader(version=CURRENT_VERSION, id=session_id or str(uuid.uuid4()), cwd=str(cwd))
        return cls(header, None, writable=False)

    @classmethod
    def open(cls, path: Path | str, *, cwd: Path | str | None = None) -> SessionStore:
        """Open a session file for reading and appending, holding its lock.

        A path that does not exist (or an empty file) becomes a new session at that path.
        Raises :class:`SessionLockedError` when another process has it open, and
        :class:`SessionFileError` when it is not a session file."""
        target = Path(path).expanduser().absolute()
        require_regular(target)
        if not target.exists() or target.stat().st_size == 0:
            # written (atomically, replacing an empty file) with the first message
            return cls.create(target.parent, cwd if cwd is not None else Path.cwd(), path=target)
        fd = open_locked(target)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for a FIFO or device since the check
                raise SessionFileError(f"{target} is not a session file (not a regular file)")
            with os.fdopen(os.dup(fd), "rb") as handle:  # the file locked is the file read
                store = cls._from_stream(handle, target, writable=True)
        except OSError as exc:
            os.close(fd)
            raise SessionFileError(f"Cannot read session file {target}: {exc.strerror or exc}") from exc
        except BaseException:
            os.close(fd)
            raise
        store._fd = fd
        return store

    @classmethod
    def load(cls, path: Path | str) -> SessionStore:
        """Read a session file without locking it (for listing, export and inspection)."""
        target = Path(path).expanduser().absolute()
        require_regular(target)
        try:
            fd = open_regular(target)  # never blocks on a FIFO swapped in since the check
        except NotRegularFileError:
            raise SessionFileError(f"{target} is not a session file (not a regular file)") from None
        except OSError as exc:
            raise SessionFileError(f"Cannot read session file {target}: {exc.strerror or exc}") from exc
        try:
            with os.fdopen(fd, "rb") as handle:
                return cls._from_stream(handle, target, writable=False)
        except OSError as exc:
            raise SessionFileError(f"Cannot read session file {target}: {exc.strerror or exc}") from exc

    @classmethod
    def read_stream(cls, handle: BinaryIO, path: Path) -> SessionStore:
        """A session read from bytes the caller opened and checked itself (``path`` names it in
        messages); read-only, like :meth:`load`."""
        return cls._from_stream(handle, path, writable=False)

    @classmethod
    def _from_stream(cls, handle: BinaryIO, path: Path, *, writable: bool) -> SessionStore:
        # Loading makes millions of small objects; the cyclic GC would rescan them over and over
        # (4x slower on 100k entries). Nothing here makes cycles, so pause it, and afterwards move
        # the survivors straight to the oldest generation (freeze + unfreeze: no scan) instead of
        # leaving millions of "young" objects for the next collections to walk.
        gc_enabled = gc.isenabled()
        gc.disable()
        try:
            reader = LineReader(handle, path)
            lines = iter(reader)
            raw_header = next(lines)
            entries: Iterable[JsonObject] = lines
            original_version = file_version(raw_header)
            if original_version < CURRENT_VERSION:
                everything = [raw_header, *lines]  # pi v1/v2: migrate the whole file in memory
                migrate(everything)
                entries = everything[1:]
            store = cls(header_from(raw_header, path), path, writable=writable)
            report = reader.report
            report.original_version = original_version
            store.report = report
            for number, raw in enumerate(entries, start=2):
                try:
                    entry = entry_from_dict(raw)
                except ValueError as exc:
                    report.warnings.append(f"{path.name}: entry {number} skipped: {exc}")
                    continue
                if isinstance(entry, OpaqueEntry):
                    report.warnings.append(f"{path.name}: entry {entry.id} kept as is ({entry.reason})")
                store._index(entry)
            store._reattach_orphans()
            if original_version > CURRENT_VERSION:
                report.warnings.append(
                    f"{path.name}: written by a newer version (session format {original_version}; this baton "
                    f"knows {CURRENT_VERSION}): entries it does not understand are kept as they are"
                )
            store._tail = reader.tail
            store._rewrite_pending = report.migrated
            return store
        finally:
            gc.freeze()
            gc.unfreeze()
            if gc_enabled:
                gc.enable()

    # ------------------------------------------------------------------ reading

    @property
    def session_id(self) -> str:
        """The session's id (the header's ``id``)."""
        return self.header.id

    @property
    def cwd(self) -> str:
        """The working directory recorded in the header."""
        return self.header.cwd

    @property
    def is_persisted(self) -> bool:
        """True when the session has a file (now, or from its first message on); ``False`` for
        an in-memory session."""
        return self.path is not None

    @property
    def warnings(self) -> list[str]:
        """Problems found while loading (skipped lines, entries kept as is)."""
        return self.report.warnings

    @property
    def name(self) -> str | None:
        """The display name from the latest ``session_info`` entry, if any."""
        for entry in reversed(self.entries):
            if isinstance(entry, SessionInfoEntry) and entry.name:
                return entry.name
        return None

    def get(self, entry_id: str) -> SessionEntry | None:
        """The entry with this id, or ``None``."""
        return self.by_id.get(entry_id)

    def children(self, entry_id: str | None) -> list[SessionEntry]:
        """Direct children of an entry (``None``: the roots), in file order."""
        return [e for e in self.entries if e.parent_id == entry_id]

    def branch_path(self, leaf_id: str | None = None) -> list[SessionEntry]:
        """Entries from the root down to ``leaf_id`` (default: the current leaf)."""
        start = self.leaf_id if leaf_id is None else leaf_id
        path: list[SessionEntry] = []
        seen: set[str] = set()
        current = self.by_id.get(start) if start else None
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def build_context(self, leaf_id: str | None = None) -> SessionContext:
        """Messages, model and thinking level the current branch (or ``leaf_id``'s) gives."""
        return build_session_context(self.branch_path(leaf_id), self.header)

    # ------------------------------------------------------------------ tree navigation

    def branch(self, entry_id: str | None) -> None:
        """Move the leaf to ``entry_id`` (``None``: before the first entry)."""
        if entry_id is not None and entry_id not in self.by_id:
            raise KeyError(f"Entry {entry_id} not found in session {self.session_id}")
        self.leaf_id = entry_id

    # ------------------------------------------------------------------ appending

    def append(self, entry: SessionEntry) -> SessionEntry:
        """Append ``entry`` (its ``parent_id`` is set to the leaf) durably, then move the leaf."""
        entry.parent_id = self.leaf_id
        self._persist(entry)
        self._index(entry)
        return entry

    def new_id(self) -> str:
        """A fresh entry id unique in this session."""
        return new_entry_id(self.by_id)

    def append_message(self, message: AgentMessage) -> MessageEntry:
        """Append a conversation message."""
        entry = MessageEntry(id=self.new_id(), message=message)
        self.append(entry)
        return entry

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        """Record a model switch."""
        entry = ModelChangeEntry(id=self.new_id(), provider=provider, model_id=model_id)
        self.append(entry)
        return entry

    def append_thinking_level_change(self, level: str) -> ThinkingLevelChangeEntry:
        """Record a thinking level change."""
        entry = ThinkingLevelChangeEntry(id=self.new_id(), thinking_level=level)
        self.append(entry)
        return entry

    def append_compaction(
        self, summary: str, first_kept_entry_id: str, tokens_before: int, details: JsonValue = None
    ) -> CompactionEntry:
        """Record a compaction: everything before ``first_kept_entry_id`` is summarised."""
        entry = CompactionEntry(
            id=self.new_id(),
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
        )
        self.append(entry)
        return entry

    def append_branch_summary(
        self, from_id: str | None, summary: str, details: JsonValue = None
    ) -> BranchSummaryEntry:
        """Move the leaf to ``from_id`` and record a summary of the branch left behind there."""
        self.branch(from_id)
        entry = BranchSummaryEntry(id=self.new_id(), from_id=from_id or "root", summary=summary, details=details)
        self.append(entry)
        return entry

    def append_custom(self, custom_type: str, data: JsonValue = None) -> CustomEntry:
        """Record extension state (never sent to a model)."""
        entry = CustomEntry(id=self.new_id(), custom_type=custom_type, data=data)
        self.append(entry)
        return entry

    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        display: bool = True,
        details: JsonValue = None,
    ) -> CustomMessageEntry:
        """Record an extension message that is part of the model's context."""
        entry = CustomMessageEntry(
            id=self.new_id(), custom_type=custom_type, content=content, display=display, details=details
        )
        self.append(entry)
        return entry

    def append_label(self, target_id: str, label: str | None) -> LabelEntry:
        """Set (or with ``None``/empty, clear) the label of an entry."""
        if target_id not in self.by_id:
            raise KeyError(f"Entry {target_id} not found in session {self.session_id}")
        entry = LabelEntry(id=self.new_id(), target_id=target_id, label=label or None)
        self.append(entry)
        return entry

    def append_session_info(self, name: str) -> SessionInfoEntry:
        """Record the session's display name."""
        entry = SessionInfoEntry(id=self.new_id(), name=name.strip())
        self.append(entry)
        return entry

    # ------------------------------------------------------------------ new files from this one

    def fork(self, leaf_id: str | None, session_dir: Path | None = None) -> SessionStore:
        """A new session holding only the path root → ``leaf_id`` (labels on it carried over).

        The new file names this one as its ``parentSession``; it is written at once when the
        path holds a message (otherwise with its first message)."""
        path = [e for e in self.branch_path(leaf_id) if not isinstance(e, LabelEntry)] if leaf_id else []
        directory = session_dir or (self.path.parent if self.path else None)
        if self.is_persisted and directory is not None:
            new = SessionStore.create(directory, self.cwd, parent_session=str(self.path) if self.path else None)
        else:
            new = SessionStore.in_memory(self.cwd)
        new._buffer_existing(path)
        kept = {e.id for e in path}
        for target, label in self.labels.items():
            if target in kept:
                new._buffer_existing([LabelEntry(id=new.new_id(), target_id=target, label=label)], chain=True)
        if any(isinstance(e, MessageEntry) for e in new.entries):
            new._materialize()
        return new

    # ------------------------------------------------------------------ lifetime

    def sync(self) -> None:
        """Force every entry appended so far to the disk (see the module docstring: the end of a
        run, closing); raises ``OSError`` when the disk refuses."""
        if self._fd is not None and self._unsynced:
            self._unsynced = False  # the next append syncs or marks again, even if this one fails
            os.fsync(self._fd)
        self._synced_at = self.clock()

    def close(self) -> None:
        """Sync what was appended, then release the lock and the file descriptor (the store can
        still be read)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.sync()
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        self.writable = False

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _index(self, entry: SessionEntry) -> None:
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self.leaf_id = entry.id
        if isinstance(entry, LabelEntry):
            if entry.label:
                self.labels[entry.target_id] = entry.label
            else:
                self.labels.pop(entry.target_id, None)

    def _reattach_orphans(self) -> None:
        """An entry whose parent is missing (a damaged or skipped line) would cut the history
        before it out of every path through it: attach it to the entry before it in the file
        instead (in memory; the file is not changed), and say so."""
        previous: SessionEntry | None = None
        for entry in self.entries:
            parent = entry.parent_id
            if parent is not None and (parent not in self.by_id or parent == entry.id):
                entry.parent_id = previous.id if previous is not None else None
                name = self.path.name if self.path else "session"
                where = f"the entry before it ({previous.id})" if previous is not None else "the root"
                self.report.warnings.append(
                    f"{name}: entry {entry.id} names a missing parent {parent}; attached to {where}"
                )
            previous = entry

    def _buffer_existing(self, entries: Iterable[SessionEntry], *, chain: bool = False) -> None:
        for entry in entries:
            copy = entry.model_copy()
            if chain:
                copy.parent_id = self.leaf_id
            self._index(copy)

    def _persist(self, entry: SessionEntry) -> None:
        if not self.writable or self.path is None:
            return
        if self._fd is None:
            if isinstance(entry, MessageEntry):
                self._materialize(extra=entry)
            return
        if self._rewrite_pending:
            self._rewrite(extra=entry)
            return
        line = entry_line(entry)
        if self._tail.truncate_to is not None:
            os.ftruncate(self._fd, self._tail.truncate_to)
        elif self._tail.add_newline:
            line = b"\n" + line
        self._tail = TailFix()
        write_all(self._fd, line)
        self._unsynced = True
        if self.clock() - self._synced_at >= SYNC_INTERVAL_SECONDS:
            self.sync()

    def _materialize(self, extra: SessionEntry | None = None) -> None:
        """Create the file (header + every entry so far + ``extra``) atomically, locked."""
        assert self.path is not None
        self._fd = write_new_file(self.path, self._lines(extra))
        self._rewrite_pending = False
        self._tail = TailFix()
        self._unsynced, self._synced_at = False, self.clock()  # written whole and synced

    def _rewrite(self, extra: SessionEntry | None = None) -> None:
        """Replace the file with its v3 form (+ ``extra``), keeping the lock throughout."""
        assert self.path is not None
        old = self._fd
        self._fd = write_new_file(self.path, self._lines(extra))
        self._rewrite_pending = False
        self._tail = TailFix()
        self._unsynced, self._synced_at = False, self.clock()
        if old is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(old, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.close(old)

    def _lines(self, extra: SessionEntry | None) -> bytes:
        self.header.version = CURRENT_VERSION
        parts = [entry_line(self.header)]
        parts.extend(entry_line(e) for e in self.entries)
        if extra is not None:
            parts.append(entry_line(extra))
        return b"".join(parts)

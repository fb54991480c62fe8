"""Checkpoints wired into a coding session: snapshot before the first mutating tool call of
each prompt, record what the run changed, and rewind code and conversation.

Read-only turns cost nothing: the before-gate looks only at the tool's ``read_only`` trait, and
the end of a run is recorded only when a snapshot was taken in it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from baton.agent.events import AgentEndEvent, MessageEndEvent
from baton.agent.execution import BeforeToolCallResult, ToolCallContext
from baton.providers.json_types import JsonObject
from baton.providers.messages import UserMessage
from baton.sessions.checkpoints.errors import CheckpointError
from baton.sessions.checkpoints.git import find_git
from baton.sessions.checkpoints.records import (
    CUSTOM_TYPE,
    Checkpoint,
    Record,
    hand_edits_since,
    last_state,
    list_checkpoints,
    read_records,
)
from baton.sessions.checkpoints.store import CheckpointStore, Snapshot
from baton.sessions.errors import SessionBusyError, SessionError
from baton.sessions.events import AnySessionEvent, SessionChangedEvent

if TYPE_CHECKING:
    from baton.sessions.extension_host import SessionHost

logger = logging.getLogger(__name__)

RestoreMode = Literal["both", "conversation", "code"]


@dataclass
class RewindResult:
    """What :meth:`CodingSession.rewind` did (or, with ``needs_confirmation``, would do)."""

    restored: list[str] = field(default_factory=list)
    """Files written back to their state at the checkpoint (workspace-relative)."""
    removed: list[str] = field(default_factory=list)
    """Files created after the checkpoint, deleted."""
    kept: list[str] = field(default_factory=list)
    """Files the checkpoint had that are now ignored or oversized, left alone."""
    hand_edited: list[str] = field(default_factory=list)
    """Files changed by hand since the checkpoint that the rewind overwrites or deletes."""
    needs_confirmation: bool = False
    """Nothing was changed: call again with ``confirm_hand_edits=True`` to go ahead."""
    text: str | None = None
    """The prompt's text, for the editor (conversation rewinds to a prompt)."""
    checkpoint_id: str | None = None
    """The ``before rewind`` entry recorded for a code rewind (rewind to it to undo)."""
    code_restored: bool = False
    conversation_moved: bool = False

    def summary(self) -> str:
        """``restored 5 files, removed 1`` (or what happened instead)."""
        if self.needs_confirmation:
            return f"{len(self.hand_edited)} file(s) changed by hand since then; confirm to overwrite them"
        parts = []
        if self.code_restored:
            parts.append(f"restored {_files(len(self.restored))}, removed {len(self.removed)}")
            if self.kept:
                parts.append(f"left {len(self.kept)} ignored or large")
        if self.conversation_moved:
            parts.append("conversation moved back")
        return "; ".join(parts) or "nothing to do"

    def to_json(self) -> JsonObject:
        """JSON for scripts (the RPC ``rewind`` response data)."""
        return {
            "restored": list(self.restored),
            "removed": list(self.removed),
            "kept": list(self.kept),
            "handEdited": list(self.hand_edited),
            "needsConfirmation": self.needs_confirmation,
            "text": self.text,
            "checkpointId": self.checkpoint_id,
        }


def _size(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MB" if limit >= 1024 * 1024 else f"{limit:,} bytes"


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


class SessionCheckpoints:
    """Checkpoints of one coding session (create with :func:`attach`)."""

    def __init__(self, session: SessionHost, store: CheckpointStore | None, notice: str | None) -> None:
        self.session = session
        self.store = store
        self.notice = notice
        """Why checkpoints are off, if they are (one line for the UI)."""
        self._reported: set[str] = set()
        """Files already named as left out of a snapshot (each is named once per session)."""
        self._lock = asyncio.Lock()
        self._prompt: str | None = None
        self._snapshotted_for: object = None
        self._failed_for: object = None
        self._run_prompt: str | None = None
        self._run_open = False
        self._last: str | None = None
        self.prune_thread: threading.Thread | None = None
        self.reload()

    @property
    def enabled(self) -> bool:
        """Whether snapshots are taken."""
        return self.store is not None

    def reload(self) -> None:
        """Adopt the session file's state (after open, resume, new, fork)."""
        self._last = last_state(read_records(self.session.store))
        self._prompt = None
        self._snapshotted_for = None
        self._run_open = False

    # ------------------------------------------------------------------ events and gate

    def on_event(self, event: AnySessionEvent) -> Awaitable[Record | None] | None:
        """Session listener: tracks the current prompt and closes a run with an ``after`` entry."""
        match event:
            case MessageEndEvent(message=UserMessage()):
                self._prompt = self.session.store.leaf_id
            case SessionChangedEvent():
                self.reload()
            case AgentEndEvent() if self._run_open:
                return self._take("after", self._prompt)
        return None

    async def gate(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """Before-gate: snapshot once per prompt, before its first mutating tool call; then make
        sure the files edit and write are about to change are in it whatever the ignore rules say."""
        if self.store is None or context.tool.read_only:
            return None
        key = self._prompt or id(self)
        if self._failed_for == key:
            return None
        if not (self._snapshotted_for == key and self._run_open):
            async with self._lock:  # parallel calls of one batch: only the first snapshots
                # Again for the same prompt only when its run was closed (an automatic retry runs
                # tools after the "after" entry: their changes must count as the agent's).
                if self._snapshotted_for != key or not self._run_open:
                    if await self._take("before", self._prompt) is None and not self._run_open:
                        self._failed_for = key  # tried once for this prompt; tools go ahead
                    self._snapshotted_for = key
        paths = self._tool_paths(context)
        if paths and self._run_open:
            async with self._lock:
                await self._track(paths)
        return None

    def _tool_paths(self, context: ToolCallContext) -> list[str]:
        """The workspace-relative file a call of a tool that changes files names (edit, write;
        none for other tools)."""
        tool = context.tool
        raw = tool.path_of(context.tool_call.arguments or {})
        if not tool.changes_files() or raw is None or self.store is None:
            return []
        from baton.tools.paths import resolve_path

        full = resolve_path(raw, str(self.session.cwd))
        parent = os.path.realpath(os.path.dirname(full))
        root = str(self.store.workspace)
        if parent != root and not parent.startswith(root + os.sep):
            return []
        rel = os.path.relpath(os.path.join(parent, os.path.basename(full)), root)
        return [rel] if rel != "." and not rel.startswith("..") else []

    async def _track(self, paths: list[str]) -> None:
        """Amend the run's snapshot with ``paths`` where ignore rules had left them out."""
        store = self.store
        if store is None:
            return
        try:
            snap = await asyncio.to_thread(store.track, paths, self._last)
        except (CheckpointError, OSError) as exc:
            self._warn(f"Checkpoint failed: {exc} (/rewind may not take back this turn's file changes)")
            return
        if snap is None:
            return
        data: JsonObject = {
            "kind": "amend", "commit": snap.commit, "previous": self._last, "changes": snap.changes.to_json(),
            "byAgent": True, "changesFor": self._run_prompt, "userEntryId": self._run_prompt,
        }
        self._note_skipped(snap, data)
        self._append(data)
        self._last = snap.commit

    async def _take(self, kind: str, prompt: str | None) -> Record | None:
        store = self.store
        if store is None:
            return None
        try:
            snap = await asyncio.to_thread(store.snapshot, self._last)
        except (CheckpointError, OSError) as exc:
            message = f"Checkpoint failed: {exc}"
            self._warn(f"{message} (/rewind cannot take back this turn's file changes)")
            if kind == "after":
                self._run_open = False
            return None
        by_agent = kind == "after" or self._run_open
        data: JsonObject = {
            "kind": kind,
            "commit": snap.commit,
            "previous": self._last,
            "changes": snap.changes.to_json(),
            "byAgent": by_agent,
            "changesFor": self._run_prompt if by_agent else None,
            "userEntryId": prompt,
        }
        self._note_skipped(snap, data)
        entry = self._append(data)
        self._last = snap.commit
        if kind == "before":
            self._run_open, self._run_prompt = True, prompt
        else:
            self._run_open, self._run_prompt = False, None
        return entry

    def _note_skipped(self, snap: Snapshot, data: JsonObject) -> None:
        if not snap.skipped:
            return
        data["skipped"] = list(snap.skipped)
        fresh = [f for f in snap.skipped if f not in self._reported]
        if fresh:
            self._reported.update(fresh)
            limit = self.store.max_file_bytes if self.store is not None else 0
            names = ", ".join(fresh[:5]) + (f" and {len(fresh) - 5} more" if len(fresh) > 5 else "")
            self._warn(f"Left out of the checkpoint (over {_size(limit)}; /rewind will not restore them): {names}")

    def _warn(self, text: str) -> None:
        """A checkpoint problem the user hears about in every mode (a notice in the app, a
        stderr line with ``-p``, an ``extension_notice`` event in JSON and RPC)."""
        logger.info("%s", text)  # the notice is what the user sees (a warning would print twice)
        self.session.events.notice("checkpoints", "warning", text)

    def _append(self, data: JsonObject) -> Record | None:
        try:
            entry = self.session.store.append_custom(CUSTOM_TYPE, data)
        except OSError as exc:
            self._warn(f"Could not record the checkpoint: {exc}")
            return None
        records = read_records(self.session.store)
        return records[-1] if records and records[-1].entry_id == entry.id else None

    # ------------------------------------------------------------------ listing and rewinding

    def checkpoints(self) -> list[Checkpoint]:
        """This session's prompts and ``before rewind`` states, newest first."""
        return list_checkpoints(self.session.store)

    async def rewind(
        self, entry_id: str, restore: RestoreMode = "both", *, confirm_hand_edits: bool = False
    ) -> RewindResult:
        """Rewind code, conversation or both to the checkpoint ``entry_id`` (see
        :meth:`CodingSession.rewind`)."""
        if restore not in ("both", "conversation", "code"):
            raise ValueError(f"restore must be both, conversation or code, not {restore!r}")
        session = self.session
        if session.is_running:
            raise SessionBusyError("Cannot rewind while the session is running; abort first")
        point = next((p for p in self.checkpoints() if p.entry_id == entry_id), None)
        if point is None:
            raise SessionError(f"Entry {entry_id} is not a checkpoint of this session")
        result = RewindResult()
        if restore in ("both", "code"):
            result = await self._rewind_code(point, confirm_hand_edits)
            if result.needs_confirmation:
                return result
        if restore in ("both", "conversation"):
            # A prompt: the leaf moves to just before it. A "before rewind" entry: the leaf moves
            # to it, i.e. where the conversation was when that rewind started.
            result.text = session.navigate(point.entry_id)
            result.conversation_moved = True
        return result

    async def _rewind_code(self, point: Checkpoint, confirm: bool) -> RewindResult:
        store = self.store
        result = RewindResult(code_restored=True)
        if point.commit is None:
            return result  # nothing changed after this prompt
        if store is None:
            raise CheckpointError(self.notice or "Checkpoints are off")
        async with self._lock:
            current = await asyncio.to_thread(store.snapshot, self._last)
            effect = await asyncio.to_thread(store.diff, current.commit, point.commit)
            records = read_records(self.session.store)
            hand = hand_edits_since(records, point.commit_index) | set(current.changes.files)
            result.hand_edited = sorted(hand.intersection(effect.files))
            if result.hand_edited and not confirm:
                result.needs_confirmation = True
                result.code_restored = False
                return result
            data: JsonObject = {
                "kind": "rewind",
                "commit": current.commit,
                "previous": self._last,
                "changes": current.changes.to_json(),
                "byAgent": False,
                "changesFor": None,
                "userEntryId": None,
                "target": point.commit,
                # diff(current → target): its added files come back, its deleted ones go
                "effect": effect.to_json(),
            }
            self._note_skipped(current, data)
            recorded = self._append(data)
            result.checkpoint_id = recorded.entry_id if recorded else None
            outcome = await asyncio.to_thread(store.restore, point.commit, current.commit)
            self._last = point.commit
        result.restored, result.removed, result.kept = outcome.restored, outcome.removed, outcome.kept
        return result

    # ------------------------------------------------------------------ retention

    def start_pruning(self, keep_days: float) -> None:
        """Prune old snapshots in a background thread (never blocks start-up)."""
        store = self.store
        if store is None or keep_days <= 0 or not store.git_dir.is_dir():
            return

        def prune() -> None:
            try:
                store.prune(keep_days)
            except (CheckpointError, OSError) as exc:
                logger.info("checkpoint pruning failed: %s", exc)

        self.prune_thread = threading.Thread(target=prune, name="baton-checkpoint-prune", daemon=True)
        self.prune_thread.start()


def attach(session: SessionHost) -> SessionCheckpoints:
    """Set up checkpoints for ``session`` as its settings say, and register the gate."""
    settings = session.settings.checkpoints
    store: CheckpointStore | None = None
    notice: str | None = None
    git = find_git()
    workspace = Path(os.path.realpath(session.cwd))
    if not settings.enabled:
        notice = "Checkpoints are off (checkpoints.enabled is false): /rewind cannot take back file changes."
    elif git is None:
        notice = "Checkpoints are off: git was not found (install git to be able to rewind file changes)."
    elif workspace in (Path(os.path.realpath(Path.home())), Path(workspace.anchor)):
        notice = f"Checkpoints are off in {workspace} (start baton in a project directory to use /rewind)."
    else:
        store = CheckpointStore(workspace, git=git, max_file_bytes=settings.max_file_bytes)
    tracker = SessionCheckpoints(session, store, notice)
    if store is not None:
        session.tool_gates.add_before("checkpoints", tracker.gate)
        session.events.subscribe(tracker.on_event)
        tracker.start_pruning(settings.keep_days)
    return tracker

"""Checkpoint entries in the session file, and the list the picker (and scripts) show.

Each snapshot is recorded as a ``custom`` entry with ``customType: "checkpoint"`` and ``data``:

``kind``         ``"before"`` (first mutating tool call of a prompt), ``"amend"`` (the same
                 state with files a tool was about to write that ignore rules had kept out),
                 ``"after"`` (end of that run) or ``"rewind"`` (the workspace just before a code
                 rewind)
``commit``       the snapshot commit in the shadow repository
``previous``     the state the session knew before it (``changes`` are relative to it)
``changes``      ``{"added", "modified", "deleted"}`` since ``previous``
``byAgent``      whether those changes happened during an agent run (else: by hand)
``changesFor``   the user message entry whose run made them (``byAgent`` only)
``userEntryId``  the user message the snapshot belongs to (``before``/``after``)
``skipped``      files over the size limit, left out
``target``       (``rewind``) the commit the workspace was restored to
``effect``       (``rewind``) what the restore changed

Entries are read in file order, which is the workspace's time order whatever branch they sit on.

A session file is input like any other: an entry is read as a checkpoint only when its commits are
full hex object ids (and the store then uses only the ones that are its own snapshots of this
workspace), so an entry is history, never a way to hand git an option or a foreign object.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from baton.providers.json_types import JsonObject
from baton.providers.messages import TextContent, UserMessage
from baton.sessions.checkpoints.changes import Changes
from baton.sessions.checkpoints.git import is_object_id
from baton.sessions.entries import CustomEntry, MessageEntry, ModelChangeEntry, SessionEntry
from baton.sessions.store import SessionStore

CUSTOM_TYPE = "checkpoint"


@dataclass
class Record:
    """One ``checkpoint`` entry, read back."""

    entry_id: str
    index: int
    """Position in the file."""
    timestamp: str
    kind: str
    commit: str
    previous: str | None
    changes: Changes
    by_agent: bool
    changes_for: str | None
    user_entry_id: str | None
    skipped: list[str]
    target: str | None
    effect: Changes

    @property
    def state(self) -> str:
        """The commit the workspace was in once this entry was written."""
        return self.target or self.commit


@dataclass
class Checkpoint:
    """A point the session can be rewound to: a user prompt, or the state before a rewind."""

    entry_id: str
    kind: Literal["prompt", "rewind"]
    text: str
    timestamp: str
    model: str | None
    commit: str | None
    """The workspace state a code rewind restores (``None``: nothing changed since)."""
    changes: Changes = field(default_factory=Changes)
    """What the agent changed after this prompt (for a rewind: what the rewind changed)."""
    skipped: list[str] = field(default_factory=list)
    """Files left out of that snapshot for their size (a code rewind leaves them as they are)."""
    index: int = 0
    """Position of the prompt (or rewind) entry in the file."""
    commit_index: int = -1
    """Position of the checkpoint entry whose commit a code rewind restores."""

    def label(self) -> str:
        """One line for a picker: the prompt, or ``before rewind``."""
        if self.kind == "rewind":
            return "before rewind"
        return " ".join(self.text.split()) or "(empty prompt)"

    def to_json(self) -> JsonObject:
        """The JSON shape of ``get_checkpoints`` and ``baton --checkpoints``."""
        return {
            "entryId": self.entry_id,
            "kind": self.kind,
            "prompt": self.text,
            "timestamp": self.timestamp,
            "model": self.model,
            "commit": self.commit,
            "changedFiles": list(self.changes.files),
            "changes": self.changes.to_json(),
            "skipped": list(self.skipped),
        }


def read_records(store: SessionStore) -> list[Record]:
    """Every checkpoint entry of the session (all branches), in file order."""
    records = []
    for index, entry in enumerate(store.entries):
        record = _record(entry, index)
        if record is not None:
            records.append(record)
    return records


def checkpoint_record(entry: SessionEntry, index: int = 0) -> Record | None:
    """The checkpoint ``entry`` records (``index``: its position in the file), or ``None`` when
    it is not a readable checkpoint entry."""
    return _record(entry, index)


def _record(entry: SessionEntry, index: int) -> Record | None:
    if not (isinstance(entry, CustomEntry) and entry.custom_type == CUSTOM_TYPE and isinstance(entry.data, dict)):
        return None
    data = entry.data
    commit = data.get("commit")
    if not is_object_id(commit) or any(data.get(k) is not None and not is_object_id(data.get(k))
                                       for k in ("previous", "target")):
        return None

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    skipped = data.get("skipped")
    return Record(
        entry_id=entry.id,
        index=index,
        timestamp=entry.timestamp,
        kind=text("kind") or "before",
        commit=str(commit),
        previous=text("previous"),
        changes=Changes.from_json(data.get("changes")),
        by_agent=data.get("byAgent") is True,
        changes_for=text("changesFor"),
        user_entry_id=text("userEntryId"),
        skipped=[s for s in skipped if isinstance(s, str)] if isinstance(skipped, list) else [],
        target=text("target"),
        effect=Changes.from_json(data.get("effect")),
    )


def user_text(content: object) -> str:
    """The text of a user message's content."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def list_checkpoints(store: SessionStore) -> list[Checkpoint]:
    """The user prompts of the current branch and the ``before rewind`` states, newest first."""
    records = read_records(store)
    positions = {entry.id: i for i, entry in enumerate(store.entries)}
    points: list[Checkpoint] = []
    model: str | None = None
    for entry in store.branch_path():
        if isinstance(entry, ModelChangeEntry):
            model = f"{entry.provider}/{entry.model_id}"
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            index = positions.get(entry.id, 0)
            later = _amended(records, next((i for i, r in enumerate(records) if r.index > index), None))
            changes = Changes()
            for record in records:
                if record.by_agent and record.changes_for == entry.id:
                    changes = changes.merged(record.changes)
            points.append(
                Checkpoint(
                    entry_id=entry.id,
                    kind="prompt",
                    text=user_text(entry.message.content),
                    timestamp=entry.timestamp,
                    model=model,
                    commit=later.commit if later is not None else None,
                    changes=changes,
                    skipped=later.skipped if later is not None else [],
                    index=index,
                    commit_index=later.index if later is not None else -1,
                )
            )
    for record in records:
        if record.kind == "rewind":
            points.append(
                Checkpoint(
                    entry_id=record.entry_id,
                    kind="rewind",
                    text="",
                    timestamp=record.timestamp,
                    model=None,
                    commit=record.commit,
                    changes=record.effect,
                    skipped=record.skipped,
                    index=record.index,
                    commit_index=record.index,
                )
            )
    points.sort(key=lambda p: p.index, reverse=True)
    return points


def _amended(records: list[Record], position: int | None) -> Record | None:
    """The record at ``position`` as amended by the ``amend`` records right after it (files a
    tool was about to write that the snapshot had left out), with every skipped file named."""
    if position is None:
        return None
    state = records[position]
    skipped = list(state.skipped)
    for record in records[position + 1 :]:
        if record.kind != "amend" or record.previous != state.commit:
            break
        state = record
        skipped += [s for s in record.skipped if s not in skipped]
    if state is records[position] or skipped == state.skipped:
        return state
    return replace(state, skipped=skipped)


def hand_edits_since(records: list[Record], index: int) -> set[str]:
    """Files changed outside agent runs after the checkpoint entry at file position ``index``
    (what that entry's own changes say happened before its snapshot, so it is not counted)."""
    files: set[str] = set()
    for record in records:
        if record.index > index and not record.by_agent:
            files.update(record.changes.files)
    return files


def last_state(records: list[Record]) -> str | None:
    """The workspace state the session last knew of (``None``: no checkpoint yet)."""
    return records[-1].state if records else None

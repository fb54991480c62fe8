"""Session file entries: pi's v3 JSONL format as pydantic models.

A session file is a header line (``type: "session"``) followed by entries, each with ``id``,
``parentId`` (``null`` for a root) and an ISO-8601 ``timestamp``; together they form a tree.
Known entry types validate into the classes below; an entry of an unknown type (or a known type
this version cannot read) becomes an :class:`OpaqueEntry` that keeps its JSON exactly and is
written back unchanged, so nothing is lost when baton re-saves a file written by a newer tool.
"""

from __future__ import annotations

import uuid
from collections.abc import Container
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_serializer, field_validator

from baton.agent.messages import AgentMessage, agent_message_from_dict, agent_message_to_dict
from baton.providers.json_types import JsonObject
from baton.providers.messages import ImageContent, TextContent

CURRENT_VERSION = 3


def iso_now() -> str:
    """The current time as JavaScript's ``toISOString()`` writes it (UTC, milliseconds, ``Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_to_ms(timestamp: str | int | float | None) -> int:
    """Milliseconds since the epoch for an ISO-8601 timestamp (0 when it cannot be read)."""
    if isinstance(timestamp, int | float):
        return int(timestamp)
    if not timestamp:
        return 0
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def new_entry_id(taken: Container[str]) -> str:
    """A short id (8 hex characters, pi's format) not in ``taken``."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate
    return str(uuid.uuid4())


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")


class SessionHeader(_Model):
    """The first line of a session file. pi v1 headers also carried the initial provider, model
    and thinking level; those (and any other extra keys) are kept."""

    type: Literal["session"] = "session"
    version: int | None = None
    id: str
    timestamp: str = Field(default_factory=iso_now)
    cwd: str = ""
    parent_session: str | None = Field(default=None, alias="parentSession")

    def to_dict(self) -> JsonObject:
        """pi's JSON form."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class SessionEntry(_Model):
    """Fields every entry has. ``parent_id`` is ``None`` for a root entry."""

    type: str
    id: str
    parent_id: str | None = Field(default=None, alias="parentId")
    timestamp: str = Field(default_factory=iso_now)

    def to_dict(self) -> JsonObject:
        """pi's JSON form (``parentId`` is always written, ``null`` for a root)."""
        data = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        data.pop("parentId", None)
        return {"type": data.pop("type"), "id": data.pop("id"), "parentId": self.parent_id, **data}


class MessageEntry(SessionEntry):
    """A message of the conversation (user, assistant, tool result, bash execution, custom...)."""

    type: Literal["message"] = "message"
    message: AgentMessage

    @field_validator("message", mode="before")
    @classmethod
    def _parse_message(cls, value: object) -> object:
        return agent_message_from_dict(value) if isinstance(value, dict) else value

    @field_serializer("message")
    def _dump_message(self, message: AgentMessage) -> dict[str, object]:  # pydantic reads this annotation
        return {**agent_message_to_dict(message)}


class ModelChangeEntry(SessionEntry):
    """The model was switched (``provider`` + ``modelId``)."""

    # pydantic before 2.10 reserves every `model_` attribute name and warns at import; none clash here.
    model_config = ConfigDict(protected_namespaces=())

    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str = Field(alias="modelId")


class ThinkingLevelChangeEntry(SessionEntry):
    """The thinking level was changed."""

    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str = Field(alias="thinkingLevel")


class CompactionEntry(SessionEntry):
    """Everything on the path before ``first_kept_entry_id`` is replaced by ``summary``."""

    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str = Field(alias="firstKeptEntryId")
    tokens_before: int = Field(default=0, alias="tokensBefore")
    details: object = None
    """Free-form, as written (narrow before use: a file may hold anything here)."""
    from_hook: bool | None = Field(default=None, alias="fromHook")


class BranchSummaryEntry(SessionEntry):
    """A summary of a branch the user navigated away from."""

    type: Literal["branch_summary"] = "branch_summary"
    from_id: str = Field(alias="fromId")
    summary: str
    details: object = None
    from_hook: bool | None = Field(default=None, alias="fromHook")


class CustomEntry(SessionEntry):
    """Extension state; never part of the model's context."""

    type: Literal["custom"] = "custom"
    custom_type: str = Field(alias="customType")
    data: object = None
    """Free-form, as written (narrow before use: a file may hold anything here)."""


class CustomMessageEntry(SessionEntry):
    """An extension message that is part of the model's context (as a user message)."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str = Field(alias="customType")
    content: str | list[TextContent | ImageContent]
    details: object = None
    display: bool = True


class LabelEntry(SessionEntry):
    """A user bookmark on another entry; ``label=None`` clears it."""

    type: Literal["label"] = "label"
    target_id: str = Field(alias="targetId")
    label: str | None = None


class SessionInfoEntry(SessionEntry):
    """Session metadata, e.g. the display name."""

    type: Literal["session_info"] = "session_info"
    name: str | None = None


class OpaqueEntry(SessionEntry):
    """An entry this version does not understand: kept verbatim and written back unchanged.

    It still takes part in the tree (``id``/``parentId``) but never in the model's context."""

    reason: str = Field(default="", exclude=True)
    _raw: JsonObject = PrivateAttr(default_factory=dict)

    def to_dict(self) -> JsonObject:
        return dict(self._raw)


ENTRY_TYPES: dict[str, type[SessionEntry]] = {
    "message": MessageEntry,
    "model_change": ModelChangeEntry,
    "thinking_level_change": ThinkingLevelChangeEntry,
    "compaction": CompactionEntry,
    "branch_summary": BranchSummaryEntry,
    "custom": CustomEntry,
    "custom_message": CustomMessageEntry,
    "label": LabelEntry,
    "session_info": SessionInfoEntry,
}


def entry_from_dict(data: JsonObject) -> SessionEntry:
    """Validate one entry line. Unknown types and unreadable known types become
    :class:`OpaqueEntry` (kept verbatim); an entry without a string ``id`` raises ``ValueError``."""
    entry_id = data.get("id")
    if not isinstance(entry_id, str):
        raise ValueError("entry has no 'id'")
    parent = data.get("parentId")
    cls = ENTRY_TYPES.get(str(data.get("type")))
    if cls is not None:
        try:
            return cls.model_validate(data)
        except (ValidationError, ValueError, TypeError) as exc:
            reason = f"unreadable {data.get('type')} entry: {_first_error(exc)}"
    else:
        reason = f"unknown entry type {data.get('type')!r}"
    kept = OpaqueEntry(
        type=str(data.get("type")),
        id=entry_id,
        parent_id=parent if isinstance(parent, str) else None,
        timestamp=str(data.get("timestamp") or ""),
        reason=reason,
    )
    kept._raw = data  # written back exactly as read
    return kept


def entry_to_dict(entry: SessionEntry | SessionHeader) -> JsonObject:
    """pi's JSON form of an entry or header."""
    return entry.to_dict()


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if errors:
            first = errors[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

"""What a branch of the session tree gives the model: messages, model and thinking level.

pi's rules (``buildSessionContext``): walk the path root → leaf; the latest model change (or
assistant message — unless it started before that change: a mid-run switch) and thinking level
change on the path win; with a compaction on the path, the
context is its summary, then the path entries from its ``firstKeptEntryId`` up to the compaction
(the tool results its ``details`` lists as cut are cut: :mod:`sessions.context_cut`), then
everything after it. Entries that are not messages (labels, custom state, changes) add no
message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from baton.agent.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import AssistantMessage, ToolResultMessage
from baton.sessions.context_cut import cut_result, cuts_of
from baton.sessions.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    ThinkingLevelChangeEntry,
    iso_to_ms,
)


@dataclass(slots=True)
class SessionContext:
    """The context of one branch. ``entry_ids[i]`` is the entry that produced ``messages[i]``."""

    messages: list[AgentMessage] = field(default_factory=list)
    thinking_level: str | None = None
    model: tuple[str, str] | None = None
    """``(provider, model_id)`` of the latest model change or assistant message on the path."""
    entry_ids: list[str] = field(default_factory=list)
    compaction: CompactionEntry | None = None


def entry_message(entry: SessionEntry) -> AgentMessage | None:
    """The message an entry contributes to the context (``None`` for non-message entries)."""
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage(
            custom_type=entry.custom_type,
            content=entry.content,
            display=entry.display,
            details=entry.details,
            timestamp=iso_to_ms(entry.timestamp),
        )
    if isinstance(entry, BranchSummaryEntry) and entry.summary:
        return BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=iso_to_ms(entry.timestamp))
    return None


def compaction_message(entry: CompactionEntry) -> CompactionSummaryMessage:
    """The summary message a compaction entry puts at the start of the context."""
    return CompactionSummaryMessage(
        summary=entry.summary, tokens_before=entry.tokens_before, timestamp=iso_to_ms(entry.timestamp)
    )


def build_session_context(path: list[SessionEntry], header: SessionHeader | None = None) -> SessionContext:
    """The context of the branch ``path`` (root first)."""
    ctx = SessionContext()
    extra = (header.model_extra or {}) if header is not None else {}
    # pi v1 headers carried the starting model and thinking level
    if isinstance(extra.get("provider"), str) and isinstance(extra.get("modelId"), str):
        ctx.model = (extra["provider"], extra["modelId"])
    if isinstance(extra.get("thinkingLevel"), str):
        ctx.thinking_level = extra["thinkingLevel"]

    compaction_index = -1
    changed_at = 0
    for index, entry in enumerate(path):
        if isinstance(entry, ThinkingLevelChangeEntry):
            ctx.thinking_level = entry.thinking_level
        elif isinstance(entry, ModelChangeEntry):
            ctx.model = (entry.provider, entry.model_id)
            changed_at = iso_to_ms(entry.timestamp)
        elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            # a reply that was already streaming when the model was switched does not undo the switch
            if entry.message.timestamp >= changed_at:
                ctx.model = (entry.message.provider, entry.message.model)
        elif isinstance(entry, CompactionEntry):
            compaction_index = index

    if compaction_index < 0:
        _append_all(ctx, path)
        return ctx

    compaction = path[compaction_index]
    assert isinstance(compaction, CompactionEntry)
    ctx.compaction = compaction
    ctx.messages.append(compaction_message(compaction))
    ctx.entry_ids.append(compaction.id)
    kept_from = next(
        (i for i in range(compaction_index) if path[i].id == compaction.first_kept_entry_id), compaction_index
    )
    _append_all(ctx, path[kept_from:compaction_index], cuts_of(compaction.details))
    _append_all(ctx, path[compaction_index + 1 :])
    return ctx


def _append_all(ctx: SessionContext, entries: list[SessionEntry], cuts: Mapping[str, int] | None = None) -> None:
    for entry in entries:
        message = entry_message(entry)
        if cuts and isinstance(message, ToolResultMessage):
            message = cut_result(message, cuts.get(message.tool_call_id))
        if message is not None:
            ctx.messages.append(message)
            ctx.entry_ids.append(entry.id)

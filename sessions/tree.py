"""The session tree flattened for display (``/tree``).

Nodes come in depth-first order (children in file order, i.e. oldest first). ``depth`` is the
indentation level: it grows by one only below an entry that has several children, so a long
linear conversation stays flat and each branch point indents its branches. A model change a
failover made says why (``model → openai/gpt-5.1 (failover from … after 4 tries: overloaded)``).
"""

from __future__ import annotations

from dataclasses import dataclass

from baton.agent.messages import AgentMessage, BashExecutionMessage, CustomMessage
from baton.providers.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from baton.sessions.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from baton.sessions.failover import FALLBACK_ENTRY, fallback_note, fallback_notes

PREVIEW_CHARS = 100


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One entry of the session tree."""

    id: str
    parent_id: str | None
    kind: str
    """The message role for message entries (``user``, ``assistant``, ``toolResult``,
    ``bashExecution``, ``custom``...), else the entry type (``compaction``, ``model_change``...)."""
    preview: str
    """One line describing the entry (message text, tool names, new model...)."""
    label: str | None
    """The user's label on this entry, if any."""
    depth: int
    on_current_branch: bool
    """True for the entries on the path root → current leaf."""
    is_leaf: bool
    """True for the current leaf."""
    children: int
    timestamp: str
    bookkeeping: bool = False
    """True for entries that add nothing to the conversation (checkpoints, permission decisions,
    extension state, labels, the session's name): ``/tree`` hides them unless asked."""


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def describe(entry: SessionEntry, note: str | None = None) -> tuple[str, str]:
    """``(kind, preview)`` of an entry (``note``: why a model change happened, when known)."""
    if isinstance(entry, MessageEntry):
        return _describe_message(entry.message)
    if isinstance(entry, CompactionEntry):
        return "compaction", f"compacted ({entry.tokens_before:,} tokens before)"
    if isinstance(entry, BranchSummaryEntry):
        return "branch_summary", _one_line(entry.summary)
    if isinstance(entry, ModelChangeEntry):
        why = f" ({note})" if note else ""
        return "model_change", _one_line(f"model → {entry.provider}/{entry.model_id}") + why
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "thinking_level_change", f"thinking → {entry.thinking_level}"
    if isinstance(entry, CustomMessageEntry):
        return "custom_message", _one_line(_text_of(entry.content))
    if isinstance(entry, CustomEntry):
        return "custom", _custom_preview(entry)
    if isinstance(entry, LabelEntry):
        return "label", f"label {entry.target_id}: {entry.label or '(cleared)'}"
    if isinstance(entry, SessionInfoEntry):
        return "session_info", f"name: {entry.name or ''}"
    return entry.type, ""


def _describe_message(message: AgentMessage) -> tuple[str, str]:
    if isinstance(message, UserMessage):
        return "user", _one_line(_text_of(message.content))
    if isinstance(message, AssistantMessage):
        return "assistant", _one_line(_assistant_preview(message))
    if isinstance(message, ToolResultMessage):
        state = "error" if message.is_error else "ok"
        return "toolResult", _one_line(f"{message.tool_name} ({state}): {_text_of(message.content)}")
    if isinstance(message, BashExecutionMessage):
        return "bashExecution", _one_line(f"$ {message.command}")
    if isinstance(message, CustomMessage):
        return "custom", _one_line(_text_of(message.content))
    return message.role, ""


def _assistant_preview(message: AssistantMessage) -> str:
    """Its text (or why it ended, when it failed without any) and the tools it called."""
    text = message.text
    calls = ", ".join(c.name for c in message.tool_calls)
    if message.stop_reason in ("error", "aborted") and not text:
        text = f"[{message.stop_reason}] {message.error_message or ''}"
    if not calls:
        return text
    return f"{text} → {calls}" if text.strip() else f"→ {calls}"


def _custom_preview(entry: CustomEntry) -> str:
    from baton.sessions.checkpoints.records import checkpoint_record

    if entry.custom_type == FALLBACK_ENTRY:
        return f"model fallback: {fallback_note(entry.data) or '(unreadable)'}"
    record = checkpoint_record(entry)
    if record is None:
        return _one_line(entry.custom_type)
    if record.kind == "rewind":
        return f"checkpoint: code rewound ({_files(record.effect.files) or 'no changes'})"
    if record.kind == "amend":
        return "checkpoint: added ignored files the agent is about to change"
    if record.kind == "before":
        by_hand = _files(record.changes.files)
        return "checkpoint before the agent's edits" + (f" ({by_hand} by hand)" if by_hand else "")
    return f"checkpoint after the run ({_files(record.changes.files) or 'no changes'})"


def _files(files: list[str]) -> str:
    if not files:
        return ""
    return f"{len(files)} file changed" if len(files) == 1 else f"{len(files)} files changed"


def build_tree(
    entries: list[SessionEntry], leaf_id: str | None, labels: dict[str, str]
) -> list[TreeNode]:
    """Every entry as a :class:`TreeNode`, depth first. Entries whose parent is missing are
    shown as roots."""
    ids = {e.id for e in entries}
    notes = fallback_notes(entries)
    children: dict[str | None, list[SessionEntry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.parent_id in ids and entry.parent_id != entry.id else None
        children.setdefault(parent, []).append(entry)

    on_branch: set[str] = set()
    by_id = {e.id: e for e in entries}
    current = by_id.get(leaf_id) if leaf_id else None
    while current is not None and current.id not in on_branch:
        on_branch.add(current.id)
        current = by_id.get(current.parent_id) if current.parent_id else None

    roots = children.get(None, [])
    out: list[TreeNode] = []
    base_depth = 1 if len(roots) > 1 else 0
    stack: list[tuple[SessionEntry, int]] = [(e, base_depth) for e in reversed(roots)]
    while stack:
        entry, depth = stack.pop()
        kids = children.get(entry.id, [])
        kind, preview = describe(entry, notes.get(entry.id))
        out.append(
            TreeNode(
                id=entry.id,
                parent_id=entry.parent_id,
                kind=kind,
                preview=preview,
                label=labels.get(entry.id),
                depth=depth,
                on_current_branch=entry.id in on_branch,
                is_leaf=entry.id == leaf_id,
                children=len(kids),
                timestamp=entry.timestamp,
                bookkeeping=isinstance(entry, CustomEntry | LabelEntry | SessionInfoEntry),
            )
        )
        child_depth = depth + 1 if len(kids) > 1 else depth
        stack.extend((k, child_depth) for k in reversed(kids))
    return out

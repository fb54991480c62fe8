"""The transcript's entries: one per thing it shows, built from the session's messages.

An entry is data (its message, or a notice's text) plus, while it is in the rendered window, the
view that draws it (``messages.py``, ``tool_call.py``). Tool results fold into the entry of the
answer that called them; a result whose call is not in the transcript gets an entry of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from textual.content import Content

from baton.agent.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import AssistantMessage, ToolResultMessage, UserMessage
from baton.tui.app.widgets.messages import (
    AssistantMessageView,
    BashExecutionView,
    NoticeLevel,
    NoticeView,
    UserMessageView,
    compaction_notice,
    user_text,
)
from baton.tui.app.widgets.paint import View
from baton.tui.app.widgets.subagent_box import tool_call_view

EntryKind = Literal["header", "user", "assistant", "tool_result", "bash", "notice", "compaction", "custom"]


@dataclass(eq=False)
class Entry:
    """One transcript entry as data; ``view`` is set while it is rendered (in the window)."""

    kind: EntryKind
    message: AgentMessage | None = None
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    content: Content | None = None
    level: NoticeLevel = "info"
    view: View | None = None
    factory: Callable[[], View] | None = None
    laid_out: Hashable | None = None
    """The view's version when its lines were last laid out."""
    images_not_sent_to: str | None = None
    """For a prompt with images: the text-only model that got a placeholder instead."""


def build_view(entry: Entry, cwd: Path | None) -> View:
    """A fresh view for ``entry`` (rendering it, or rendering it again after windowing)."""
    if entry.factory is not None:
        return entry.factory()
    match entry.message:
        case UserMessage(content=content):
            return UserMessageView(user_text(content, images_not_sent_to=entry.images_not_sent_to))
        case AssistantMessage() as message:
            return AssistantMessageView(message, results=entry.results, cwd=cwd)
        case ToolResultMessage() as message:
            view = tool_call_view(message.tool_call_id, message.tool_name, {}, cwd=cwd)
            view.set_result(message.content, message.details, is_error=message.is_error)
            return view
        case BashExecutionMessage() as message:
            bash = BashExecutionView(message.command, exclude_from_context=bool(message.exclude_from_context))
            bash.set_result(message.output, message.exit_code, cancelled=message.cancelled)
            return bash
        case CustomMessage(content=content):
            return NoticeView(content if isinstance(content, str) else user_text(content), "info")
    return NoticeView(entry.content or Content(""), entry.level)


def entry_for(message: AgentMessage) -> Entry | None:
    """The entry showing ``message`` (None for a message the transcript does not show)."""
    match message:
        case UserMessage():
            return Entry("user", message)
        case AssistantMessage():
            return Entry("assistant", message)
        case ToolResultMessage():
            return Entry("tool_result", message)
        case BashExecutionMessage():
            return Entry("bash", message)
        case CompactionSummaryMessage():
            return Entry("compaction", content=compaction_notice(message.tokens_before, message.summary))
        case BranchSummaryMessage():
            return Entry("notice", content=Content.styled("⎇ Returned from a branch (summarised)", "$text-accent"))
        case CustomMessage(display=True):
            return Entry("custom", message)
    return None


def entries_for(messages: Iterable[AgentMessage]) -> list[Entry]:
    """Entries for a history (tool results folded into the assistant message that called them)."""
    out: list[Entry] = []
    owner: dict[str, Entry] = {}
    for message in messages:
        if isinstance(message, ToolResultMessage) and (parent := owner.get(message.tool_call_id)) is not None:
            parent.results[message.tool_call_id] = message
            continue
        entry = entry_for(message)
        if entry is None:
            continue
        if isinstance(message, AssistantMessage):
            owner.update((call.id, entry) for call in message.tool_calls)
        out.append(entry)
    return out

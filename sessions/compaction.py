"""Context compaction: summarise the older part of a branch, keep the recent part verbatim.

Pure functions over the branch's entries (pi's ``compaction.ts``); the coding session does the
I/O. Rules:

- Token accounting: the last assistant message's reported usage (its whole context) plus
  estimates for the messages after it (:func:`estimate_context_tokens`).
- Cut points are messages a context may start with: user, assistant, bash executions, custom
  and summary messages — never a tool result, so a tool call and its result stay together.
- Walking back from the newest message, the cut lands on the first cut point at or after the
  message where the kept tokens reach ``keep_recent_tokens``; the settings/label entries just
  before it are kept with it.
- Cutting at an assistant message splits a turn: the turn's beginning (from its user message) is
  summarised separately (``Turn Context``) so the kept suffix still makes sense.
- With an earlier compaction on the branch, only what came after it is summarised, and the
  previous summary is updated rather than rewritten.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from baton.agent.messages import AgentMessage, CompactionSummaryMessage, convert_to_llm
from baton.providers.json_types import JsonObject
from baton.providers.messages import (
    AssistantMessage,
    Context,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from baton.providers.models import Model
from baton.providers.projection import project_message
from baton.sessions.context import entry_message
from baton.sessions.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
)
from baton.sessions.errors import CompactionError, NothingToCompactError
from baton.sessions.settings import CompactionSettings
from baton.sessions.tokens import estimate_message_tokens
from baton.tools import tool_type

TOOL_RESULT_MAX_CHARS = 2_000

SUMMARIZATION_SYSTEM_PROMPT = (
    "You are a context summarization assistant. Your task is to read a conversation between a user "
    "and an AI coding assistant, then produce a structured summary following the exact format specified.\n\n"
    "Do NOT continue the conversation. Do NOT respond to any questions in the conversation. "
    "ONLY output the structured summary."
)

SUMMARY_FORMAT = """## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]"""

SUMMARIZATION_PROMPT = (
    "The messages above are a conversation to summarize. Create a structured context checkpoint "
    "summary that another LLM will use to continue the work.\n\n"
    f"Use this EXACT format:\n\n{SUMMARY_FORMAT}\n\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)

UPDATE_SUMMARIZATION_PROMPT = (
    "The messages above are NEW conversation messages to incorporate into the existing summary "
    "provided in <previous-summary> tags.\n\n"
    "Update the existing structured summary with new information. RULES:\n"
    "- PRESERVE all existing information from the previous summary\n"
    "- ADD new progress, decisions, and context from the new messages\n"
    '- UPDATE the Progress section: move items from "In Progress" to "Done" when completed\n'
    '- UPDATE "Next Steps" based on what was accomplished\n'
    "- PRESERVE exact file paths, function names, and error messages\n"
    "- If something is no longer relevant, you may remove it\n\n"
    f"Use this EXACT format:\n\n{SUMMARY_FORMAT}\n\n"
    "Keep each section concise. Preserve exact file paths, function names, and error messages."
)

TURN_PREFIX_PROMPT = """This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""


class CompactionAborted(CompactionError):
    """The compaction was aborted; nothing was changed."""


@dataclass(slots=True)
class CompactionResult:
    """A finished compaction (``entry_id`` is set once it is stored)."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: JsonObject = field(default_factory=dict)
    entry_id: str | None = None

    def to_dict(self) -> JsonObject:
        """pi's JSON form."""
        return {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "details": self.details,
        }


@dataclass(slots=True)
class ContextEstimate:
    """Tokens of a context: ``usage_tokens`` reported by the provider for everything up to the
    last assistant message, plus ``trailing_tokens`` estimated for what came after it."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int


@dataclass(slots=True)
class CutPoint:
    """Where a compaction cuts (indices into the branch's entries)."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


@dataclass(slots=True)
class CompactionPreparation:
    """Everything a compaction needs, computed from the branch before any model call."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    read_files: set[str]
    modified_files: set[str]
    kept_messages: list[AgentMessage] = field(default_factory=list)
    """What stays verbatim after the summary (its largest tool results may be cut to fit)."""


# ---------------------------------------------------------------------------------------------
# Token accounting


def calculate_context_tokens(usage: Usage) -> int:
    """Tokens a request occupied (``totalTokens`` when the provider reported it)."""
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


def _usage_of(message: AgentMessage) -> Usage | None:
    if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
        return message.usage
    return None


def estimate_context_tokens(
    messages: Sequence[AgentMessage], count: Callable[[AgentMessage], int] = estimate_message_tokens
) -> ContextEstimate:
    """Last valid assistant usage plus estimates for the messages after it (``count``: e.g.
    :func:`~baton.sessions.tokens.message_token_bound` for an upper bound instead).

    A usage recorded before the latest compaction summary describes the old, larger context and
    is ignored (the whole context is estimated instead)."""
    summary_time = max(
        (m.timestamp for m in messages if isinstance(m, CompactionSummaryMessage)), default=None
    )
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        usage = _usage_of(message)
        if usage is None or (summary_time is not None and message.timestamp < summary_time):
            continue
        used = calculate_context_tokens(usage)
        if used <= 0:
            continue
        trailing = sum(count(m) for m in messages[index + 1 :])
        return ContextEstimate(used + trailing, used, trailing, index)
    trailing = sum(count(m) for m in messages)
    return ContextEstimate(trailing, 0, trailing, -1)


def effective_reserve(settings: CompactionSettings, context_window: int) -> int:
    """``reserve_tokens``; a quarter of the window when the default reserve would take more than
    half of it: the default 16k leaves an 8k model no room at all (it would compact after every
    turn). A reserve the user set is kept as set, and so is the default on windows twice its size."""
    reserve = settings.reserve_tokens
    if "reserve_tokens" in settings.model_fields_set:
        return reserve
    return context_window // 4 if 0 < context_window < 2 * reserve else reserve


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """True when the context exceeds the window minus the reserve (and compaction is enabled)."""
    return (settings.enabled and context_window > 0
            and context_tokens > context_window - effective_reserve(settings, context_window))


def effective_keep_recent(settings: CompactionSettings, context_window: int) -> int:
    """``keep_recent_tokens``, but never more than half of the usable window (the window minus
    the reserve), so a small model can still be compacted."""
    if context_window <= 0:
        return settings.keep_recent_tokens
    usable = context_window - effective_reserve(settings, context_window)
    return min(settings.keep_recent_tokens, usable // 2)


# ---------------------------------------------------------------------------------------------
# Cut points

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})


def _role(entry: SessionEntry) -> str | None:
    if isinstance(entry, MessageEntry):
        return entry.message.role
    return None


def is_cut_point(entry: SessionEntry) -> bool:
    """True when a context may start at this entry (never at a tool result)."""
    if isinstance(entry, BranchSummaryEntry | CustomMessageEntry):
        return True
    return _role(entry) in _CUT_ROLES


def find_valid_cut_points(entries: Sequence[SessionEntry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` a compaction may cut at."""
    return [i for i in range(start, end) if is_cut_point(entries[i])]


def find_turn_start_index(entries: Sequence[SessionEntry], index: int, start: int) -> int:
    """The user message (or bash execution / summary / custom message) that opens the turn
    holding ``entries[index]``; -1 when there is none at or after ``start``."""
    for i in range(index, start - 1, -1):
        entry = entries[i]
        if isinstance(entry, BranchSummaryEntry | CustomMessageEntry):
            return i
        if _role(entry) in ("user", "bashExecution"):
            return i
    return -1


def find_cut_point(entries: Sequence[SessionEntry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Where to cut ``entries[start:end]`` so that about ``keep_recent_tokens`` stay verbatim."""
    cut_points = find_valid_cut_points(entries, start, end)
    if not cut_points:
        return CutPoint(start, -1, False)
    cut_index = cut_points[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if not isinstance(entry, MessageEntry):
            continue
        accumulated += estimate_message_tokens(entry.message)
        if accumulated >= keep_recent_tokens:
            cut_index = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    # keep the model/thinking/label entries right before the cut with the kept part
    while cut_index > start:
        previous = entries[cut_index - 1]
        if isinstance(previous, CompactionEntry | MessageEntry):
            break
        cut_index -= 1
    cut_entry = entries[cut_index]
    is_user = _role(cut_entry) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, not is_user and turn_start != -1)


# ---------------------------------------------------------------------------------------------
# Preparation


def _file_ops(messages: Sequence[AgentMessage], read: set[str], modified: set[str]) -> None:
    """The files the calls read (a read-only tool's existing file: ``read``) and changed (``edit``,
    ``write``), by the traits of the tools called."""
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for block in message.content:
            if not isinstance(block, ToolCall) or not isinstance(block.arguments, dict):
                continue
            tool = tool_type(block.name)
            path = tool.path_of(block.arguments)
            if path is None or tool.path_parameter is None:
                continue
            if tool.changes_files():
                modified.add(path)
            elif tool.path_parameter.must_exist:
                read.add(path)


def prepare_compaction(
    path: Sequence[SessionEntry],
    settings: CompactionSettings,
    context_window: int = 0,
    *,
    keep_recent_tokens: int | None = None,
) -> CompactionPreparation:
    """Decide what to summarise on a branch (keeping about ``keep_recent_tokens``, by default
    :func:`effective_keep_recent`). Raises :class:`NothingToCompactError` when there is nothing
    to compact."""
    if not path:
        raise NothingToCompactError("Nothing to compact (the session is empty)")
    if isinstance(path[-1], CompactionEntry):
        raise NothingToCompactError("Nothing to compact (the conversation was just compacted)")
    previous_index = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)
    start = previous_index + 1
    tokens_before = estimate_context_tokens(_messages(path, 0, len(path))).tokens
    keep = effective_keep_recent(settings, context_window) if keep_recent_tokens is None else keep_recent_tokens
    cut = find_cut_point(path, start, len(path), keep)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _messages(path, start, history_end)
    prefix = _messages(path, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        raise NothingToCompactError("Nothing to compact (the recent messages already fit the budget)")
    previous = path[previous_index] if previous_index >= 0 else None
    read, modified = _files_so_far(previous if isinstance(previous, CompactionEntry) else None)
    _file_ops(to_summarize, read, modified)
    _file_ops(prefix, read, modified)
    return CompactionPreparation(
        first_kept_entry_id=path[cut.first_kept_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous.summary if isinstance(previous, CompactionEntry) else None,
        read_files=read,
        modified_files=modified,
        kept_messages=_messages(path, cut.first_kept_index, len(path)),
    )


def _messages(path: Sequence[SessionEntry], start: int, end: int) -> list[AgentMessage]:
    """The messages of ``path[start:end]`` as the model sees them."""
    return [m for m in (entry_message(path[i]) for i in range(start, end)) if m is not None]


def _files_so_far(previous: CompactionEntry | None) -> tuple[set[str], set[str]]:
    """The files read and modified that the previous compaction recorded (none when a hook wrote it)."""
    details = previous.details if previous is not None and not previous.from_hook else None
    if not isinstance(details, dict):
        return set(), set()
    return _strings(details.get("readFiles")), _strings(details.get("modifiedFiles"))


def _strings(value: object) -> set[str]:
    return {item for item in value if isinstance(item, str)} if isinstance(value, list) else set()


# ---------------------------------------------------------------------------------------------
# Summarisation


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {len(text) - limit} more characters truncated]"


def serialize_conversation(messages: Sequence[AgentMessage]) -> str:
    """The conversation as plain text, so the summariser reads it instead of continuing it."""
    parts: list[str] = []
    for message in convert_to_llm(list(messages)):
        parts += _serialize(project_message(message))  # a runaway tool call is cut here as in any request
    return "\n\n".join(parts)


def _serialize(message: Message) -> list[str]:
    """One message's parts of :func:`serialize_conversation`."""
    if isinstance(message, UserMessage):
        content = message.content
        text = content if isinstance(content, str) else "".join(b.text for b in content if isinstance(b, TextContent))
        return [f"[User]: {text}"] if text else []
    if isinstance(message, ToolResultMessage):
        text = "".join(b.text for b in message.content if isinstance(b, TextContent))
        return [f"[Tool result]: {_truncate(text, TOOL_RESULT_MAX_CHARS)}"] if text else []
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    thinking = [b.thinking for b in message.content if isinstance(b, ThinkingContent)]
    calls = [_call_text(b) for b in message.content if isinstance(b, ToolCall)]
    labelled = (("[Assistant thinking]: ", "\n", thinking), ("[Assistant]: ", "\n", texts),
                ("[Assistant tool calls]: ", "; ", calls))
    return [label + joiner.join(items) for label, joiner, items in labelled if items]


def _call_text(call: ToolCall) -> str:
    arguments = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return f"{call.name}({arguments})"


def format_file_lists(read_files: Sequence[str], modified_files: Sequence[str]) -> str:
    """The ``<read-files>`` / ``<modified-files>`` sections appended to a summary."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


async def _complete_text(
    model: Model,
    context: Context,
    *,
    api_key: str | None,
    signal: asyncio.Event | None,
    max_tokens: int,
    what: str,
) -> str:
    from baton.providers.dispatch import complete

    response = await complete(model, context, api_key=api_key, signal=signal, max_tokens=max_tokens)
    if response.stop_reason == "aborted" or (signal is not None and signal.is_set()):
        raise CompactionAborted("Compaction aborted")
    if response.stop_reason == "error":
        raise CompactionError(f"{what} failed: {response.error_message or 'unknown error'}")
    return "\n".join(b.text for b in response.content if isinstance(b, TextContent))


async def generate_summary(
    messages: Sequence[AgentMessage],
    model: Model,
    *,
    reserve_tokens: int,
    api_key: str | None = None,
    signal: asyncio.Event | None = None,
    focus: str | None = None,
    previous_summary: str | None = None,
    max_tokens: int | None = None,
) -> str:
    """Summarise ``messages`` (updating ``previous_summary`` when given) with ``model``, in at
    most ``max_tokens`` (default: most of the reserve)."""
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if focus:
        instructions += f"\n\nAdditional focus: {focus}"
    prompt = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += instructions
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=prompt)])]
    )
    return await _complete_text(
        model, context, api_key=api_key, signal=signal,
        max_tokens=_budget(model, 0.8 * reserve_tokens, max_tokens), what="Summarization",
    )


async def generate_turn_prefix_summary(
    messages: Sequence[AgentMessage],
    model: Model,
    *,
    reserve_tokens: int,
    api_key: str | None = None,
    signal: asyncio.Event | None = None,
    focus: str | None = None,
    max_tokens: int | None = None,
) -> str:
    """Summarise the beginning of a turn whose end is kept verbatim."""
    prompt = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n{TURN_PREFIX_PROMPT}"
    if focus:
        prompt += f"\n\nAdditional focus: {focus}"
    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT, messages=[UserMessage(content=[TextContent(text=prompt)])]
    )
    return await _complete_text(
        model, context, api_key=api_key, signal=signal,
        max_tokens=_budget(model, 0.5 * reserve_tokens, max_tokens), what="Turn prefix summarization",
    )


def _budget(model: Model, wanted: float, cap: int | None = None) -> int:
    if cap is not None:
        wanted = min(wanted, cap)
    return max(256, min(int(wanted), model.max_tokens or int(wanted)))


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    settings: CompactionSettings,
    *,
    api_key: str | None = None,
    focus: str | None = None,
    signal: asyncio.Event | None = None,
    summary_tokens: int | None = None,
) -> CompactionResult:
    """Produce the summary for a prepared compaction (the caller stores it); ``summary_tokens``
    caps the summary's length (a split turn's prefix summary gets half of it more)."""
    history: str
    if preparation.is_split_turn and preparation.turn_prefix_messages:

        async def history_summary() -> str:
            if not preparation.messages_to_summarize:
                return preparation.previous_summary or "No prior history."
            return await generate_summary(
                preparation.messages_to_summarize, model, reserve_tokens=settings.reserve_tokens,
                api_key=api_key, signal=signal, focus=focus, previous_summary=preparation.previous_summary,
                max_tokens=summary_tokens,
            )

        history, prefix = await asyncio.gather(
            history_summary(),
            generate_turn_prefix_summary(
                preparation.turn_prefix_messages, model, reserve_tokens=settings.reserve_tokens,
                api_key=api_key, signal=signal, focus=focus,
                max_tokens=summary_tokens // 2 if summary_tokens is not None else None,
            ),
        )
        summary = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"
    else:
        summary = await generate_summary(
            preparation.messages_to_summarize, model, reserve_tokens=settings.reserve_tokens,
            api_key=api_key, signal=signal, focus=focus, previous_summary=preparation.previous_summary,
            max_tokens=summary_tokens,
        )
    modified = sorted(preparation.modified_files)
    read = sorted(preparation.read_files - preparation.modified_files)
    summary += format_file_lists(read, modified)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": list(read), "modifiedFiles": list(modified)},
    )


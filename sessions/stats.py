"""Figures a session reports: message counts and spend (MCP servers' sampling requests included),
and how full the context is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton.providers.messages import AssistantMessage, ToolResultMessage, Usage, UserMessage
from baton.sessions.entries import CustomEntry, MessageEntry
from baton.sessions.mcp_sampling import SAMPLING_ENTRY
from baton.sessions.store import SessionStore


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Counts and spend over every message of the session file."""

    session_file: Path | None
    session_id: str
    name: str | None
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    total_messages: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    total_tokens: int
    cost: float


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """How full the context window is (``tokens``: last reported usage plus estimates)."""

    tokens: int
    context_window: int
    percent: float


def _sampling_usage(data: object) -> Usage | None:
    """The usage an ``mcp_sampling`` entry records (``None`` when it holds none it can read)."""
    raw = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        return None
    try:
        return Usage.model_validate(raw)
    except ValueError:
        return None


def session_stats(store: SessionStore, session_file: Path | None) -> SessionStats:
    """Counts, tokens and cost over every message in ``store`` (all branches)."""
    users = assistants = calls = results = total = 0
    tokens_in = tokens_out = cache_read = cache_write = 0
    cost = 0.0
    for entry in store.entries:
        if isinstance(entry, CustomEntry) and entry.custom_type == SAMPLING_ENTRY:  # an MCP server's request
            usage = _sampling_usage(entry.data)
            if usage is not None:
                tokens_in, tokens_out = tokens_in + usage.input, tokens_out + usage.output
                cache_read, cache_write = cache_read + usage.cache_read, cache_write + usage.cache_write
                cost += usage.cost.total
            continue
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        total += 1
        if isinstance(message, UserMessage):
            users += 1
        elif isinstance(message, AssistantMessage):
            assistants += 1
            calls += len(message.tool_calls)
            usage = message.usage
            tokens_in += usage.input
            tokens_out += usage.output
            cache_read += usage.cache_read
            cache_write += usage.cache_write
            cost += usage.cost.total
        elif isinstance(message, ToolResultMessage):
            results += 1
    return SessionStats(
        session_file=session_file,
        session_id=store.session_id,
        name=store.name,
        user_messages=users,
        assistant_messages=assistants,
        tool_calls=calls,
        tool_results=results,
        total_messages=total,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        total_tokens=tokens_in + tokens_out + cache_read + cache_write,
        cost=cost,
    )

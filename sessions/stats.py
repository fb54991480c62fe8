"""Figures a session reports: message counts and spend (MCP servers' sampling requests included),
and how full the context is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from baton.providers.messages import AssistantMessage, ToolResultMessage, Usage, UserMessage
from baton.sessions.entries import CustomEntry, MessageEntry, SessionEntry
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


@dataclass
class _Tally:
    """The counts and spend of the first ``counted`` entries of one store's entry list."""

    entries: list[SessionEntry]
    counted: int = 0
    last: SessionEntry | None = None
    users: int = 0
    assistants: int = 0
    calls: int = 0
    results: int = 0
    total: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    def covers(self, entries: list[SessionEntry]) -> bool:
        """True while ``entries`` is the list counted, grown only at its end since."""
        return entries is self.entries and len(entries) >= self.counted and (
            self.counted == 0 or entries[self.counted - 1] is self.last)

    def add(self, entries: list[SessionEntry]) -> None:
        """Count the entries appended since the last call."""
        for entry in entries[self.counted :]:
            self._count(entry)
        self.counted = len(entries)
        self.last = entries[-1] if entries else None

    def _count(self, entry: SessionEntry) -> None:
        if isinstance(entry, CustomEntry) and entry.custom_type == SAMPLING_ENTRY:  # an MCP server's request
            usage = _sampling_usage(entry.data)
            if usage is not None:
                self._spend(usage)
            return
        if not isinstance(entry, MessageEntry):
            return
        message = entry.message
        self.total += 1
        if isinstance(message, UserMessage):
            self.users += 1
        elif isinstance(message, AssistantMessage):
            self.assistants += 1
            self.calls += len(message.tool_calls)
            self._spend(message.usage)
        elif isinstance(message, ToolResultMessage):
            self.results += 1

    def _spend(self, usage: Usage) -> None:
        self.tokens_in += usage.input
        self.tokens_out += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total


_TALLIES: WeakKeyDictionary[SessionStore, _Tally] = WeakKeyDictionary()
"""Each open store's running tally: the status bar asks every second while the agent works, and
a sum over the whole file then cost more the longer the session ran."""


def session_stats(store: SessionStore, session_file: Path | None) -> SessionStats:
    """Counts, tokens and cost over every message in ``store`` (all branches). Entries are only
    ever appended to a store, so each call counts those added since the previous one."""
    entries = store.entries
    tally = _TALLIES.get(store)
    if tally is None or not tally.covers(entries):
        tally = _TALLIES[store] = _Tally(entries)
    tally.add(entries)
    return SessionStats(
        session_file=session_file,
        session_id=store.session_id,
        name=store.name,
        user_messages=tally.users,
        assistant_messages=tally.assistants,
        tool_calls=tally.calls,
        tool_results=tally.results,
        total_messages=tally.total,
        input_tokens=tally.tokens_in,
        output_tokens=tally.tokens_out,
        cache_read_tokens=tally.cache_read,
        cache_write_tokens=tally.cache_write,
        total_tokens=tally.tokens_in + tally.tokens_out + tally.cache_read + tally.cache_write,
        cost=tally.cost,
    )

"""Session figures (``session_stats``) kept as a running tally: the status bar asks for them every
second while the agent works, so each call counts only the entries appended since the last one.
Whatever the order of appends and calls, the figures equal a count over the whole file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.messages import (
    AssistantMessage,
    Cost,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from baton.sessions.mcp_sampling import SAMPLING_ENTRY
from baton.sessions.stats import SessionStats, session_stats
from baton.sessions.store import SessionStore

STEPS = st.lists(st.tuples(st.sampled_from(["user", "assistant", "result", "sampling", "note", "ask"]),
                           st.integers(0, 5000), st.integers(0, 3)), max_size=40)


def _append(store: SessionStore, kind: str, tokens: int, calls: int) -> None:
    usage = Usage(input=tokens, output=tokens // 3, cache_read=tokens // 5, cache_write=tokens // 7,
                  cost=Cost(total=tokens / 1e6))
    if kind == "user":
        store.append_message(UserMessage(content=f"prompt {tokens}"))
    elif kind == "assistant":
        content = [TextContent(text="answer"),
                   *(ToolCall(id=f"c{tokens}-{i}", name="bash", arguments={}) for i in range(calls))]
        store.append_message(AssistantMessage(content=content, api="a", provider="p", model="m", usage=usage))
    elif kind == "result":
        store.append_message(ToolResultMessage(tool_call_id=f"c{tokens}", tool_name="bash",
                                               content=[TextContent(text="ok")], is_error=False))
    elif kind == "sampling":
        store.append_custom(SAMPLING_ENTRY, {"usage": usage.model_dump(mode="json", by_alias=True)})
    else:
        store.append_custom("something-else", {"n": tokens})


def _recount(store: SessionStore) -> SessionStats:
    """The figures counted afresh, over a store holding the same entries."""
    copy = SessionStore.in_memory(Path("/project"), store.session_id)
    copy.entries.extend(store.entries)
    return session_stats(copy, None)


@settings(max_examples=60, deadline=None)
@given(steps=STEPS, asks=st.sets(st.integers(0, 40)))
def test_the_running_tally_equals_a_count_over_the_whole_file(steps: list[tuple[str, int, int]],
                                                               asks: set[int]) -> None:
    store = SessionStore.in_memory(Path("/project"))
    for number, (kind, tokens, calls) in enumerate(steps):
        _append(store, kind, tokens, calls)
        if number in asks or kind == "ask":
            assert session_stats(store, None) == _recount(store)
    assert session_stats(store, None) == _recount(store)


def test_a_store_whose_entries_were_replaced_is_counted_again() -> None:
    store = SessionStore.in_memory(Path("/project"))
    _append(store, "assistant", 100, 1)
    assert session_stats(store, None).assistant_messages == 1
    store.entries = []  # not something baton does; the tally must not trust a list it did not count
    _append(store, "user", 0, 0)
    stats = session_stats(store, None)
    assert (stats.assistant_messages, stats.user_messages, stats.input_tokens) == (0, 1, 0)

"""Cutting the largest tool results of a compaction's kept part, so the context fits a small window.

A compaction keeps the recent part of a branch verbatim. When that part alone does not fit the
model's window (one turn read a 47 KB file, then the conversation moved to an 8k model), its
largest tool results are cut in the context — head kept, a note saying what was cut — while the
session file keeps them whole: the compaction entry's ``details`` lists the calls whose results
are cut (``cutToolResults``: tool call id → characters kept), and :mod:`sessions.context` applies
it each time the context is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from baton.agent.messages import AgentMessage
from baton.providers.json_types import JsonObject
from baton.providers.messages import TextContent, ToolResultMessage
from baton.sessions.tokens import estimate_message_tokens

CUT_RESULTS_KEY = "cutToolResults"
"""The key of a compaction entry's ``details`` that lists the cut tool results."""

CUT_STEPS = (2_000, 200)
"""Characters a cut result keeps: the largest results go to the first, then all to the next."""


def plan_cuts(kept: Sequence[AgentMessage], budget: int) -> dict[str, int]:
    """Which tool results of ``kept`` to cut (tool call id → characters kept), largest first,
    until the kept part's estimate is within ``budget`` tokens (or nothing more can be cut)."""
    cuts: dict[str, int] = {}
    total = sum(estimate_message_tokens(m) for m in kept)
    results = [m for m in kept if isinstance(m, ToolResultMessage)]
    for keep in CUT_STEPS:
        for message in sorted(results, key=estimate_message_tokens, reverse=True):
            if total <= budget:
                return cuts
            current = cuts.get(message.tool_call_id)
            if _text_length(message) <= keep or (current is not None and current <= keep):
                continue
            saved = estimate_message_tokens(cut_result(message, current)) - estimate_message_tokens(
                cut_result(message, keep)
            )
            cuts[message.tool_call_id] = keep
            total -= saved
    return cuts


def cut_result(message: ToolResultMessage, keep: int | None) -> ToolResultMessage:
    """``message`` with its text cut to ``keep`` characters and a note (unchanged for ``None``
    or when it is that short already)."""
    if keep is None:
        return message
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    if len(text) <= keep:
        return message
    note = (f"\n\n[... {len(text) - keep} more characters cut to fit the context window; "
            "the whole result is kept in the session file]")
    others = [b for b in message.content if not isinstance(b, TextContent)]
    return message.model_copy(update={"content": [TextContent(text=text[:keep] + note), *others]})


def cuts_of(details: object) -> Mapping[str, int]:
    """The ``cutToolResults`` of a compaction entry's details (empty when absent or malformed:
    a file may hold anything there)."""
    if not isinstance(details, dict):
        return {}
    cuts = details.get(CUT_RESULTS_KEY)
    if not isinstance(cuts, dict):
        return {}
    return {k: v for k, v in cuts.items() if isinstance(k, str) and isinstance(v, int) and v >= 0}


def with_cuts(details: JsonObject, cuts: Mapping[str, int]) -> JsonObject:
    """``details`` plus the cuts (unchanged when there are none)."""
    return {**details, CUT_RESULTS_KEY: dict(cuts)} if cuts else details


def _text_length(message: ToolResultMessage) -> int:
    return sum(len(b.text) for b in message.content if isinstance(b, TextContent))

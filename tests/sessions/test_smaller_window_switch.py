"""Switching to a model whose window is smaller than the conversation (issue 11, item 4).

A 180k-token conversation on a 200k "Claude" moves to a 128k model: the preview says it will be
compacted first, the compaction request goes to the model that can read it all (the previous
one), and no request known to overflow reaches the new model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_tool_call
from baton.providers.messages import Context, Usage
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.compaction import SUMMARIZATION_SYSTEM_PROMPT
from baton.sessions.tokens import estimate_message_tokens
from tests.sessions.conftest import quiet_settings

BIG = faux_model("claude-big", provider="prov-a", api="faux-a", context_window=200_000)
SMALL = faux_model("gpt-small", provider="prov-b", api="faux-b", context_window=128_000)
CHUNK = "word " * 8_000  # ~10k tokens by the 4-characters estimate


def _options(base: SessionOptions, **extra: Any) -> SessionOptions:
    base.model = BIG
    base.extra_models = [BIG, SMALL]
    base.settings = quiet_settings()
    for key, value in extra.items():
        setattr(base, key, value)
    return base


def _usage(input_tokens: int) -> Usage:
    return Usage(input=input_tokens, output=2_000, total_tokens=input_tokens + 2_000)


async def _fill(session: CodingSession, faux_a: FauxProvider, tokens: int = 178_000) -> None:
    """Four large turns on the big model; the last reply reports ``tokens`` + 2k of context."""
    for n in range(4):
        faux_a.add(FauxResponse.text(f"noted {n}", usage=_usage(tokens if n == 3 else 40_000 * (n + 1))))
        await session.prompt(f"part {n}: {CHUNK}")
    assert session.context_usage().tokens >= 180_000


def _is_summary_request(context: Context) -> bool:
    return context.system_prompt == SUMMARIZATION_SYSTEM_PROMPT


def _fits(context: Context, model: Model) -> bool:
    return sum(estimate_message_tokens(m) for m in context.messages) < model.context_window


async def test_preview_says_the_context_will_be_compacted_first(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    session = await CodingSession.open(_options(options))
    await _fill(session, faux_a)
    preview = session.models.handoff_preview(SMALL)
    assert not preview.is_empty
    assert preview.summary().startswith("context 180k > 128k window: will be compacted first")
    assert "summarised by prov-a/claude-big" in preview.summary()
    assert preview.to_dict()["contextWindow"] == 128_000
    # the big model itself: no note
    assert session.models.handoff_preview(BIG).compaction is None
    await session.close()


async def test_compaction_runs_on_the_previous_model_and_the_first_request_fits(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    session = await CodingSession.open(_options(options))
    await _fill(session, faux_a)
    calls_on_a = faux_a.calls
    faux_a.add("## Goal\nsummary of the big conversation")
    faux_b.add(FauxResponse.text("answer from the small model", usage=_usage(30_000)))
    await session.models.switch(SMALL)
    await session.prompt("carry on")

    assert faux_a.calls == calls_on_a + 1 and _is_summary_request(faux_a.requests[-1])
    assert not any(_is_summary_request(r) for r in faux_b.requests)
    assert faux_b.calls == 1
    assert _fits(faux_b.requests[0], SMALL)
    assert "summary of the big conversation" in str(faux_b.requests[0].messages[0])
    assert session.messages[-1].role == "assistant"
    await session.close()


async def test_switch_mid_run_never_sends_the_overflowing_request(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, cwd: Path
) -> None:
    (cwd / "notes.txt").write_text("hello\n")
    session = await CodingSession.open(_options(options, tools=["ls"]))
    await _fill(session, faux_a)
    faux_a.add(FauxResponse(content=[faux_tool_call("ls", {}, id="call_9")], usage=_usage(178_500)))
    faux_a.add("## Goal\nsummary made by the big model")
    faux_b.add(FauxResponse.text("done on the small model", usage=_usage(30_000)))

    async def switch_when_tool_starts(event: Any) -> None:
        if event.type == "tool_execution_start":
            await session.models.switch(SMALL)

    session.subscribe(switch_when_tool_starts)
    await session.prompt("list the files")

    assert _is_summary_request(faux_a.requests[-1])
    assert faux_b.calls == 1 and _fits(faux_b.requests[0], SMALL)
    assert session.messages[-1].role == "assistant"
    assert "done on the small model" in str(session.messages[-1].content)
    await session.close()


async def test_nothing_is_sent_when_no_model_can_read_the_context(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    tiny = faux_model("tiny", provider="prov-b", api="faux-b", context_window=8_000)
    session = await CodingSession.open(_options(options, extra_models=[BIG, tiny]))
    await _fill(session, faux_a)
    faux_a.unregister()  # the previous model cannot be called any more (no key, say)
    preview = session.models.handoff_preview(tiny)
    assert preview.compaction is not None and "no available model can read it all" in preview.compaction
    await session.models.switch(tiny)
    errors: list[str] = []
    session.subscribe(lambda e: errors.append(getattr(e, "error_message", None) or ""))
    await session.prompt("carry on")
    assert faux_b.calls == 0  # neither the compaction nor the prompt was sent to the tiny model
    last = session.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "error"
    assert "exceeds the context window of prov-b/tiny" in (last.error_message or "")
    assert any("Cannot compact" in e for e in errors)
    await session.close()

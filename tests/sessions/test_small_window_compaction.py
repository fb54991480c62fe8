"""A switch to a small model always ends in a context that fits (issue 25, item 7).

One turn reads a 47 KB file on a 200k model; the conversation then moves to an 8k model. The
compaction runs on the model that can read it all; when the recent turn alone does not fit, its
largest tool results are cut in the context (the session file keeps them whole), and the first
request to the small model fits its window. ``/compact`` with a focus always compacts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_tool_call
from baton.providers.messages import Context, TextContent, ToolResultMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.compaction import SUMMARIZATION_SYSTEM_PROMPT
from baton.sessions.tokens import count_text_tokens, estimate_message_tokens
from tests.sessions.conftest import quiet_settings

BIG = faux_model("claude-big", provider="prov-a", api="faux-a", context_window=200_000)
TINY = faux_model("tiny", provider="prov-b", api="faux-b", context_window=8_192)
LINE = "def function_number_{n}(value):  # a line of a large module\n"


def _big_file(cwd: Path) -> Path:
    path = cwd / "big.py"
    text = "".join(LINE.format(n=n) for n in range(800))
    path.write_text(text)
    assert 46_000 < len(text.encode()) < 52_000
    return path


def _options(base: SessionOptions, **extra: Any) -> SessionOptions:
    base.model = BIG
    base.extra_models = [BIG, TINY]
    base.settings = quiet_settings()
    base.tools = ["read"]
    for key, value in extra.items():
        setattr(base, key, value)
    return base


def _is_summary_request(context: Context) -> bool:
    return context.system_prompt == SUMMARIZATION_SYSTEM_PROMPT


def _request_tokens(context: Context) -> int:
    return count_text_tokens(context.system_prompt or "") + sum(estimate_message_tokens(m) for m in context.messages)


def _full_result_in_file(session: CodingSession) -> bool:
    """The session file still holds the whole tool result."""
    lines = [json.loads(line) for line in session.session_file.read_text().splitlines()]
    results = [e for e in lines if e.get("type") == "message" and e["message"].get("role") == "toolResult"]
    return any("function_number_799(" in json.dumps(e) for e in results)


async def test_a_big_read_then_a_switch_to_an_8k_model_compacts_on_the_big_one_and_fits(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, cwd: Path
) -> None:
    _big_file(cwd)
    session = await CodingSession.open(_options(options))
    faux_a.add(FauxResponse.tool_call("read", {"path": "big.py"}))
    faux_a.add(FauxResponse.text("It defines 800 functions."))
    await session.prompt("read big.py")
    assert session.context_usage().tokens > TINY.context_window
    await session.models.switch(TINY)
    faux_a.add("## Goal\nunderstand big.py")
    faux_b.add("carrying on")
    await session.prompt("carry on")
    assert _is_summary_request(faux_a.requests[-1])
    assert faux_b.calls == 1 and not _is_summary_request(faux_b.requests[0])
    assert _request_tokens(faux_b.requests[0]) < TINY.context_window
    assert session.messages[-1].role == "assistant" and session.messages[-1].stop_reason == "stop"
    assert _full_result_in_file(session)
    await session.close()


async def test_a_turn_too_big_alone_has_its_largest_tool_result_cut_in_the_context_only(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, cwd: Path
) -> None:
    _big_file(cwd)
    session = await CodingSession.open(_options(options))
    faux_a.add(FauxResponse(content=[faux_tool_call("read", {"path": "big.py"}, id="call_big")]))

    async def stop_when_the_tool_ends(event: Any) -> None:
        if event.type == "tool_execution_end":
            session.abort()

    session.subscribe(stop_when_the_tool_ends)
    await session.prompt("read big.py")
    await session.models.switch(TINY)
    faux_a.add("## Goal\nread big.py")
    await session.compact()  # the branch ends with the 47 KB result: it is kept, and cut
    faux_b.add("done on the small model")
    await session.prompt("carry on")
    assert _is_summary_request(faux_a.requests[-1])
    assert faux_b.calls == 1
    request = faux_b.requests[0]
    assert _request_tokens(request) < TINY.context_window
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["call_big"]
    text = "".join(b.text for b in results[0].content if isinstance(b, TextContent))
    assert "def function_number_0(" in text and LINE.format(n=799) not in text
    assert "cut to fit" in text and "session file" in text
    assert session.messages[-1].role == "assistant" and "done on the small model" in str(session.messages[-1].content)
    assert _full_result_in_file(session)
    # resumed, the context is the same cut one
    path = session.session_file
    await session.close()
    reopened = await CodingSession.open(_options(SessionOptions(cwd=cwd, session=str(path), context_files=False)))
    kept = [m for m in reopened.messages if isinstance(m, ToolResultMessage)]
    assert kept and "cut to fit" in "".join(b.text for b in kept[0].content if isinstance(b, TextContent))
    await reopened.close()


async def test_compact_with_the_8k_model_at_twice_its_window_compacts(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, cwd: Path
) -> None:
    _big_file(cwd)
    session = await CodingSession.open(_options(options))
    faux_a.add(FauxResponse.tool_call("read", {"path": "big.py"}))
    faux_a.add(FauxResponse.text("It defines 800 functions."))
    await session.prompt("read big.py")
    await session.models.switch(TINY)
    faux_a.add("## Goal\nunderstand big.py")
    result = await session.compact()
    assert "## Goal" in result.summary
    assert session.context_usage().tokens < TINY.context_window
    await session.close()


async def test_compact_with_a_focus_always_compacts(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    session = await CodingSession.open(_options(options, tools=[]))
    faux_a.add("hello there")
    await session.prompt("hi")
    faux_a.add("## Goal\ngreet")
    result = await session.compact("the greeting")
    assert "Additional focus: the greeting" in str(faux_a.requests[-1].messages[0])
    assert "## Goal" in result.summary
    await session.close()


async def test_with_no_larger_model_the_small_one_summarises_the_big_turn_with_its_result_cut(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, cwd: Path
) -> None:
    _big_file(cwd)
    session = await CodingSession.open(_options(options))
    faux_a.add(FauxResponse.tool_call("read", {"path": "big.py"}))
    faux_a.add(FauxResponse.text("It defines 800 functions."))
    await session.prompt("read big.py")
    faux_a.unregister()  # the big model cannot be called any more (no key, say)
    await session.models.switch(TINY)
    faux_b.add("## Goal\nunderstand big.py")
    faux_b.add("carrying on")
    await session.prompt("carry on")
    assert faux_b.calls == 2 and _is_summary_request(faux_b.requests[0])
    assert all(_request_tokens(r) < TINY.context_window for r in faux_b.requests)
    assert "more characters truncated" in str(faux_b.requests[0].messages[0])
    assert session.messages[-1].role == "assistant" and session.messages[-1].stop_reason == "stop"
    await session.close()


async def test_an_8k_model_compacts_only_near_its_window(
    options: SessionOptions, faux_b: FauxProvider
) -> None:
    """The default 16k reserve left an 8k window a negative threshold: every turn was 'past it'."""
    session = await CodingSession.open(_options(options, model=TINY, tools=[]))
    reasons: list[str] = []
    session.subscribe(lambda e: reasons.append(e.reason) if e.type == "auto_compaction_start" else None)
    for n in range(4):
        faux_b.add(f"answer {n}")
        await session.prompt(f"question {n}: " + "word " * 600)  # ~750 tokens each
    tokens = session.context_usage().tokens
    assert 2_500 < tokens < TINY.context_window - 2_048
    assert reasons == []
    await session.close()

"""Compaction: cut-point rules, split turns, summaries, overflow recovery, abort."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from baton.agent.messages import AgentMessage, CompactionSummaryMessage
from baton.providers.faux import FauxProvider, FauxResponse, faux_tool_call
from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.providers.models import Model
from baton.sessions import CodingSession, CompactionAborted, CompactionError, SessionOptions
from baton.sessions.compaction import (
    SUMMARIZATION_SYSTEM_PROMPT,
    estimate_context_tokens,
    find_cut_point,
    prepare_compaction,
)
from baton.sessions.entries import CompactionEntry, MessageEntry, SessionEntry
from baton.sessions.settings import CompactionSettings
from baton.sessions.store import SessionStore
from baton.sessions.tokens import estimate_message_tokens
from tests.sessions.conftest import quiet_settings

OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _assistant(text: str = "", calls: list[ToolCall] | None = None, tokens: int = 0) -> AssistantMessage:
    content: list[Any] = [TextContent(text=text)] if text else []
    content.extend(calls or [])
    msg = AssistantMessage(api="faux-a", provider="prov-a", model="model-a", content=content,
                           stop_reason="toolUse" if calls else "stop")
    msg.usage.input = tokens
    msg.usage.total_tokens = tokens
    return msg


def _result(call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text=text)])


def _tokens(entries: list[SessionEntry], start: int) -> int:
    return sum(estimate_message_tokens(e.message) for e in entries[start:] if isinstance(e, MessageEntry))


def _words(n: int) -> str:
    return " ".join(f"word{i}" for i in range(n))


def _path(*messages: AgentMessage, changes: dict[int, tuple[str, str]] | None = None) -> list[SessionEntry]:
    store = SessionStore.in_memory("/w")
    for index, message in enumerate(messages):
        if changes and index in changes:
            store.append_model_change(*changes[index])
        store.append_message(message)
    return store.branch_path()


# ------------------------------------------------------------------------------- cut points


def test_cut_lands_on_a_user_message_when_the_budget_ends_there() -> None:
    call = faux_tool_call("read", {"path": "a.py"}, id="c1")
    path = _path(_user(_words(300)), _assistant(calls=[call]), _result(call, _words(300)),
                 _assistant("done"), _user("second " + _words(50)), _assistant("ok " + _words(50)))
    keep = _tokens(path, 4)  # exactly the last turn
    cut = find_cut_point(path, 0, len(path), keep)
    assert cut.first_kept_index == 4 and not cut.is_split_turn and cut.turn_start_index == -1


def test_cut_never_lands_on_a_tool_result() -> None:
    call = faux_tool_call("bash", {"command": "ls"}, id="c1")
    path = _path(_user("start"), _assistant(calls=[call]), _result(call, _words(500)), _assistant(_words(20)))
    # the budget is reached inside the tool result: the cut moves forward to the next assistant
    keep = _tokens(path, 3) + 1
    cut = find_cut_point(path, 0, len(path), keep)
    assert path[cut.first_kept_index].message.role == "assistant"  # type: ignore[attr-defined]
    assert cut.first_kept_index == 3
    assert cut.is_split_turn and cut.turn_start_index == 0


def test_cut_at_an_assistant_with_tool_calls_keeps_its_results() -> None:
    call = faux_tool_call("bash", {"command": "ls"}, id="c1")
    path = _path(_user(_words(400)), _assistant(_words(30), calls=[call]), _result(call, "small"), _assistant("x"))
    keep = _tokens(path, 1)
    cut = find_cut_point(path, 0, len(path), keep)
    assert cut.first_kept_index == 1 and cut.is_split_turn and cut.turn_start_index == 0
    kept_roles = [e.message.role for e in path[cut.first_kept_index :]]  # type: ignore[attr-defined]
    assert kept_roles == ["assistant", "toolResult", "assistant"]


def test_settings_entries_just_before_the_cut_stay_with_the_kept_part() -> None:
    path = _path(_user(_words(400)), _assistant("a"), _user("b " + _words(10)), _assistant("c"),
                 changes={2: ("prov-b", "model-b")})
    # path: u, a, model_change, u, a
    assert path[2].type == "model_change"
    cut = find_cut_point(path, 0, len(path), _tokens(path, 3))
    assert cut.first_kept_index == 2


def test_everything_fits_means_nothing_to_compact() -> None:
    path = _path(_user("hi"), _assistant("hello"))
    with pytest.raises(CompactionError, match="Nothing to compact"):
        prepare_compaction(path, CompactionSettings(keep_recent_tokens=10_000))


def test_prepare_splits_history_and_turn_prefix_and_collects_files() -> None:
    read = faux_tool_call("read", {"path": "src/a.py"}, id="r1")
    edit = faux_tool_call("edit", {"path": "src/b.py"}, id="e1")
    path = _path(
        _user("first task " + _words(200)), _assistant("did it " + _words(200)),
        _user("second task"), _assistant(calls=[read]), _result(read, _words(300)),
        _assistant(calls=[edit]), _result(edit, "edited"), _assistant("finished " + _words(40)),
    )
    keep = _tokens(path, 5)  # the budget ends inside the second turn
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=keep), context_window=10**6)
    assert prep.is_split_turn
    assert prep.first_kept_entry_id == path[5].id
    assert [m.role for m in prep.messages_to_summarize] == ["user", "assistant"]
    assert [m.role for m in prep.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert prep.read_files == {"src/a.py"}
    assert prep.modified_files == set(), "the edit is in the kept part, not in what is summarised"


def test_a_previous_compaction_bounds_the_next_one() -> None:
    store = SessionStore.in_memory("/w")
    for i in range(3):
        store.append_message(_user(f"old {i} " + _words(100)))
        store.append_message(_assistant(f"old answer {i}"))
    store.append_compaction("EARLIER SUMMARY", store.entries[4].id, 1000, {"readFiles": ["x.py"], "modifiedFiles": []})
    for i in range(3):
        store.append_message(_user(f"new {i} " + _words(100)))
        store.append_message(_assistant(f"new answer {i}"))
    path = store.branch_path()
    prep = prepare_compaction(path, CompactionSettings(keep_recent_tokens=1), context_window=10**6)
    assert prep.previous_summary == "EARLIER SUMMARY"
    texts = [m.content[0].text for m in prep.messages_to_summarize if isinstance(m, UserMessage)]  # type: ignore[union-attr]
    assert all(t.startswith("new") for t in texts)
    assert "x.py" in prep.read_files


def test_context_tokens_are_last_usage_plus_estimates_after_it() -> None:
    messages: list[AgentMessage] = [_user("a"), _assistant("b", tokens=5000), _user(_words(100))]
    estimate = estimate_context_tokens(messages)
    assert estimate.usage_tokens == 5000
    assert estimate.trailing_tokens == estimate_message_tokens(messages[2]) > 0
    assert estimate.tokens == 5000 + estimate.trailing_tokens
    # a usage from before the latest compaction summary is stale
    summary = CompactionSummaryMessage(summary="s", tokens_before=5000, timestamp=messages[1].timestamp + 10)
    stale = estimate_context_tokens([summary, messages[1], messages[2]])
    assert stale.usage_tokens == 0 and stale.last_usage_index == -1


# ------------------------------------------------------------------------------- in a session


async def _chat(session: CodingSession, turns: int) -> None:
    for i in range(turns):
        await session.prompt(f"question {i}: " + _words(150))


def _compaction_settings(keep: int = 50) -> Any:
    return quiet_settings(compaction={"keepRecentTokens": keep})


async def test_manual_compact_summarises_with_the_current_model(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    options.settings = _compaction_settings()
    faux_a.add(*[FauxResponse.text(f"answer {i}") for i in range(4)])  # short: the cut lands on a question
    faux_a.add(FauxResponse.text("## Goal\nfirst summary"))
    session = await CodingSession.open(options)
    events: list[str] = []
    session.subscribe(lambda e: events.append(e.type))
    await _chat(session, 4)
    result = await session.compact("the parser")
    request = faux_a.requests[-1]
    assert request.system_prompt == SUMMARIZATION_SYSTEM_PROMPT
    prompt = request.messages[0].content[0].text  # type: ignore[union-attr]
    assert prompt.startswith("<conversation>\n[User]: question 0")
    assert "## Constraints & Preferences" in prompt and "## Next Steps" in prompt
    assert prompt.endswith("Additional focus: the parser")
    assert result.summary.startswith("## Goal\nfirst summary")
    assert events[-2:] == ["auto_compaction_start", "auto_compaction_end"]

    first_kept = session.store.get(result.first_kept_entry_id)
    assert isinstance(first_kept, MessageEntry) and first_kept.message.role == "user"
    assert isinstance(session.messages[0], CompactionSummaryMessage)
    assert session.messages[1] is first_kept.message
    # a second compaction updates the first summary
    faux_a.add(*[FauxResponse.text(f"more {i}") for i in range(3)])
    faux_a.add(FauxResponse.text("## Goal\nsecond summary"))
    await _chat(session, 3)
    second = await session.compact()
    update = faux_a.requests[-1].messages[0].content[0].text  # type: ignore[union-attr]
    assert "<previous-summary>\n## Goal\nfirst summary" in update
    assert "NEW conversation messages" in update
    assert second.summary.startswith("## Goal\nsecond summary")
    await session.close()
    reloaded = SessionStore.load(session.store.path)  # type: ignore[arg-type]
    ctx = reloaded.build_context()
    assert isinstance(ctx.messages[0], CompactionSummaryMessage)
    assert ctx.messages[0].summary == second.summary


async def test_split_turn_gets_a_turn_prefix_summary(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = _compaction_settings(keep=120)
    faux_a.add(FauxResponse.text("first answer " + _words(200)))
    for i in range(4):
        faux_a.add(FauxResponse(content=[faux_tool_call("read", {"path": f"f{i}.py"})]))
    faux_a.add(FauxResponse.text("all files read " + _words(60)))
    faux_a.add(FauxResponse.text("HISTORY"), FauxResponse.text("PREFIX"))
    session = await CodingSession.open(options)
    await session.prompt("first " + _words(200))
    await session.prompt("read four files")
    calls_before = faux_a.calls
    result = await session.compact()
    assert faux_a.calls == calls_before + 2  # history and turn prefix, concurrently
    assert result.summary.startswith("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX")
    prefix_request = faux_a.requests[-1].messages[0].content[0].text  # type: ignore[union-attr]
    assert "This is the PREFIX of a turn" in prefix_request and "[User]: read four files" in prefix_request
    kept = session.store.get(result.first_kept_entry_id)
    assert isinstance(kept, MessageEntry) and kept.message.role == "assistant"
    assert "<read-files>\nf0.py" in result.summary
    await session.close()


async def test_overflow_compacts_and_retries_once(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = _compaction_settings()
    faux_a.add(FauxResponse.text("a0 " + _words(100)), FauxResponse.text("a1 " + _words(100)))
    faux_a.add(FauxResponse.error(OVERFLOW), FauxResponse.text("SUMMARY"), FauxResponse.text("recovered"))
    session = await CodingSession.open(options)
    events: list[Any] = []
    session.subscribe(events.append)
    await _chat(session, 2)
    await session.prompt("one more " + _words(50))
    kinds = [e.type for e in events if e.type.startswith("auto_")]
    assert kinds == ["auto_compaction_start", "auto_compaction_end"]
    start = next(e for e in events if e.type == "auto_compaction_start")
    end = next(e for e in events if e.type == "auto_compaction_end")
    assert start.reason == "overflow" and end.will_retry and end.result is not None
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == "recovered"
    retry_request = faux_a.requests[-1]
    assert "SUMMARY" in retry_request.messages[0].content[0].text  # type: ignore[union-attr]
    assert not any(isinstance(m, AssistantMessage) and m.stop_reason == "error" for m in retry_request.messages)
    assert isinstance(retry_request.messages[-1], UserMessage)  # the prompt is sent again
    # the error stays in the file (history), not in the context
    assert not any(isinstance(m, AssistantMessage) and m.stop_reason == "error" for m in session.messages)
    assert any(isinstance(e, MessageEntry) and getattr(e.message, "error_message", None) == OVERFLOW
               for e in session.store.entries)
    await session.close()


async def test_overflow_after_the_retry_is_not_retried_again(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = _compaction_settings()
    faux_a.add(FauxResponse.text("a0 " + _words(100)), FauxResponse.text("a1 " + _words(100)))
    faux_a.add(FauxResponse.error(OVERFLOW), FauxResponse.text("SUMMARY"), FauxResponse.error(OVERFLOW))
    session = await CodingSession.open(options)
    events: list[str] = []
    session.subscribe(lambda e: events.append(e.type))
    await _chat(session, 2)
    await session.prompt("again")
    assert events.count("auto_compaction_start") == 1
    assert faux_a.calls == 5 and faux_a.remaining == 0
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.error_message == OVERFLOW
    await session.close()


async def test_abort_during_compaction_leaves_the_session_as_it_was(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    options.settings = _compaction_settings()
    faux_a.add(*[FauxResponse.text(f"answer {i}") for i in range(3)])
    faux_a.add(FauxResponse(content=["a very long summary " * 200], delay=0.01))
    session = await CodingSession.open(options)
    await _chat(session, 3)
    assert session.session_file is not None
    before_bytes = session.session_file.read_bytes()
    before_messages = list(session.messages)
    ends: list[Any] = []

    def on_event(event: Any) -> None:
        if event.type == "auto_compaction_start":
            asyncio.get_running_loop().call_later(0.05, session.abort)
        if event.type == "auto_compaction_end":
            ends.append(event)

    session.subscribe(on_event)
    with pytest.raises(CompactionAborted):
        await session.compact()
    assert ends and ends[0].aborted and ends[0].result is None
    assert session.session_file.read_bytes() == before_bytes
    assert session.messages == before_messages and all(
        a is b for a, b in zip(session.messages, before_messages, strict=True)
    )
    assert not session.is_running
    # the session still works afterwards
    faux_a.add(FauxResponse.text("still here"))
    await session.prompt("hello?")
    assert isinstance(session.messages[-1], AssistantMessage) and session.messages[-1].text == "still here"
    await session.close()


async def test_threshold_compaction_runs_after_a_large_turn(
    baton_home: Path, cwd: Path, faux_a: FauxProvider
) -> None:
    from baton.providers.faux import faux_model

    small: Model = faux_model("small", provider="prov-a", api="faux-a", context_window=40_000)
    settings = quiet_settings(compaction={"reserveTokens": 4_000, "keepRecentTokens": 2_000})
    faux_a.add(*[FauxResponse.text("ok", usage={"input": 10_000 * (i + 1), "output": 10}) for i in range(4)])
    faux_a.add(FauxResponse.text("THRESHOLD SUMMARY"))
    session = await CodingSession.open(
        SessionOptions(cwd=cwd, model=small, tools=[], context_files=False, settings=settings)
    )
    reasons: list[str] = []
    session.subscribe(lambda e: reasons.append(e.reason) if e.type == "auto_compaction_start" else None)
    for i in range(4):
        await session.prompt(f"turn {i} " + _words(600))
    assert reasons == ["threshold"]  # 40,000 > 40,000 - 4,000 after the fourth turn
    assert isinstance(session.messages[0], CompactionSummaryMessage)
    assert any(isinstance(e, CompactionEntry) for e in session.store.entries)
    assert session.context_usage().tokens < 10_000, "usage reported before the compaction is stale"
    await session.close()


async def test_compaction_model_summarises_when_it_can_read_the_part(
    options: SessionOptions, faux_a: FauxProvider, faux_b: FauxProvider, model_b: Model
) -> None:
    # compaction.model names a role (or provider/id): the fast model summarises, not the current one
    options.settings = quiet_settings(compaction={"keepRecentTokens": 50, "model": "fast"},
                                      models={"fast": model_b.ref})
    faux_a.add(*[FauxResponse.text(f"answer {i}") for i in range(4)])
    faux_b.add(FauxResponse.text("## Goal\nsummary by the fast model"))
    session = await CodingSession.open(options)
    await _chat(session, 4)
    result = await session.compact()
    await session.close()
    assert result.summary.startswith("## Goal\nsummary by the fast model")
    assert faux_b.requests and faux_b.requests[-1].system_prompt == SUMMARIZATION_SYSTEM_PROMPT
    assert all(r.system_prompt != SUMMARIZATION_SYSTEM_PROMPT for r in faux_a.requests)

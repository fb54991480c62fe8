"""Session management: files and resume, fork, tree navigation, names, stats, models, bash."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from baton.agent.agent import AgentBusyError
from baton.agent.messages import BashExecutionMessage
from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import AssistantMessage, UserMessage
from baton.providers.models import Model
from baton.sessions import (
    CodingSession,
    NoModelError,
    SessionBusyError,
    SessionLockedError,
    SessionOptions,
    SessionStore,
    list_sessions,
)
from baton.sessions.listing import cwd_slug


async def _open(options: SessionOptions, **changes: Any) -> CodingSession:
    for key, value in changes.items():
        setattr(options, key, value)
    return await CodingSession.open(options)


async def test_new_session_file_location_and_name(options: SessionOptions, faux_a: FauxProvider,
                                                  baton_home: Path, cwd: Path) -> None:
    faux_a.add("hello")
    session = await _open(options)
    assert session.session_file is not None and not session.session_file.exists()
    await session.prompt("hi")
    path = session.session_file
    assert path.parent == baton_home / "sessions" / cwd_slug(cwd)
    assert cwd_slug("/Users/me/my-proj") == "--Users-me-my-proj--"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_" + session.session_id + r"\.jsonl", path.name)
    await session.close()


async def test_api_keys_never_reach_the_session_file(options: SessionOptions, faux_a: FauxProvider) -> None:
    faux_a.add("fine")
    session = await _open(options, api_key="sk-test-SECRET-0123456789")
    assert session.agent.get_api_key is not None
    assert session.agent.get_api_key("prov-a") == "sk-test-SECRET-0123456789"
    await session.prompt("hi")
    await session.close()
    assert session.session_file is not None
    assert "SECRET" not in session.session_file.read_text()


async def test_continue_id_prefix_and_no_session(options: SessionOptions, faux_a: FauxProvider,
                                                 baton_home: Path, cwd: Path) -> None:
    faux_a.add("one", "two", "three", "four")
    first = await _open(options)
    await first.prompt("first session")
    await first.close()
    await asyncio.sleep(0.01)
    second = await _open(options, session="new")
    await second.prompt("second session")
    await second.close()

    again = await _open(options, session="continue")
    assert again.session_id == second.session_id
    assert [m.role for m in again.messages] == ["user", "assistant"]
    await again.close()

    by_prefix = await _open(options, session=first.session_id[:8])
    assert by_prefix.session_id == first.session_id
    await by_prefix.close()

    infos = list_sessions(cwd)
    assert [i.id for i in infos] == [second.session_id, first.session_id]
    assert infos[0].first_message == "second session" and infos[0].message_count == 2

    memory = await _open(options, session="none")
    await memory.prompt("not saved")
    assert memory.session_file is None
    await memory.close()
    assert len(list_sessions(cwd)) == 2


async def test_second_session_on_the_same_file_is_refused(options: SessionOptions, faux_a: FauxProvider) -> None:
    faux_a.add("a")
    session = await _open(options)
    await session.prompt("x")
    with pytest.raises(SessionLockedError):
        await _open(options, session=str(session.session_file))
    await session.close()


async def test_no_model_anywhere_is_a_clear_error(baton_home: Path, cwd: Path) -> None:
    with pytest.raises(NoModelError, match="API key"):
        await CodingSession.open(SessionOptions(cwd=cwd, tools=[], context_files=False))


async def test_fork_starts_a_new_file_before_the_chosen_message(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    faux_a.add("answer one", "answer two")
    session = await _open(options)
    changes: list[str] = []
    session.subscribe(lambda e: changes.append(e.reason) if e.type == "session_changed" else None)
    await session.prompt("question one")
    await session.prompt("question two")
    old_path = session.session_file
    assert old_path is not None
    old_bytes = old_path.read_bytes()
    points = session.fork_points()
    assert [text for _, text in points] == ["question one", "question two"]
    text = await session.fork(points[1][0])
    assert text == "question two" and changes == ["fork"]
    assert session.session_file != old_path and old_path.read_bytes() == old_bytes
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.session_file is not None
    header = json.loads(session.session_file.read_text().splitlines()[0])
    assert header["parentSession"] == str(old_path)
    SessionStore.open(old_path).close()  # the old file is released
    await session.close()


async def test_navigate_branches_and_tree(options: SessionOptions, faux_a: FauxProvider) -> None:
    faux_a.add("answer one", "answer two", "answer two bis")
    session = await _open(options)
    await session.prompt("question one")
    await session.prompt("question two")
    second_user = session.fork_points()[1][0]
    edit = session.navigate(second_user)
    assert edit == "question two"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    await session.prompt("question two, rephrased")
    tree = session.tree()
    users = [n for n in tree if n.kind == "user"]
    assert [n.preview for n in users] == ["question one", "question two", "question two, rephrased"]
    depth = {n.preview: n.depth for n in users}
    assert depth["question one"] == 0 and depth["question two"] == depth["question two, rephrased"] == 1
    on_branch = {n.preview for n in tree if n.on_current_branch and n.kind == "user"}
    assert on_branch == {"question one", "question two, rephrased"}
    assert sum(n.is_leaf for n in tree) == 1 and tree[-1].is_leaf
    # navigate to an assistant message: it becomes the leaf
    first_answer = next(n.id for n in tree if n.preview == "answer one")
    assert session.navigate(first_answer) is None
    assert [m.role for m in session.messages] == ["user", "assistant"]
    await session.close()
    # the abandoned branch is still in the file
    assert session.session_file is not None
    assert "question two\"" in session.session_file.read_text()


async def test_switch_session_restores_model_and_thinking(
    options: SessionOptions, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    faux_b.add("from b")
    faux_a.add("from a")
    on_b = await _open(options, model=model_b)
    await on_b.prompt("on b")
    await on_b.close()
    session = await _open(options, model=model_a, thinking="medium", session="new")
    await session.prompt("on a")
    await session.switch_session(on_b.session_id)
    assert session.session_id == on_b.session_id and session.model.ref == model_b.ref
    assert session.thinking_level == "off"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    await session.close()


async def test_name_stats_and_context_usage(options: SessionOptions, faux_a: FauxProvider, cwd: Path) -> None:
    faux_a.add(FauxResponse.text("one", usage={"input": 100, "output": 20, "cacheRead": 5}),
               FauxResponse.text("two", usage={"input": 200, "output": 30}))
    session = await _open(options)
    await session.prompt("a")
    await session.prompt("b")
    session.set_name("Parser work")
    assert session.session_name == "Parser work"
    stats = session.stats()
    assert (stats.user_messages, stats.assistant_messages, stats.total_messages) == (2, 2, 4)
    assert (stats.input_tokens, stats.output_tokens, stats.cache_read_tokens) == (300, 50, 5)
    usage = session.context_usage()
    assert usage.tokens == 230 and usage.context_window == 128_000
    assert usage.percent == pytest.approx(100 * 230 / 128_000)
    await session.close()
    assert list_sessions(cwd)[0].name == "Parser work"


async def test_thinking_levels_and_model_cycling(
    options: SessionOptions, model_a: Model, model_b: Model, faux_a: FauxProvider
) -> None:
    session = await _open(options)
    assert session.models.set_thinking("xhigh") == "high"  # no xhigh without compat support
    assert session.models.cycle_thinking() == "off"
    assert session.models.cycle_thinking() == "minimal"
    seen: list[Any] = []
    session.subscribe(seen.append)
    assert await session.models.cycle() is model_b
    assert session.thinking_level == "off"
    assert await session.models.cycle() is model_a
    assert session.thinking_level == "minimal", "the requested level comes back with a reasoning model"
    assert [e.type for e in seen].count("model_change") == 2
    session.settings.favorite_models = [model_a.ref]
    assert await session.models.cycle() is None  # a single favourite: nothing to cycle to
    await session.close()


async def test_a_follow_up_queued_as_the_run_ends_is_still_answered(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    faux_a.add("first answer", "second answer")
    session = await _open(options)
    queued = False

    def queue_late(event: Any) -> None:
        nonlocal queued
        if event.type == "agent_end" and not queued:
            queued = True
            # Lands after the agent's last look at its queues, while prompt() is finishing.
            asyncio.get_running_loop().call_soon(session.follow_up, "one more")

    session.subscribe(queue_late)
    await session.prompt("go")
    texts = [m.text for m in session.messages if isinstance(m, AssistantMessage)]
    assert texts == ["first answer", "second answer"]
    assert session.dequeue() == [] and not session.is_running
    await session.close()


async def test_prompt_while_running_is_refused_but_steering_queues(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse(content=["slow " * 30], delay=0.01), "after steering")
    session = await _open(options)
    task = asyncio.create_task(session.prompt("start"))
    await asyncio.sleep(0.02)
    assert session.is_running
    with pytest.raises(SessionBusyError):
        await session.prompt("again")
    with pytest.raises(AgentBusyError):
        await session.prompt("again")
    session.follow_up("queued one")
    session.follow_up("queued two")
    assert session.dequeue() == ["queued one", "queued two"]
    session.follow_up("follow up")
    await task
    texts = [m.content[0].text for m in session.messages if isinstance(m, UserMessage)]  # type: ignore[union-attr]
    assert texts == ["start", "follow up"]
    await session.close()


async def test_run_bash_records_output_and_waits_for_a_running_prompt(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path
) -> None:
    faux_a.add("ok", FauxResponse(content=["slow " * 30], delay=0.002), "third")
    session = await _open(options)
    await session.prompt("hi")
    shown: list[str] = []
    message = await session.run_bash("echo hello; echo there", on_output=shown.append)
    assert isinstance(message, BashExecutionMessage)
    assert message.output == "hello\nthere" and message.exit_code == 0 and not message.cancelled
    assert session.messages[-1] is message
    failed = await session.run_bash("echo oops; exit 3", exclude_from_context=True)
    assert failed.exit_code == 3 and failed.output == "oops" and failed.exclude_from_context
    # while a prompt runs, the result waits for the next prompt (tool calls and results stay paired)
    task = asyncio.create_task(session.prompt("slow one"))
    await asyncio.sleep(0.01)
    during = await session.run_bash("echo during")
    assert during not in session.messages
    await task
    await session.prompt("next")
    assert during in session.messages
    roles = [m.role for m in session.messages]
    assert roles.index("bashExecution") < roles.index("user", 2)
    sent = faux_a.requests[-1].messages
    assert any("echo hello" in str(m.content) for m in sent)
    assert not any("oops" in str(m.content) for m in sent), "!! commands stay out of the context"
    await session.close()
    stored = [line for line in session.session_file.read_text().splitlines() if "bashExecution" in line]  # type: ignore[union-attr]
    assert len(stored) == 3


async def test_new_session_keeps_model_and_starts_empty(options: SessionOptions, faux_a: FauxProvider) -> None:
    faux_a.add("a", "b")
    session = await _open(options)
    await session.prompt("first")
    first_id = session.session_id
    await session.new_session()
    assert session.session_id != first_id and session.messages == []
    await session.prompt("second")
    assert isinstance(session.messages[-1], AssistantMessage)
    await session.close()
    assert len(list_sessions(options.cwd)) == 2


async def test_export_from_a_session(options: SessionOptions, faux_a: FauxProvider, tmp_path: Path) -> None:
    faux_a.add("<b>bold</b> answer")
    session = await _open(options)
    await session.prompt("export me")
    html_path = session.export_html(tmp_path / "s.html")
    md_path = session.export_markdown(tmp_path / "s.md")
    assert "&lt;b&gt;bold&lt;/b&gt; answer" in html_path.read_text()
    assert "export me" in md_path.read_text() and "&lt;b&gt;bold" in md_path.read_text()
    await session.close()

"""Subagents (the ``task`` tool) over real sockets: the parent speaks Anthropic Messages, its
subagents OpenAI Chat Completions, one replay server answers both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from baton.sessions.store import SessionStore
from tests.provider_scripts import text_reply, tool_call_reply
from tests.providers.test_anthropic_messages_sdk import assert_valid_request
from tests.providers.test_openai_completions import check_against_sdk
from tests.replay_server import ReplayServer, Reply
from tests.sessions.subagent_helpers import (
    CHILD_API,
    PARENT_API,
    TwoProtocols,
    child_reads_then_answers,
    open_parent,
    task_calls_reply,
    text_of,
    tool_results,
    write_agent,
)

pytestmark = pytest.mark.usefixtures("baton_home")


def _events(session: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    session.subscribe(lambda e: events.append(e.to_dict()) if hasattr(e, "to_dict") else None)
    return events


async def test_a_subagent_on_another_protocol_answers_the_parent(tmp_path: Path, baton_home: Path) -> None:
    (tmp_path / "notes.txt").write_text("the secret word is heron\n")
    write_agent(baton_home / "agents", "scout", model="replay-o/child-model", tools="Read, Grep")
    script = TwoProtocols(
        [task_calls_reply([("toolu_task1", {"description": "find the word", "prompt": "What word is in notes.txt?",
                                            "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "The word is heron."))],
        child_reads_then_answers("notes.txt", lambda text: "It says heron." if "heron" in text else "nothing"),
    )
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions")
        events = _events(session)
        try:
            await asyncio.wait_for(session.prompt("ask the scout"), 60)
            parent_file = session.session_file
        finally:
            await session.close()

    # the parent's second request holds the task and the subagent's final answer, nothing else of it
    assert len(script.parent_bodies) == 2 and len(script.child_bodies) == 2
    results = tool_results(script.parent_bodies[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_task1"]
    assert "It says heron." in json.dumps(results[0]["content"])
    assert "the secret word" not in json.dumps(script.parent_bodies[1])  # the file's text stayed in the subagent
    for body in script.parent_bodies:
        assert_valid_request(body)
    for body in script.child_bodies:
        check_against_sdk(body)
    # the subagent got a fresh context: its system prompt and the task, then its own tool turn
    first = script.child_bodies[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"] or [m["role"] for m in first] == ["developer", "user"]
    assert "What word is in notes.txt?" in json.dumps(first[-1])
    assert "You look things up." in json.dumps(first[0])
    assert [t["function"]["name"] for t in script.child_bodies[0]["tools"]] == ["read", "grep"]

    end = next(e for e in events if e["type"] == "tool_execution_end" and e["toolName"] == "task")
    details = end["result"]["details"]
    assert not end["isError"] and details["agent"] == "scout" and details["model"] == "replay-o/child-model"
    assert details["status"] == "done" and details["turns"] == 2
    # its transcript is a session file of its own, pi's format, naming the parent
    child = SessionStore.load(details["sessionFile"])
    assert child.header.parent_session == str(parent_file)
    roles = [m.role for m in child.build_context().messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert child.build_context().model == ("replay-o", "child-model")
    # and the parent's events nest the subagent's under the task call
    nested = [e for e in events if e["type"] == "subagent_event"]
    assert nested and {e["toolCallId"] for e in nested} == {"toolu_task1"}
    assert [e["event"]["type"] for e in nested][-1] == "agent_end"
    assert any(e["event"]["type"] == "tool_execution_end" and e["event"]["toolName"] == "read" for e in nested)
    assert [e["type"] for e in events].count("agent_end") == 1  # the subagent's end is not the parent's


def _answer(text: str) -> Any:
    """A subagent that answers ``text`` at once, in whichever protocol it speaks."""
    from tests.sessions.subagent_helpers import protocol_of

    return lambda body: Reply.sse(text_reply(protocol_of(body), text))


def _task_end(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "tool_execution_end" and e["toolCallId"] == call_id)


async def _run(tmp_path: Path, script: TwoProtocols, prompt: str = "go", entries: list[dict[str, Any]] | None = None,
               **options: Any) -> list[dict[str, Any]]:
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, **options)
        events = _events(session)
        try:
            await asyncio.wait_for(session.prompt(prompt), 60)
            if entries is not None:
                entries.extend(e.model_dump(by_alias=True) for e in session.store.entries)
        finally:
            await session.close()
    return events


async def test_a_project_agent_cannot_widen_tools_or_choose_its_model(tmp_path: Path) -> None:
    """Attack: a repository's agent asks for bash and write and another provider's model."""
    write_agent(tmp_path / ".claude" / "agents", "wide", model="replay-o/child-model",
                tools="Bash, Write, Edit, Read, Grep")
    script = TwoProtocols([task_calls_reply([("toolu_w", {"description": "d", "prompt": "p", "agent": "wide"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], _answer("nothing to do"))
    events = await _run(tmp_path, script, tools=["read", "task"])
    assert len(script.child_bodies) == 1
    child = script.child_bodies[0]
    assert "system" in child  # it ran on the parent's model (Anthropic), not the one it named
    assert [t["name"] for t in child["tools"]] == ["read", "grep"]
    details = _task_end(events, "toolu_w")["result"]["details"]
    assert details["model"] == "replay-a/parent-model"


async def test_subagents_cannot_nest_past_the_depth_limit(tmp_path: Path, baton_home: Path) -> None:
    """Attack: a subagent that calls task itself (a recursion bomb) gets no task tool."""
    write_agent(baton_home / "agents", "bomb", model="replay-o/child-model")

    def child(body: dict[str, Any]) -> Reply:
        if not [m for m in body["messages"] if m["role"] == "tool"]:
            return Reply.sse(tool_call_reply(CHILD_API, "call_t", "task",
                                             {"description": "again", "prompt": "again", "agent": "bomb"}))
        return Reply.sse(text_reply(CHILD_API, "stopped"))

    script = TwoProtocols([task_calls_reply([("toolu_b", {"description": "d", "prompt": "p", "agent": "bomb"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(tmp_path, script)
    assert len(script.child_bodies) == 2  # one subagent, two turns: no grandchild ever asked a model
    assert "task" not in [t["function"]["name"] for t in script.child_bodies[0]["tools"]]
    nested = [e["event"] for e in events if e["type"] == "subagent_event"]
    refused = next(e for e in nested if e["type"] == "tool_execution_end" and e["toolName"] == "task")
    assert refused["isError"] and "Tool task not found" in text_of(refused["result"])


async def test_a_subagent_on_a_model_without_a_key_fails_that_call_only(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "gpt", model="openai/gpt-4o-mini")
    script = TwoProtocols([task_calls_reply([("toolu_k", {"description": "d", "prompt": "p", "agent": "gpt"})]),
                           Reply.sse(text_reply(PARENT_API, "carrying on"))], _answer("never"))
    events = await _run(tmp_path, script)
    end = _task_end(events, "toolu_k")
    assert end["isError"] and "OPENAI_API_KEY" in text_of(end["result"])
    assert script.child_bodies == [] and len(script.parent_bodies) == 2  # the session went on
    unknown = TwoProtocols([task_calls_reply([("toolu_u", {"description": "d", "prompt": "p", "agent": "nope"})]),
                            Reply.sse(text_reply(PARENT_API, "ok"))], _answer("never"))
    end = _task_end(await _run(tmp_path, unknown), "toolu_u")
    assert end["isError"] and "Unknown agent 'nope'" in text_of(end["result"]) and "explore" in text_of(end["result"])


async def test_a_subagent_meets_the_permission_policy(tmp_path: Path, baton_home: Path) -> None:
    """Attack: a subagent writes where the user's rules deny it, and outside the sandbox."""
    write_agent(baton_home / "agents", "writer", model="replay-o/child-model")
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls = iter([("call_w", "write", {"path": "denied.txt", "content": "x"}),
                  ("call_b", "bash", {"command": f"echo escaped > {outside}/escaped.txt"})])

    def child(body: dict[str, Any]) -> Reply:
        step = next(calls, None)
        if step is None:
            return Reply.sse(text_reply(CHILD_API, "done"))
        return Reply.sse(tool_call_reply(CHILD_API, step[0], step[1], step[2]))

    script = TwoProtocols([task_calls_reply([("toolu_p", {"description": "d", "prompt": "p", "agent": "writer"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    entries: list[dict[str, Any]] = []
    events = await _run(workspace, script, entries=entries, settings={"permissions": {"deny": ["write(denied.txt)"]}})
    nested = [e["event"] for e in events if e["type"] == "subagent_event"]
    write = next(e for e in nested if e["type"] == "tool_execution_end" and e["toolName"] == "write")
    assert write["isError"] and "denied by the rule" in text_of(write["result"])
    assert not (workspace / "denied.txt").exists()
    assert not (outside / "escaped.txt").exists()  # the subagent's bash ran in the session's sandbox
    bash = next(e for e in nested if e["type"] == "tool_execution_end" and e["toolName"] == "bash")
    assert bash["isError"] and "No such file or directory" in text_of(bash["result"])  # the sandbox's own /tmp
    decisions = {e["data"]["toolCallId"]: e["data"] for e in entries if e.get("customType") == "permission_decision"}
    assert decisions["call_w"]["decision"] == "deny"  # recorded in the parent's session, as its own calls are


async def test_a_repeated_call_id_is_refused_before_any_gate(tmp_path: Path, baton_home: Path) -> None:
    """Attack: a subagent's model reuses the id of the parent's running call, whose per-call
    permission state (path judged, sandbox or not) the policy keys by that id."""
    write_agent(baton_home / "agents", "twin", model="replay-o/child-model")
    (tmp_path / "a.txt").write_text("a")

    def child(body: dict[str, Any]) -> Reply:
        if not [m for m in body["messages"] if m["role"] == "tool"]:
            return Reply.sse(tool_call_reply(CHILD_API, "toolu_same", "read", {"path": "a.txt"}))
        return Reply.sse(text_reply(CHILD_API, "done"))

    script = TwoProtocols([task_calls_reply([("toolu_same", {"description": "d", "prompt": "p", "agent": "twin"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(tmp_path, script)
    nested = [e["event"] for e in events if e["type"] == "subagent_event"]
    read = next(e for e in nested if e["type"] == "tool_execution_end")
    assert read["isError"] and "already used by another running call" in text_of(read["result"])
    assert not [e for e in events if e["type"] == "tool_approval" and e["toolName"] == "read"]


async def test_parallel_subagents_share_the_limit(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "par", model="replay-o/child-model")
    for name in ("one", "two", "three"):
        (tmp_path / f"{name}.txt").write_text(f"content of {name}")

    def child(body: dict[str, Any]) -> Reply:
        task = body["messages"][1]["content"]
        task = task if isinstance(task, str) else "".join(p.get("text", "") for p in task)
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results:
            return Reply.sse(tool_call_reply(CHILD_API, f"call_{task}", "read", {"path": f"{task}.txt"}))
        content = results[-1]["content"]
        return Reply.sse(text_reply(CHILD_API, f"{task} read: {content}"))

    calls = [(f"toolu_{n}", {"description": n, "prompt": n, "agent": "par"}) for n in ("one", "two", "three")]
    script = TwoProtocols([task_calls_reply(calls), Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(tmp_path, script, settings={"subagents": {"maxParallel": 2}})
    running = 0
    most = 0
    for event in events:
        if event["type"] == "subagent_event" and event["event"]["type"] in ("agent_start", "agent_end"):
            running += 1 if event["event"]["type"] == "agent_start" else -1
            most = max(most, running)
    assert most == 2  # two at once, never three
    results = tool_results(script.parent_bodies[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_one", "toolu_two", "toolu_three"]
    for name, result in zip(("one", "two", "three"), results, strict=True):
        assert f"content of {name}" in json.dumps(result["content"])
    for body in script.child_bodies:
        check_against_sdk(body)
    assert_valid_request(script.parent_bodies[1])


async def test_abort_ends_every_running_subagent(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "sleeper", model="replay-o/child-model")

    def child(body: dict[str, Any]) -> Reply:
        task = body["messages"][1]["content"]
        task = task if isinstance(task, str) else "".join(p.get("text", "") for p in task)
        return Reply.sse(tool_call_reply(CHILD_API, f"call_{task}", "bash",
                                         {"command": f"echo started {task}; sleep 30"}, text=f"working on {task}"))

    calls = [(f"toolu_{n}", {"description": n, "prompt": n, "agent": "sleeper"}) for n in ("a", "b")]
    script = TwoProtocols([task_calls_reply(calls), Reply.sse(text_reply(PARENT_API, "unused"))], child)
    with ReplayServer(script) as server:
        session = await open_parent(tmp_path, server, sessions=tmp_path / "sessions")
        events = _events(session)
        started: set[str] = set()

        def on_event(event: Any) -> None:
            data = event.to_dict() if hasattr(event, "to_dict") else {}
            inner = data.get("event", {})
            if data.get("type") == "subagent_event" and inner.get("type") == "tool_execution_start":
                started.add(data["toolCallId"])
                if len(started) == 2:
                    session.abort()

        session.subscribe(on_event)
        try:
            await asyncio.wait_for(session.prompt("go"), 60)
        finally:
            await session.close()
    assert len(script.parent_bodies) == 1  # the run ended there
    for call_id in ("toolu_a", "toolu_b"):
        end = _task_end(events, call_id)
        details = end["result"]["details"]
        assert end["isError"] and details["status"] == "aborted", end
        assert "was aborted" in text_of(end["result"])
        child = SessionStore.load(details["sessionFile"])
        messages = child.build_context().messages
        assert messages[-1].role == "toolResult" and messages[-1].is_error  # its bash call, aborted


async def test_a_subagents_edits_rewind_with_the_prompt_that_started_it(tmp_path: Path, baton_home: Path) -> None:
    from baton.sessions.checkpoints import git as git_module

    if git_module.find_git() is None:
        pytest.skip("git is not installed")
    write_agent(baton_home / "agents", "editor", model="replay-o/child-model")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "edit_me.txt").write_text("hello world\n")
    steps = iter([("call_e", "edit", {"path": "edit_me.txt", "oldText": "world", "newText": "there"}),
                  ("call_n", "write", {"path": "new.txt", "content": "brand new\n"})])

    def child(body: dict[str, Any]) -> Reply:
        step = next(steps, None)
        if step is None:
            return Reply.sse(text_reply(CHILD_API, "edited"))
        return Reply.sse(tool_call_reply(CHILD_API, *step))

    script = TwoProtocols([task_calls_reply([("toolu_e", {"description": "d", "prompt": "p", "agent": "editor"})]),
                           Reply.sse(text_reply(PARENT_API, "done"))], child)
    with ReplayServer(script) as server:
        session = await open_parent(workspace, server, sessions=tmp_path / "sessions")
        try:
            await asyncio.wait_for(session.prompt("let the editor change things"), 60)
            assert (workspace / "edit_me.txt").read_text() == "hello there\n" and (workspace / "new.txt").exists()
            point = session.checkpoints()[0]
            assert point.text == "let the editor change things"
            assert point.to_json()["changedFiles"] == ["edit_me.txt", "new.txt"]
            result = await session.rewind(point.entry_id, "code")
            assert result.restored == ["edit_me.txt"] and result.removed == ["new.txt"]
            assert (workspace / "edit_me.txt").read_text() == "hello world\n"
            assert not (workspace / "new.txt").exists()
        finally:
            await session.close()


async def test_a_deeper_limit_lets_one_more_level_nest_and_no_more(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "nest", model="replay-o/child-model")

    def child(body: dict[str, Any]) -> Reply:
        if [m for m in body["messages"] if m["role"] == "tool"]:
            return Reply.sse(text_reply(CHILD_API, "level done"))
        can = "task" in [t["function"]["name"] for t in body.get("tools", [])]
        return Reply.sse(tool_call_reply(CHILD_API, "call_t1" if can else "call_t2", "task",
                                         {"description": "deeper", "prompt": "deeper", "agent": "nest"}))

    script = TwoProtocols([task_calls_reply([("toolu_n", {"description": "d", "prompt": "p", "agent": "nest"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(tmp_path, script, settings={"subagents": {"maxDepth": 2}})
    assert len(script.child_bodies) == 4  # a subagent and its subagent, two turns each
    depths = {(e["depth"], e["toolCallId"]) for e in events if e["type"] == "subagent_event"}
    assert depths == {(1, "toolu_n"), (2, "call_t1")}
    deepest = next(e["event"] for e in events if e["type"] == "subagent_event" and e["depth"] == 2
                   and e["event"]["type"] == "tool_execution_end")
    assert deepest["isError"] and "Tool task not found" in text_of(deepest["result"])
    assert not _task_end(events, "toolu_n")["isError"]


async def test_the_users_hooks_see_and_block_a_subagents_calls(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "hooked", model="replay-o/child-model")
    marker = tmp_path / "ran.txt"

    def child(body: dict[str, Any]) -> Reply:
        if [m for m in body["messages"] if m["role"] == "tool"]:
            return Reply.sse(text_reply(CHILD_API, "blocked, giving up"))
        return Reply.sse(tool_call_reply(CHILD_API, "call_h", "bash", {"command": f"touch {marker}"}))

    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'subagents may not run commands' >&2; exit 2"}]}]}
    script = TwoProtocols([task_calls_reply([("toolu_h", {"description": "d", "prompt": "p", "agent": "hooked"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(tmp_path, script, settings={"hooks": hooks})
    nested = [e["event"] for e in events if e["type"] == "subagent_event"]
    bash = next(e for e in nested if e["type"] == "tool_execution_end" and e["toolName"] == "bash")
    assert bash["isError"] and "subagents may not run commands" in text_of(bash["result"])
    assert not marker.exists()


async def test_subagent_stop_hooks_hear_each_finished_subagent(tmp_path: Path, baton_home: Path) -> None:
    # Claude Code's SubagentStop: the user's hook learns which agent ended, for which task call
    write_agent(baton_home / "agents", "quiet", model="replay-o/child-model")
    heard = tmp_path / "heard.json"

    def child(body: dict[str, Any]) -> Reply:
        return Reply.sse(text_reply(CHILD_API, "done"))

    hooks = {"SubagentStop": [{"hooks": [{"type": "command", "command": f"cat > {heard}"}]}]}
    script = TwoProtocols([task_calls_reply([("toolu_s", {"description": "d", "prompt": "p", "agent": "quiet"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    await _run(tmp_path, script, settings={"hooks": hooks})
    payload = json.loads(heard.read_text())
    assert payload["hook_event_name"] == "SubagentStop"
    assert payload["agent_type"] == "quiet" and payload["tool_use_id"] == "toolu_s"


async def test_in_plan_mode_a_subagent_may_explore_but_changes_nothing(tmp_path: Path, baton_home: Path) -> None:
    """Plan mode offers the task tool (its subagent's calls meet plan mode one by one): a subagent
    that tries to write is refused like the main agent, and nothing on disk changes."""
    write_agent(baton_home / "agents", "eager", model="replay-o/child-model")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls = iter([("call_pw", "write", {"path": "made.txt", "content": "x"})])

    def child(body: dict[str, Any]) -> Reply:
        step = next(calls, None)
        if step is None:
            return Reply.sse(text_reply(CHILD_API, "looked around"))
        return Reply.sse(tool_call_reply(CHILD_API, step[0], step[1], step[2]))

    script = TwoProtocols([task_calls_reply([("toolu_pm", {"description": "d", "prompt": "p", "agent": "eager"})]),
                           Reply.sse(text_reply(PARENT_API, "ok"))], child)
    events = await _run(workspace, script, approval="plan")
    nested = [e["event"] for e in events if e["type"] == "subagent_event"]
    write = next(e for e in nested if e["type"] == "tool_execution_end" and e["toolName"] == "write")
    assert write["isError"] and "plan mode is read-only" in text_of(write["result"])
    assert not (workspace / "made.txt").exists()
    assert not _task_end(events, "toolu_pm")["isError"]

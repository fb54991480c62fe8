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

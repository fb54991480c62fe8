"""Subagents through the installed program's print/JSON modes: the parent on Anthropic Messages,
its subagent on OpenAI Chat Completions (both from models.json), one replay server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.sessions.store import SessionStore
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply
from tests.sessions.subagent_helpers import (
    PARENT_API,
    TwoProtocols,
    child_reads_then_answers,
    task_calls_reply,
    write_agent,
)
from tests.tui.cli_harness import run_baton, write_models_json


def _models(home: Path, url: str) -> None:
    write_models_json(home, {
        "replay-a": {"baseUrl": url, "api": "anthropic-messages", "apiKey": "key-for-a",
                     "models": [{"id": "parent-model"}]},
        "replay-o": {"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "key-for-o",
                     "models": [{"id": "child-model"}]},
    })


def test_json_mode_nests_the_subagents_events_under_the_task_call(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    (cwd / "notes.txt").write_text("the word is kestrel\n")
    write_agent(home / ".claude" / "agents", "scout", model="replay-o/child-model", tools="Read")
    script = TwoProtocols(
        [task_calls_reply([("toolu_cli", {"description": "look", "prompt": "Read notes.txt", "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "It is kestrel."))],
        child_reads_then_answers("notes.txt", lambda text: "kestrel" if "kestrel" in text else "?"),
    )
    with ReplayServer(script) as server:
        _models(home, server.url)
        done = run_baton(home, cwd, "-p", "--mode", "json", "--model", "replay-a/parent-model", "ask the scout")
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    nested = [e for e in events if e["type"] == "subagent_event"]
    assert nested and all(e["toolCallId"] == "toolu_cli" and e["agent"] == "scout" for e in nested)
    inner = [e["event"]["type"] for e in nested]
    assert inner[0] == "agent_start" and inner[-1] == "agent_end" and "message_update" not in inner
    updates = [e for e in events if e["type"] == "tool_execution_update" and e["toolCallId"] == "toolu_cli"]
    assert updates and updates[-1]["partialResult"]["details"]["model"] == "replay-o/child-model"
    end = next(e for e in events if e["type"] == "tool_execution_end" and e["toolCallId"] == "toolu_cli")
    assert not end["isError"] and end["result"]["content"][0]["text"] == "kestrel"
    child = SessionStore.load(end["result"]["details"]["sessionFile"])
    assert [m.role for m in child.build_context().messages] == ["user", "assistant", "toolResult", "assistant"]
    assert Path(child.header.parent_session or "").is_file()
    assert [e["type"] for e in events].count("agent_end") == 1
    for key in ("key-for-a", "key-for-o"):
        assert key not in done.stdout and key not in Path(end["result"]["details"]["sessionFile"]).read_text()
    # each request carried its own provider's key
    assert len(script.child_bodies) == 2 and len(script.parent_bodies) == 2
    for request in requests:
        if request.path.endswith("/chat/completions"):
            assert request.headers.get("authorization") == "Bearer key-for-o"
        else:
            assert request.headers.get("x-api-key") == "key-for-a"


def test_acp_shows_a_subagent_as_one_tool_call_with_live_content(tmp_path: Path) -> None:
    import asyncio

    import pytest

    pytest.importorskip("acp")
    from tests.tui.test_acp_mode import EditorClient, acp_agent

    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    (cwd / "notes.txt").write_text("the word is plover\n")
    write_agent(home / "agents", "scout", model="replay-o/child-model", tools="Read")
    script = TwoProtocols(
        [task_calls_reply([("toolu_acp", {"description": "look", "prompt": "Read notes.txt", "agent": "scout"})]),
         Reply.sse(text_reply(PARENT_API, "It is plover."))],
        child_reads_then_answers("notes.txt", lambda text: "plover" if "plover" in text else "?"),
    )

    async def story() -> EditorClient:
        client = EditorClient()
        async with acp_agent(client, home, cwd, "--model", "replay-a/parent-model") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(cwd), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[{"type": "text", "text": "ask the scout"}])
        return client

    with ReplayServer(script) as server:
        _models(home, server.url)
        client = asyncio.run(story())
    calls = client.of_kind("tool_call")
    assert [c["toolCallId"] for c in calls] == ["toolu_acp"]  # the subagent's own read is not the editor's call
    assert calls[0]["title"] == "Task (scout): look"
    updates = [u for u in client.of_kind("tool_call_update") if u["toolCallId"] == "toolu_acp"]
    live = [u for u in updates if "status" not in u and "content" in u]
    assert live and "scout on replay-o/child-model" in json.dumps(live[-1]["content"])
    final = updates[-1]
    assert final["status"] == "completed" and "plover" in json.dumps(final["content"])
    assert client.text() == "It is plover."

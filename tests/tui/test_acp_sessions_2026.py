"""ACP's session methods of 2026, driven by the SDK's client against ``baton --mode acp``:
``session/list`` page by page with ``nextCursor``, ``session/resume`` (no replay), the title as
``session_info_update``, ``session/close``, and the capabilities that say so (HTTP MCP servers
included)."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import text_block  # noqa: E402
from acp.exceptions import RequestError  # noqa: E402

from baton.sessions.listing import default_session_dir  # noqa: E402
from tests.tui.test_acp_mode import EditorClient, acp_agent  # noqa: E402

STORED = 57


def _store_sessions(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``STORED`` session files of ``workdir``, each with one user message; the first is named."""
    monkeypatch.setenv("BATON_HOME", str(home))
    folder = default_session_dir(workdir)
    folder.mkdir(parents=True)
    ids = []
    for n in range(STORED):
        session_id = str(uuid.UUID(int=n + 1))
        stamp = f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z"
        lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": str(workdir)},
            {"type": "message", "id": f"m{n:06d}", "parentId": None, "timestamp": stamp,
             "message": {"role": "user", "content": f"question {n}", "timestamp": 1}},
        ]
        if n == 0:
            lines.append({"type": "session_info", "id": "i0000001", "parentId": "m000000", "timestamp": stamp,
                          "name": "The named one"})
        path = folder / f"{stamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        ids.append(session_id)
    return ids


def test_list_pages_resume_title_and_close(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = _store_sessions(home, workdir, monkeypatch)

    async def story() -> tuple[EditorClient, dict[str, Any]]:
        client = EditorClient()
        seen: dict[str, Any] = {}
        async with acp_agent(client, home, workdir, "--model", "demo/baton-demo") as conn:
            init = await conn.initialize(protocol_version=1)
            seen["http"] = init.agent_capabilities.mcp_capabilities.http
            capabilities = init.agent_capabilities.session_capabilities
            seen["resume"], seen["close"] = capabilities.resume is not None, capabilities.close is not None
            first = await conn.list_sessions(cwd=str(workdir))
            second = await conn.list_sessions(cwd=str(workdir), cursor=first.next_cursor)
            seen["pages"] = [[s.session_id for s in first.sessions], [s.session_id for s in second.sessions]]
            seen["cursors"] = [first.next_cursor, second.next_cursor]
            with pytest.raises(RequestError) as bad:
                await conn.list_sessions(cwd=str(workdir), cursor="../../etc")
            seen["bad cursor"] = str(bad.value)
            # resume the named session: no replay, its title as session_info_update
            resumed = await conn.resume_session(cwd=str(workdir), session_id=stored[0], mcp_servers=[])
            seen["resumed options"] = len(resumed.config_options or [])
            seen["replayed"] = [u for u in client.updates if u["sessionUpdate"] == "user_message_chunk"]
            answer = await conn.prompt(session_id=stored[0], prompt=[text_block("hello again")])
            seen["stop"] = answer.stop_reason
            await conn.prompt(session_id=stored[0], prompt=[text_block("/name Renamed in the editor")])
            await conn.close_session(session_id=stored[0])
            with pytest.raises(RequestError) as closed:
                await conn.prompt(session_id=stored[0], prompt=[text_block("still there?")])
            seen["after close"] = str(closed.value)
            with pytest.raises(RequestError) as twice:
                await conn.close_session(session_id=stored[0])
            seen["close twice"] = str(twice.value)
        return client, seen

    client, seen = asyncio.run(story())
    assert seen["http"] is True and seen["resume"] and seen["close"]
    first, second = seen["pages"]
    assert len(first) == 50 and seen["cursors"][0] is not None and seen["cursors"][1] is None
    assert sorted(first + second) == sorted(stored) and len(set(first + second)) == STORED
    assert "Not a cursor baton gave" in seen["bad cursor"]
    assert seen["resumed options"] >= 1 and seen["replayed"] == []
    assert seen["stop"] == "end_turn"
    titles = [u["title"] for u in client.of_kind("session_info_update")]
    assert titles == ["The named one", "Renamed in the editor"]
    assert "Unknown session" in seen["after close"]
    assert "No open session" in seen["close twice"]
    # the resumed session's file got the new prompt and the name
    [path] = [p for p in default_session_dir(workdir).glob(f"*{stored[0]}.jsonl")]
    text = path.read_text()
    assert "hello again" in text and "Renamed in the editor" in text


def test_an_mcp_servers_yes_no_question_is_asked_in_the_editor(home: Path, workdir: Path, tmp_path: Path) -> None:
    from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
    from tests.replay_server import ReplayServer, Reply
    from tests.tools.mcp.capability_server import __file__ as capability_server
    from tests.tui.cli_harness import write_models_json
    from tests.tui.test_acp_mode import AM, ApprovingEditor

    markers = tmp_path / "markers"
    markers.mkdir()
    replies = [Reply.sse(tool_call_reply(AM, "toolu_q1", "mcp__editor__ask_go_on", {})),
               Reply.sse(tool_call_reply(AM, "toolu_q2", "mcp__editor__ask_user", {})),
               Reply.sse(text_reply(AM, "Asked."))]

    async def story() -> ApprovingEditor:
        client = ApprovingEditor(["accept"])
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--approval", "full") as conn:
            await conn.initialize(protocol_version=1)
            server = acp.schema.McpServerStdio(
                name="editor", command=sys.executable, args=[str(Path(capability_server)), "stdio"],
                env=[acp.schema.EnvVariable(name="MCP_TEST_MARKERS", value=str(markers))])
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[server])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("ask me")])
            assert result.stop_reason == "end_turn"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story())
        last = json.dumps(server.requests[-1].json())
    [(question, options)] = client.asked
    assert question.title == "MCP server 'editor' asks: Shall I go on?" and options == ["accept", "decline"]
    assert "the user answered accept" in last
    assert "the editor (ACP) shows no forms; only yes/no questions" in last

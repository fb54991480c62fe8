"""MCP servers written with the SDK (stdio and streamable HTTP), driven end to end by the agent:
a real session, the Anthropic adapter against the local replay server, real server processes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from baton.providers.messages import ImageContent, TextContent, ToolResultMessage
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.checkpoints import git as git_module
from baton.sessions.checkpoints.records import read_records
from baton.sessions.settings import validate_settings
from tests.process_helpers import wait_until
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.mcp.helpers import http_server, stdio_entry

API = "anthropic-messages"
SLOW_START = {"startupTimeoutMs": 90_000}


def _call(call_id: str, name: str, args: dict[str, Any]) -> Reply:
    return Reply.sse(tool_call_reply(API, call_id, name, args))


def _text(answer: str) -> Reply:
    return Reply.sse(text_reply(API, answer))


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "baton-home"
    path.mkdir()
    monkeypatch.setenv("BATON_HOME", str(path))
    monkeypatch.setenv("HOME", str(tmp_path))
    return path


async def _open(server: ReplayServer, cwd: Path, mcp: dict[str, Any] | None = None,
                **options: Any) -> CodingSession:
    model = Model(id="replay", api=API, provider="replay", base_url=server.url, input=["text", "image"])
    # MCP tools ask in the default mode; these tests are about the client, so everything runs.
    settings = validate_settings({"retry": {"enabled": False}, "mcp": mcp or SLOW_START, "approval": "full"})
    return await CodingSession.open(SessionOptions(
        cwd=cwd, model=model, tools=[], session="none", context_files=False, api_key="k", settings=settings,
        **options))


def _write_config(home: Path, servers: dict[str, Any]) -> None:
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _results(session: CodingSession) -> list[ToolResultMessage]:
    return [m for m in session.messages if isinstance(m, ToolResultMessage)]


def _text_of(result: ToolResultMessage) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def _tool_result_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def _result_text(body: dict[str, Any]) -> str:
    content = _tool_result_blocks(body)[0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_stdio_server_tools_end_to_end(home: Path, tmp_path: Path, markers: Path) -> None:
    _write_config(home, {"test": stdio_entry(markers)})
    replies = [
        _call("c1", "mcp__test__shout", {"text": "hi", "times": 2}),
        _call("c2", "mcp__test__add", {"a": 2, "b": 3}),
        _call("c3", "mcp__test__pixel", {}),
        _call("c4", "mcp__test__broken", {"reason": "testing"}),
        _call("c5", "mcp__test__resources", {}),
        _text("All five done."),
    ]
    with ReplayServer(replies) as server:
        session = await _open(server, tmp_path)
        try:
            await session.prompt("use the server")
        finally:
            await session.close()
        requests = [r.json() for r in server.requests]
    assert len(requests) == 6
    tools = {t["name"]: t for t in requests[0]["tools"]}
    shout = tools["mcp__test__shout"]
    assert shout["description"] == "Echo the text back, upper-cased."
    assert shout["input_schema"]["properties"]["text"]["type"] == "string"
    assert shout["input_schema"]["required"] == ["text"]
    assert _result_text(requests[1]) == "HI HI"
    shout_r, add_r, pixel_r, broken_r, res_r = _results(session)
    assert _text_of(shout_r) == "HI HI" and not shout_r.is_error
    assert add_r.details["structuredContent"] == {"sum": 5}
    assert json.loads(_text_of(add_r)) == {"sum": 5}
    assert [type(b) for b in pixel_r.content] == [ImageContent]
    image_blocks = [b for b in _tool_result_blocks(requests[3])[0]["content"] if b["type"] == "image"]
    assert image_blocks and image_blocks[0]["source"]["media_type"] == "image/png"
    assert broken_r.is_error and "broken on purpose: testing" in _text_of(broken_r)
    assert _tool_result_blocks(requests[4])[0]["is_error"] is True
    assert "[Resource link: file:///docs/guide.md]" in _text_of(res_r)
    assert "[Resource: memo://note]\nembedded body" in _text_of(res_r)
    assert (markers / "calls").read_text() == "shout hi\n"
    assert "test server starting" in (home / "logs" / "mcp-test.log").read_text()  # stderr, not the screen


async def test_streamable_http_server_with_expanded_headers(home: Path, tmp_path: Path, markers: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TEST_TOKEN", "secret-1")
    with http_server(markers) as url:
        config = tmp_path / "extra.json"
        config.write_text(json.dumps({"mcpServers": {"web": {
            "type": "http", "url": url.replace("/mcp", "${MCP_TEST_PATH:-/mcp}"),
            "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}}}}))
        with ReplayServer([_call("h1", "mcp__web__shout", {"text": "over http"}), _text("ok")]) as server:
            session = await _open(server, tmp_path, mcp_config_files=[config])
            try:
                await session.prompt("call it")
                statuses = session.mcp.statuses()
            finally:
                await session.close()
            requests = [r.json() for r in server.requests]
    assert statuses[0].transport == "http" and statuses[0].status == "ready"
    assert "mcp__web__add" in {t["name"] for t in requests[0]["tools"]}
    assert _result_text(requests[1]) == "OVER HTTP"


async def test_crash_mid_call_fails_clearly_then_restarts(home: Path, tmp_path: Path, markers: Path) -> None:
    _write_config(home, {"test": stdio_entry(markers)})
    replies = [_call("c1", "mcp__test__crash", {}), _call("c2", "mcp__test__crash", {}), _text("recovered")]
    with ReplayServer(replies) as server:
        session = await _open(server, tmp_path)
        notices: list[Any] = []
        session.subscribe(lambda e: notices.append(e) if e.type == "extension_notice" else None)
        try:
            await session.prompt("crash it")
        finally:
            await session.close()
    first, second = _results(session)
    assert first.is_error and "crashed or disconnected" in _text_of(first)
    assert not second.is_error and _text_of(second) == "survived"
    assert any("crashed" in n.text for n in notices)


async def test_aborted_slow_call_sends_cancellation(home: Path, tmp_path: Path, markers: Path) -> None:
    _write_config(home, {"test": stdio_entry(markers)})
    with ReplayServer([_call("s1", "mcp__test__slow", {"seconds": 60})]) as server:
        session = await _open(server, tmp_path)
        try:
            run = asyncio.ensure_future(session.prompt("be slow"))
            assert await asyncio.to_thread(wait_until, (markers / "slow-started").exists, 90)
            session.abort()
            await asyncio.wait_for(run, 30)
            assert await asyncio.to_thread(wait_until, (markers / "cancelled").exists, 15)  # the server saw it
        finally:
            await session.close()
    [result] = _results(session)
    assert result.is_error and "bort" in _text_of(result)


async def test_server_that_never_starts_does_not_hold_the_prompt(home: Path, tmp_path: Path,
                                                                 markers: Path) -> None:
    _write_config(home, {"sleepy": stdio_entry(markers, MCP_TEST_STARTUP_DELAY="600")})
    with ReplayServer([_text("answered without it")]) as server:
        session = await _open(server, tmp_path, mcp={"startupTimeoutMs": 300})
        notices: list[Any] = []
        session.subscribe(lambda e: notices.append(e) if e.type == "extension_notice" else None)
        try:
            await asyncio.wait_for(session.prompt("hello"), 20)
            status = session.mcp.statuses()[0].status
        finally:
            await session.close()
        requests = [r.json() for r in server.requests]
    assert status == "starting"
    assert "tools" not in requests[0] or not any(t["name"].startswith("mcp__") for t in requests[0]["tools"])
    assert any("'sleepy' is not ready after 0.3s" in n.text for n in notices)
    assert session.messages[-1].stop_reason == "stop"  # type: ignore[union-attr]


async def test_slow_call_times_out_and_server_is_told(home: Path, tmp_path: Path, markers: Path) -> None:
    _write_config(home, {"test": stdio_entry(markers)})
    with ReplayServer([_call("t1", "mcp__test__slow", {"seconds": 60}), _text("gave up")]) as server:
        session = await _open(server, tmp_path, mcp={**SLOW_START, "toolTimeoutMs": 1500})
        try:
            await session.prompt("be slow")
            assert await asyncio.to_thread(wait_until, (markers / "cancelled").exists, 15)
        finally:
            await session.close()
    [result] = _results(session)
    assert result.is_error and "timed out after 1.5s" in _text_of(result)


async def test_restarts_are_limited_to_three_a_minute(tmp_path: Path) -> None:
    from baton.tools.mcp.config import McpServerConfig
    from baton.tools.mcp.connection import McpCallError, McpConnection

    config = McpServerConfig("gone", "stdio", command=str(tmp_path / "no-such-server"))
    connection = McpConnection(config, tmp_path / "logs", cwd=tmp_path)
    connection.start()
    assert not await connection.wait_ready(60)
    assert connection.status == "failed" and connection.error
    errors = []
    for _ in range(4):
        with pytest.raises(McpCallError) as caught:
            await connection.call("anything", {}, timeout=60)
        errors.append(str(caught.value))
    assert all("is not available" in e for e in errors[:3])
    assert "already restarted 3 times in the last minute" in errors[3]
    await connection.restart(manual=True)  # /mcp restart forgets the budget
    assert not await connection.wait_ready(60)
    with pytest.raises(McpCallError, match="is not available"):
        await connection.call("anything", {}, timeout=60)
    await connection.stop()


@pytest.mark.skipif(git_module.find_git() is None, reason="git is not installed")
async def test_read_only_hint_spares_a_checkpoint_but_never_a_question(home: Path, tmp_path: Path,
                                                                      markers: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _write_config(home, {"test": stdio_entry(markers, MCP_TEST_READ_ONLY="1")})
    replies = [
        _call("c1", "mcp__test__lookup", {"key": "k"}), _text("looked up"),
        _call("c2", "mcp__test__shout", {"text": "hi"}), _text("shouted"),
        _call("c3", "mcp__test__lookup", {"key": "again"}), _text("asked"),
    ]
    with ReplayServer(replies) as server:
        session = await _open(server, project)
        try:
            await session.prompt("look it up")
            tools = {t.name: t for t in session.agent.tools}
            before_lookup = [r for r in read_records(session.store) if r.kind == "before"]
            await session.prompt("shout")
            before_shout = [r for r in read_records(session.store) if r.kind == "before"]
            session.permissions.set_mode("auto")
            await session.prompt("look it up again")
        finally:
            await session.close()
    assert tools["mcp__test__lookup"].read_only and not tools["mcp__test__shout"].read_only
    # the server's word spares the snapshot before a read-only tool, not before another one
    assert before_lookup == [] and len(before_shout) == 1
    # and it never answers a question: in auto mode a read-only MCP tool still asks
    lookup, shout, again = _results(session)
    assert _text_of(lookup) == "value of k" and _text_of(shout) == "HI"
    assert again.is_error and "needs the user's approval" in _text_of(again)
    assert (markers / "calls").read_text() == "lookup k\nshout hi\n"

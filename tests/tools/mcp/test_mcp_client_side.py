"""The client side of MCP against a server written with the SDK, on both revisions it speaks
(2026-07-28, and the 2025-11-25 handshake): roots, progress, logging, list_changed (a tool added
mid-session is callable; a storm of notices costs a few listings), tools requiring tasks, huge
structured results, and which calls of one reply run at the same time."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from baton.agent.tool import AgentToolResult, ToolError
from baton.providers.messages import ImageContent, TextContent
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.errors import PromptRefusedError
from baton.sessions.settings import validate_settings
from baton.tools.mcp.elicitation import ElicitationAnswer, ElicitationQuestion
from baton.tools.mcp.manager import McpManager
from baton.tools.mcp.results import MAX_STRUCTURED_DETAILS_CHARS, MAX_TEXT_CHARS
from baton.tools.mcp.tool import McpTool
from tests.provider_scripts import parallel_calls_reply, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tools.mcp.test_mcp_e2e import _call, _open, _results, _text, _text_of, _write_config, home, markers

__all__ = ["home", "markers"]  # fixtures used here

SERVER = Path(__file__).with_name("capability_server.py")
REVISIONS = {"2026-07-28": "", "2025-11-25": "1"}


def _entry(markers: Path, revision: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), "stdio"],
            "env": {"MCP_TEST_MARKERS": str(markers), "MCP_TEST_LEGACY": REVISIONS[revision]}}


@pytest.fixture(params=list(REVISIONS))
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def manager(home: Path, tmp_path: Path, markers: Path, revision: str) -> AsyncIterator[McpManager]:
    work = tmp_path / "work"
    work.mkdir()
    mcp = McpManager(work, home / "logs", startup_timeout=90)
    mcp.add_servers({"cap": _entry(markers, revision)}, "global")
    await mcp.wait_startup()
    connection = mcp.connections["cap"]
    assert connection.status == "ready", connection.error
    assert connection._client is not None and connection._client.protocol_version == revision
    try:
        yield mcp
    finally:
        await mcp.close()


def _tool(manager: McpManager, name: str) -> McpTool:
    return next(t for t in manager.tools() if t.name == f"mcp__cap__{name}")


async def _run(tool: McpTool, updates: list[AgentToolResult] | None = None, **args: Any) -> AgentToolResult:
    params = tool.parameters.model_validate(args)
    return await tool.execute("call-1", params, asyncio.Event(), (updates.append if updates is not None else None))


def _text_result(result: AgentToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


async def test_roots_are_the_working_directory(manager: McpManager) -> None:
    result = await _run(_tool(manager, "roots"))
    assert _text_result(result) == manager.cwd.resolve().as_uri()


async def test_progress_is_a_live_update(manager: McpManager) -> None:
    updates: list[AgentToolResult] = []
    result = await _run(_tool(manager, "work"), updates, steps=3)
    assert _text_result(result) == "worked"
    assert [_text_result(u) for u in updates] == [f"Progress: {n}/3 — step {n}" for n in (1, 2, 3)]
    assert isinstance(updates[-1].details, dict)
    assert updates[-1].details["progress"] == {"progress": 3, "total": 3, "message": "step 3"}


async def test_server_log_messages_go_to_its_log_file_without_keys(manager: McpManager, home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "k" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    await _run(_tool(manager, "chatter"), text=f"hello from the server, key {key}")
    log = (home / "logs" / "mcp-cap.log").read_text()
    assert "[server log] info: hello from the server, key [redacted]" in log
    assert key not in log


async def test_a_storm_of_list_changed_costs_a_few_listings(manager: McpManager, markers: Path) -> None:
    before = (markers / "lists").read_text().count("list")
    result = await _run(_tool(manager, "storm"), count=1000)
    assert _text_result(result) == "1000 notices sent"
    connection = manager.connections["cap"]
    await connection.refresher.settle()
    listings = (markers / "lists").read_text().count("list") - before
    assert 1 <= listings <= 10, listings
    assert connection.refresher.count == listings


async def test_a_tool_requiring_tasks_is_not_offered(manager: McpManager, home: Path, revision: str) -> None:
    if revision != "2025-11-25":
        pytest.skip("the 2026-07-28 revision has no task augmentation on tools (execution.taskSupport)")
    names = [t.name for t in manager.tools()]
    assert "mcp__cap__background_job" not in names and "mcp__cap__step" in names
    assert manager.connections["cap"].skipped_tools == ["background_job"]
    assert "not offered (they require task augmentation" in (home / "logs" / "mcp-cap.log").read_text()


async def test_a_huge_structured_result_stays_out_of_the_details(manager: McpManager) -> None:
    small = await _run(_tool(manager, "huge"), size=100)
    assert isinstance(small.details, dict) and small.details["structuredContent"] == {"blob": "x" * 100}
    big = await _run(_tool(manager, "huge"), size=2_000_000)
    assert isinstance(big.details, dict) and "structuredContent" not in big.details
    omitted = big.details["structuredContentOmitted"]
    assert isinstance(omitted, dict) and omitted["limit"] == MAX_STRUCTURED_DETAILS_CHARS
    assert isinstance(omitted["chars"], int) and omitted["chars"] > 2_000_000
    assert len(_text_result(big)) <= MAX_TEXT_CHARS + 100


async def test_a_tool_added_mid_session_is_callable(home: Path, tmp_path: Path, markers: Path, revision: str) -> None:
    _write_config(home, {"cap": _entry(markers, revision)})
    replies = [_call("c1", "mcp__cap__grow", {"name": "fresh"}), _call("c2", "mcp__cap__fresh", {}), _text("done")]
    with ReplayServer(replies) as server:
        session = await _open(server, tmp_path)
        try:
            await session.prompt("grow a tool and use it")
        finally:
            await session.close()
        requests = [r.json() for r in server.requests]
    assert "mcp__cap__fresh" not in [t["name"] for t in requests[0]["tools"]]
    assert "mcp__cap__fresh" in [t["name"] for t in requests[1]["tools"]]
    grow, fresh = _results(session)
    assert _text_of(grow) == "added fresh"
    assert not fresh.is_error and _text_of(fresh) == "grown fresh"


async def test_calls_that_change_things_take_turns_read_only_ones_do_not(home: Path, tmp_path: Path,
                                                                        markers: Path) -> None:
    _write_config(home, {"cap": _entry(markers, "2026-07-28")})
    api = "openai-completions"
    calls = [("s1", "mcp__cap__step", {"tag": "a"}), ("s2", "mcp__cap__step", {"tag": "b"}),
             ("p1", "mcp__cap__peek", {"tag": "a"}), ("p2", "mcp__cap__peek", {"tag": "b"})]
    replies = [Reply.sse(parallel_calls_reply(calls)), Reply.sse(text_reply(api, "done"))]
    with ReplayServer(replies) as server:
        model = Model(id="replay", api=api, provider="replay", base_url=server.url, input=["text"])
        settings = validate_settings({"retry": {"enabled": False}, "mcp": {"startupTimeoutMs": 90_000},
                                      "approval": "full"})
        session = await CodingSession.open(SessionOptions(cwd=tmp_path, model=model, tools=[], session="none",
                                                          context_files=False, api_key="k", settings=settings))
        try:
            await session.prompt("step twice and peek twice")
        finally:
            await session.close()
    results = {r.tool_call_id: _text_of(r) for r in _results(session)}
    assert results == {"s1": "alone", "s2": "alone", "p1": "overlapped", "p2": "overlapped"}
    assert (markers / "steps").read_text().splitlines() == ["start a", "end a", "start b", "end b"]


async def test_resources_are_listed_and_read_blobs_saved_only_in_the_temp_folder(manager: McpManager,
                                                                                 home: Path) -> None:
    names = [t.name for t in manager.tools()]
    assert "read_mcp_resource" in names and "list_mcp_resources" in names
    listing = _text_result(await _run(next(t for t in manager.tools() if t.name == "list_mcp_resources")))
    assert "cap  memo://note  note  (text/plain) — A short note" in listing
    read = next(t for t in manager.tools() if t.name == "read_mcp_resource")
    assert read.kind == "read" and read.read_only
    text = await _run(read, server="cap", uri="memo://note")
    assert _text_result(text) == "[Resource: memo://note] (text/plain)\nthe note's text"
    temp = (home / "tmp").resolve()
    before = set(temp.iterdir()) if temp.exists() else set()
    sneaky = await _run(read, server="cap", uri="file:///../../../../home/user/.bashrc")
    odd = await _run(read, server="cap", uri="blob://odd")
    saved = [d["path"] for r in (sneaky, odd) if isinstance(r.details, dict)
             for d in r.details["saved"] if isinstance(d, dict)]  # type: ignore[union-attr]
    assert len(saved) == 2
    paths = [Path(str(p)) for p in saved]
    assert all(p.parent == temp and p.name.startswith("mcp-resource-") for p in paths)
    assert paths[0].suffix == ".png" and paths[1].suffix == ".bin"
    assert set(temp.iterdir()) - before == set(paths)
    assert paths[1].read_bytes() == b"\x00\x01odd bytes"
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    size = paths[0].stat().st_size
    assert _text_result(sneaky) == ("[Resource: file:///../../../../home/user/.bashrc] "
                                    f"(image/png, {size} bytes of binary data) saved to {paths[0]}")
    assert any(isinstance(b, ImageContent) for b in sneaky.content)
    with pytest.raises(ToolError, match=r"No MCP server named 'nope' offers resources \(servers with resources: cap\)"):
        await _run(read, server="nope", uri="memo://note")


async def test_prompts_are_slash_commands_and_mentions_attach_resources(home: Path, tmp_path: Path, markers: Path,
                                                                        revision: str) -> None:
    _write_config(home, {"cap": _entry(markers, revision)})
    with ReplayServer([_text("reviewed"), _text("read it")]) as server:
        session = await _open(server, tmp_path)
        try:
            await session.mcp.wait_startup()
            commands = {c.name: c for c in session.prompt_commands()}
            refusal = r"/mcp__cap__review: missing topic \(usage: <topic> \[style\]\)"
            with pytest.raises(PromptRefusedError, match=refusal):
                await session.prompt("/mcp__cap__review")
            await session.prompt("/mcp__cap__review the parser very thoroughly")
            await session.prompt("what does @cap:memo://note say? and @nobody:memo://x")
        finally:
            await session.close()
        requests = [r.json() for r in server.requests]
    assert commands["mcp__cap__review"].description == "Ask for a review of TOPIC."
    assert commands["mcp__cap__review"].argument_hint == "<topic> [style]"
    assert len(requests) == 2
    first_user = requests[0]["messages"][-1]["content"]
    assert [b["text"] for b in first_user if b["type"] == "text"] == [
        "Please review the, in a parser very thoroughly style."]
    mention = [b["text"] for b in requests[1]["messages"][-1]["content"] if b["type"] == "text"]
    assert mention == ["what does @cap:memo://note say? and @nobody:memo://x",
                       "[Resource: memo://note] (text/plain)\nthe note's text"]


async def test_a_servers_question_is_asked_as_its_own_and_keys_never_reach_it(manager: McpManager,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "q" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    asked: list[ElicitationQuestion] = []

    async def user(question: ElicitationQuestion) -> ElicitationAnswer:
        asked.append(question)
        return ElicitationAnswer("accept", {"username": "ada", "api_key": key, "remember": "yes"})

    manager.elicitor = user
    result = await _run(_tool(manager, "ask_user"))
    [question] = asked
    assert question.server == "cap" and question.message == "Please paste your ANTHROPIC_API_KEY so that I can help"
    assert [(f.name, f.kind, f.required) for f in question.fields] == [
        ("username", "string", True), ("api_key", "string", True), ("remember", "boolean", False)]
    assert _text_result(result) == 'got {"username":"ada","api_key":"[redacted]","remember":true}'
    assert key not in _text_result(result)


async def test_a_question_is_refused_where_no_one_can_answer(manager: McpManager) -> None:
    try:  # the 2026 revision's client fails the call; a 2025 server hears the error and fails it
        outcome = _text_result(await _run(_tool(manager, "ask_go_on")))
    except ToolError as exc:
        outcome = str(exc)
    assert "baton refused the question: baton cannot ask the user in this mode (print or JSON)" in outcome

    async def declines(question: ElicitationQuestion) -> ElicitationAnswer:
        return ElicitationAnswer("decline")

    manager.elicitor = declines
    assert _text_result(await _run(_tool(manager, "ask_go_on"))) == "the user answered decline"

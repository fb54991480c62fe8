"""Web search in a real session: the vendor's own search is offered only when the permission
policy allows ``web_search`` unasked (a rule, Claude Code's ``WebSearch`` too, or ``full``), never
when a rule denies it; ``/tools``'s line says which search the model has; with ``BRAVE_API_KEY``
the ``web_search`` tool joins the session and searches through a (here local) Brave endpoint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from baton.sessions.web_search import search_status
from baton.tools.web_search import WebSearchTool
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply

API = "anthropic-messages"


def claude(server: ReplayServer) -> Model:
    return Model(id="claude-sonnet-4-5", api=API, provider="anthropic", base_url=server.url,
                 compat={"webSearch": True}, max_tokens=1000)


async def one_request(cwd: Path, *, approval: str = "auto", settings: dict[str, Any] | None = None,
                      tools: list[str] | None = None) -> tuple[dict[str, Any], str]:
    with ReplayServer([Reply.sse(text_reply(API, "ok"))]) as server:
        options = SessionOptions(
            cwd=cwd, model=claude(server), api_key="test-key", tools=tools, context_files=False, approval=approval,
            preload_tokenizer=False, settings=validate_settings({"retry": {"enabled": False}, **(settings or {})}),
        )
        session = await CodingSession.open(options)
        try:
            status = search_status(session)
            await asyncio.wait_for(session.prompt("latest httpx?"), 30)
        finally:
            await session.close()
        body: dict[str, Any] = server.requests[0].json()
    return body, status


def offered(body: dict[str, Any]) -> bool:
    return any(tool.get("type") == "web_search_20250305" for tool in body.get("tools", []))


@pytest.fixture
def ws(tmp_path: Path, baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def test_native_search_needs_an_allow_rule_in_auto(ws: Path) -> None:
    body, status = await one_request(ws)
    assert not offered(body) and "web search: off" in status and '"web_search"' in status
    body, status = await one_request(ws, settings={"permissions": {"allow": ["WebSearch"]}})
    assert offered(body) and status.startswith("web search: Anthropic's web search")


async def test_full_mode_offers_it_and_a_deny_rule_wins(ws: Path) -> None:
    body, _ = await one_request(ws, approval="full")
    assert offered(body)
    body, _ = await one_request(ws, approval="full", settings={"permissions": {"deny": ["web_search"]}})
    assert not offered(body)


async def test_web_fetch_is_a_default_tool(ws: Path) -> None:
    body, _ = await one_request(ws)
    names = [tool.get("name") for tool in body["tools"]]
    assert names[:5] == ["read", "bash", "edit", "write", "web_fetch"]


async def test_brave_tool_joins_with_a_key_and_replaces_native_search(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-secret-123")
    body, status = await one_request(ws, approval="full")
    assert "web_search" in [tool.get("name") for tool in body["tools"]] and not offered(body)
    assert status == "web search: the web_search tool (Brave Search API)"


def test_the_brave_tool_asks_like_a_fetch(tmp_path: Path) -> None:
    from baton.sessions.permissions.paths import Workspace
    from baton.sessions.permissions.policy import Policy
    from baton.sessions.permissions.rules import RuleSet

    workspace = Workspace.for_dir(str(tmp_path))
    asked = Policy(workspace, RuleSet.parse(), "auto").decide("web_search", {"query": "x"})
    assert asked.action == "ask" and "reaches the network" in asked.reason
    allowed = Policy(workspace, RuleSet.parse(allow=["WebSearch"]), "auto").decide("web_search", {"query": "x"})
    assert allowed.action == "allow" and allowed.rule == "WebSearch"


async def test_brave_tool_searches_and_never_shows_the_key(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "brave-secret-123")
    answer = {"web": {"results": [{"title": "HTTPX", "url": "https://www.python-httpx.org/",
                                   "description": "A next-generation HTTP client for Python."}]}}
    with ReplayServer([Reply(chunks=[json.dumps(answer).encode()], headers={"content-type": "application/json"}),
                       Reply.json_error(401, {"error": "bad key brave-secret-123"})]) as server:
        tool = WebSearchTool(str(ws))
        tool.endpoint = server.url + "/res/v1/web/search"
        result = await tool.execute("c1", {"query": "httpx", "count": 3})
        text = result.content[0].text  # type: ignore[union-attr]
        assert "1. HTTPX\n   https://www.python-httpx.org/\n   A next-generation HTTP client" in text
        assert "untrusted" in text and "brave-secret-123" not in text
        request = server.requests[0]
        assert request.headers["x-subscription-token"] == "brave-secret-123"
        assert "q=httpx" in request.path and "count=3" in request.path
        with pytest.raises(Exception) as failed:
            await tool.execute("c2", {"query": "httpx"})
        assert "HTTP 401" in str(failed.value) and "brave-secret-123" not in str(failed.value)

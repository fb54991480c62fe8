"""The gate through a real session: MCP-style tools, no sandbox, hook hints, allow always."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from baton.agent.tool import AgentTool, AgentToolResult
from baton.sessions.permissions import ApprovalAnswer
from tests.sessions.permissions.helpers import run_call


class _Params(BaseModel):
    title: str = ""


class FakeMcpTool(AgentTool):
    """Stands in for an MCP server's tool (the MCP client names them mcp__<server>__<tool>)."""

    name: ClassVar[str] = "mcp__tracker__create_issue"
    label: ClassVar[str] = "create issue"
    description: ClassVar[str] = "Create an issue"
    parameters: ClassVar[type[BaseModel]] = _Params

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        self.calls.append(params.title)
        return AgentToolResult.text(f"created {params.title}")


@pytest.fixture
def ws(tmp_path: Path, baton_home: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.parametrize("mode", ["ask", "auto"])
async def test_mcp_tools_ask_unless_a_rule_allows(ws: Path, mode: str) -> None:
    tool = FakeMcpTool()
    denied = await run_call(ws, tool.name, {"title": "a"}, approval=mode, extra_tools=[tool])
    assert denied.is_error and tool.calls == []
    tool2 = FakeMcpTool()
    allowed = await run_call(ws, tool2.name, {"title": "b"}, approval=mode, extra_tools=[tool2],
                             settings={"permissions": {"allow": ["mcp__tracker__create_issue"]}})
    assert not allowed.is_error and tool2.calls == ["b"]
    assert allowed.approvals[0]["rule"] == "mcp__tracker__create_issue"


async def test_without_a_sandbox_auto_asks_for_bash_and_says_why(ws: Path) -> None:
    outcome = await run_call(ws, "bash", {"command": "echo hi > f.txt"}, settings={"sandbox": {"enabled": False}})
    assert outcome.is_error and not (ws / "f.txt").exists()
    assert any("no sandbox" in w and "ask" in w for w in outcome.warnings)
    asked = await run_call(ws, "bash", {"command": "echo hi > f.txt"}, settings={"sandbox": {"enabled": False}},
                           answers=[ApprovalAnswer("allow_once")])
    assert not asked.is_error and (ws / "f.txt").read_text() == "hi\n"
    assert asked.asked[0].reason == "the sandbox is unavailable, so commands ask"


async def test_allow_always_saves_the_edited_rule_to_the_personal_file_leaving_the_shared_one(ws: Path) -> None:
    (ws / ".baton").mkdir()
    shared = json.dumps({"theme": "dark", "permissions": {"deny": ["x"]}})
    (ws / ".baton" / "settings.json").write_text(shared)
    outcome = await run_call(ws, "bash", {"command": "echo   unit-ok"}, approval="ask",
                             answers=[ApprovalAnswer("allow_always", rule="bash(echo:*)")])
    assert not outcome.is_error and outcome.result_text.strip() == "unit-ok"
    assert outcome.asked[0].proposed_rule == "bash(echo unit-ok)"
    saved = json.loads((ws / ".baton" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["bash(echo:*)"]}}
    assert (ws / ".baton" / "settings.json").read_text() == shared  # never reformatted
    assert outcome.approvals[0]["rule"] == "bash(echo:*)"
    again = await run_call(ws, "bash", {"command": "echo second"}, approval="ask", answers=[],
                           settings={"permissions": {"allow": saved["permissions"]["allow"]}})
    assert not again.is_error and again.asked == []


async def test_a_broken_approver_denies(ws: Path) -> None:
    outcome = await run_call(ws, "write", {"path": "../x.txt", "content": "x"}, answers=[])  # pop from empty list
    assert outcome.is_error and not (ws.parent / "x.txt").exists()
    assert "could not be asked" in outcome.approvals[0]["reason"]

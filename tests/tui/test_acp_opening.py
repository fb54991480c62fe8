"""``session/new`` is answered before the session opens (``tui/modes/acp/preview.py``): the answer
is what the opened session describes, whatever the settings and the command line say; a session
closed, cancelled or shut down while it opens leaves nothing running.

The agent runs in this process on a real transport (its output captured), so that a request can
arrive while the opening is still to run — which over a pipe is a race."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.tui.cli.args import parse_args
from baton.tui.modes.acp.agent import BatonAcpAgent
from baton.tui.modes.acp.client import AcpClient
from baton.tui.modes.acp.transport import StdioTransport
from baton.tui.modes.json_lines import LineWriter
from tests.provider_scripts import models_json_provider
from tests.tui.cli_harness import write_models_json

AM = "anthropic-messages"
SERVER = """
import os, sys, time
with open(sys.argv[1], "a") as marker:
    marker.write(f"{os.getpid()}\\n")
time.sleep(60)
"""
"""An editor's MCP server that notes its pid and never answers (it only has to be started)."""


def _agent(*argv: str) -> tuple[BatonAcpAgent, io.StringIO]:
    out = io.StringIO()
    transport = StdioTransport(asyncio.StreamReader(), LineWriter(out))
    return BatonAcpAgent(parse_args(["--mode", "acp", *argv]), AcpClient(transport)), out


def _updates(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line)["params"]["update"] for line in out.getvalue().splitlines() if line]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _models(home: Path) -> None:
    write_models_json(home, {"replay-am": models_json_provider(AM, "http://127.0.0.1:9", reasoning=True)})


@pytest.mark.parametrize(("settings", "argv"), [
    ({}, ("--model", "replay-am/replay-model")),
    ({"approval": "plan", "defaultThinkingLevel": "high"}, ("--model", "replay-am/replay-model")),
    ({"approval": "full"}, ("--model", "demo/baton-demo", "--thinking", "high")),
    ({"approval": "full"}, ("--model", "replay-am/replay-model", "--approval", "ask")),
    ({"defaultThinkingLevel": "xhigh"}, ("--model", "replay-am/replay-model:low", "--trust-project")),
    ({}, ("--model", "replay-am/replay-model", "--no-session", "--no-tools")),
])
async def test_the_answer_is_what_the_opened_session_describes(
        baton_home: Path, tmp_path: Path, settings: dict[str, Any], argv: tuple[str, ...]) -> None:
    _models(baton_home)
    (baton_home / "settings.json").write_text(json.dumps(settings))
    project = tmp_path / "project"
    (project / ".baton").mkdir(parents=True)
    (project / ".baton" / "settings.json").write_text('{"approval": "ask"}')  # stricter: applies untrusted too
    agent, out = _agent(*argv)
    try:
        answer = await agent.new_session(cwd=str(project), mcp_servers=[])
        assert answer["sessionId"] in agent.openings  # answered before the session opened
        await agent.announce(str(answer["sessionId"]))
        session = agent.sessions[str(answer["sessionId"])]
        assert session.id == answer["sessionId"]
        assert {"sessionId": session.id, **session.describe()} == answer
        assert not [u for u in _updates(out) if u["sessionUpdate"] in ("config_option_update", "current_mode_update")]
    finally:
        await agent.shutdown()


def _editor_server(tmp_path: Path) -> tuple[list[dict[str, Any]], Path]:
    marker = tmp_path / "server-pids"
    return [{"name": "editor", "command": sys.executable, "args": ["-c", SERVER, str(marker)], "env": []}], marker


async def test_a_session_closed_while_it_opens_is_closed_once_open_and_starts_nothing(
        baton_home: Path, tmp_path: Path) -> None:
    _models(baton_home)
    servers, marker = _editor_server(tmp_path)
    agent, _ = _agent("--model", "replay-am/replay-model")
    try:
        answer = await agent.new_session(cwd=str(tmp_path), mcp_servers=servers)
        session_id = str(answer["sessionId"])
        assert await agent.close_session(session_id) == {}
        assert session_id not in agent.sessions and session_id not in agent.openings
        await asyncio.sleep(0.5)  # a server started by mistake would have noted its pid by now
        pids = [int(p) for p in marker.read_text().split()] if marker.exists() else []
        assert not [pid for pid in pids if _alive(pid)]
        with pytest.raises(Exception, match="Unknown session"):
            await agent.prompt(session_id, [{"type": "text", "text": "hi"}])
    finally:
        await agent.shutdown()


async def test_shutting_down_while_a_session_opens_leaves_no_process(baton_home: Path, tmp_path: Path) -> None:
    _models(baton_home)
    servers, marker = _editor_server(tmp_path)
    agent, _ = _agent("--model", "replay-am/replay-model")
    answer = await agent.new_session(cwd=str(tmp_path), mcp_servers=servers)
    await agent.shutdown()
    assert agent.sessions == {} and agent.openings == {}
    await asyncio.sleep(0.5)
    pids = [int(p) for p in marker.read_text().split()] if marker.exists() else []
    assert not [pid for pid in pids if _alive(pid)], answer


async def test_a_prompt_cancelled_while_its_session_opens_ends_cancelled_without_a_model_call(
        baton_home: Path, tmp_path: Path) -> None:
    _models(baton_home)  # nothing listens at its address: a model call would end in an error
    agent, _ = _agent("--model", "replay-am/replay-model")
    try:
        answer = await agent.new_session(cwd=str(tmp_path), mcp_servers=[])
        session_id = str(answer["sessionId"])
        await agent.cancel(session_id)  # no prompt yet: nothing to cancel
        prompt = asyncio.ensure_future(agent.prompt(session_id, [{"type": "text", "text": "hi"}]))
        await asyncio.sleep(0)  # the prompt waits for the opening
        await agent.cancel(session_id)
        assert await prompt == {"stopReason": "cancelled"}
        assert agent.sessions[session_id].session.messages == []
    finally:
        await agent.shutdown()

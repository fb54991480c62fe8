"""Two sessions in one ``baton --mode acp`` keep their own rules for commands.

An editor opens a session in a project whose settings let one variable that looks like a key
through (``bash.passEnv``) and allow one command at a time (``tools.maxProcesses: 1``), then a
session in a project that sets neither. The first session's commands still see the variable and
still run one at a time; the second's never see it and run side by side. Driven by the ACP SDK's
client side against a local provider that makes the tool calls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities  # noqa: E402

from tests.provider_scripts import models_json_provider, parallel_calls_reply, text_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import baton_command, baton_env, write_models_json  # noqa: E402
from tests.tui.test_acp_mode import EditorClient, TerminalEditor  # noqa: E402

OC = "openai-completions"
TOKEN = "tok-house-5c1d9e"
# Each call logs its start, waits (at most 3 s) until two calls have started, logs its end, and
# says whether it saw the variable. Two calls allowed at once meet; one at a time never do.
COMMAND = ('echo start >> calls.log; for i in $(seq 60); do [ "$(grep -c start calls.log)" -ge 2 ] && break; '
           'sleep 0.05; done; echo end >> calls.log; echo "token=${BATON_HOUSE_TOKEN:+seen}" >> env.log')


def _projects(tmp_path: Path) -> tuple[Path, Path]:
    strict = tmp_path / "strict"
    plain = tmp_path / "plain"
    for project in (strict, plain):
        project.mkdir()
    (strict / ".baton").mkdir()
    (strict / ".baton" / "settings.json").write_text(
        json.dumps({"bash": {"passEnv": ["BATON_HOUSE_TOKEN"]}, "tools": {"maxProcesses": 1}}))
    return strict, plain


def _peak(log: Path) -> int:
    running = peak = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        peak = max(peak, running)
    return peak


def _two_calls(tag: str) -> Reply:
    return Reply.sse(parallel_calls_reply([(f"{tag}_1", "bash", {"command": COMMAND}),
                                           (f"{tag}_2", "bash", {"command": COMMAND})]))


def _run(home: Path, client: Any, capabilities: ClientCapabilities, strict: Path, plain: Path) -> None:
    """Open a session in ``strict``, then one in ``plain``; then prompt the first, then the second."""

    async def story() -> None:
        command = baton_command("--mode", "acp", "--model", "replay/replay-model", "--trust-project",
                                "--approval", "full", "--no-session")
        env = baton_env(home, BATON_HOUSE_TOKEN=TOKEN)
        async with spawn_agent_process(client, command[0], *command[1:], env=env, cwd=str(plain)) as (conn, _):
            await conn.initialize(protocol_version=1, client_capabilities=capabilities)
            first = await conn.new_session(cwd=str(strict), mcp_servers=[])
            second = await conn.new_session(cwd=str(plain), mcp_servers=[])
            for session in (first, second):
                result = await conn.prompt(session_id=session.session_id, prompt=[text_block("run them")])
                assert result.stop_reason == "end_turn"

    replies = [_two_calls("a"), Reply.sse(text_reply(OC, "Done.")), _two_calls("b"), Reply.sse(text_reply(OC, "Done."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(OC, server.url)})
        asyncio.run(story())
        assert len(server.requests) == 4


def test_each_acp_session_keeps_its_own_pass_list_and_process_limit(home: Path, tmp_path: Path) -> None:
    strict, plain = _projects(tmp_path)
    _run(home, EditorClient(), ClientCapabilities(), strict, plain)
    assert (strict / "env.log").read_text().split() == ["token=seen", "token=seen"]
    assert _peak(strict / "calls.log") == 1  # its own limit, though a session allowing 8 opened after it
    assert (plain / "env.log").read_text().split() == ["token=", "token="]
    assert _peak(plain / "calls.log") == 2


def test_an_editor_terminal_gets_its_own_sessions_environment(home: Path, tmp_path: Path) -> None:
    strict, plain = _projects(tmp_path)
    client = TerminalEditor()
    _run(home, client, ClientCapabilities(terminal=True), strict, plain)
    created = {cwd: args for _, args, cwd in client.created}
    assert f"BATON_HOUSE_TOKEN={TOKEN}" in created[str(strict)]
    assert not any(arg.startswith("BATON_HOUSE_TOKEN=") for arg in created[str(plain)])
    assert (strict / "env.log").read_text().split() == ["token=seen", "token=seen"]
    assert (plain / "env.log").read_text().split() == ["token=", "token="]

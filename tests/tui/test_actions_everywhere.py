"""One action, every front end: an action defined in one place (tests/tui/made_up_action.py) is a
slash command of the app, a command of ``baton --mode rpc`` and a slash command of
``baton --mode acp``, each driven for real; and the shared actions keep pi's RPC names."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.tui.actions import registry
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.commands import command_list
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until
from tests.tui.cli_harness import baton_env
from tests.tui.made_up_action import STAMP, made_up_command, register_made_up


@pytest.fixture
def stamp() -> Iterator[None]:
    register_made_up()
    try:
        yield
    finally:
        registry.ACTIONS.pop(STAMP.name)


async def test_a_made_up_action_is_a_slash_command_of_the_app(
    stamp: None, project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("First answer."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        assert ("stamp", STAMP.description) in command_list()  # completion offers it
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        await submit(pilot, app, "/stamp blue")
        await wait_until(pilot, lambda: "Session 'stamped blue' holds 2 messages." in screen_text(app),
                         what="the report")
        assert session.session_name == "stamped blue"
        await submit(pilot, app, "/stamp")
        await wait_until(pilot, lambda: "/stamp needs a word" in screen_text(app), what="the argument error")
        await submit(pilot, app, "/hotkeys")
        await wait_until(pilot, lambda: "/stamp WORD" in screen_text(app), what="the command in /hotkeys")
    await session.close()


def test_a_made_up_action_is_an_rpc_command(home: Path, workdir: Path) -> None:
    proc = subprocess.Popen(made_up_command("--mode", "rpc", "--model", "demo/baton-demo"), cwd=workdir,
                            env=baton_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    lines = [{"id": "1", "type": "stamp", "word": "green"}, {"id": "2", "type": "get_state"},
             {"id": "3", "type": "stamp"}]
    out, err = proc.communicate("".join(json.dumps(line) + "\n" for line in lines).encode(), timeout=60)
    assert proc.returncode == 0, err.decode()
    responses = {r["id"]: r for r in map(json.loads, out.decode().splitlines()) if r.get("type") == "response"}
    assert responses["1"] == {"id": "1", "type": "response", "command": "stamp", "success": True,
                              "data": {"name": "stamped green", "messages": 0}}
    assert responses["2"]["data"]["sessionName"] == "stamped green"
    assert responses["3"]["success"] is False and responses["3"]["error"] == '"word" is required'


def test_a_made_up_action_is_an_acp_slash_command(home: Path, workdir: Path) -> None:
    acp = pytest.importorskip("acp")

    class Editor:
        def __init__(self) -> None:
            self.updates: list[dict[str, Any]] = []

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def story() -> tuple[Editor, str, str]:
        editor = Editor()
        cmd = made_up_command("--mode", "acp", "--model", "demo/baton-demo")
        async with acp.spawn_agent_process(editor, cmd[0], *cmd[1:], env=baton_env(home), cwd=str(workdir)) as (
                conn, _):
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            for _ in range(500):
                if any(u["sessionUpdate"] == "available_commands_update" for u in editor.updates):
                    break
                await asyncio.sleep(0.02)
            done = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/stamp red")])
            refused = ""
            try:
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/stamp")])
            except acp.RequestError as exc:
                refused = str(exc)
        return editor, done.stop_reason, refused

    editor, stop_reason, refused = asyncio.run(story())
    [listed] = [u["availableCommands"] for u in editor.updates if u["sessionUpdate"] == "available_commands_update"]
    entry = next(c for c in listed if c["name"] == "stamp")
    assert entry == {"name": "stamp", "description": STAMP.description, "input": {"hint": "a word"}}
    assert stop_reason == "end_turn"
    [card] = [u for u in editor.updates if u.get("title") == "Stamped"]
    assert card["status"] == "completed" and "Session 'stamped red' holds 0 messages." in json.dumps(card["content"])
    assert "/stamp needs a word" in refused
    assert not [u for u in editor.updates if u["sessionUpdate"] == "agent_message_chunk"]  # no model was asked


def test_rpc_names_of_the_shared_actions_are_pis_and_none_is_taken_twice() -> None:
    from baton.tui.modes.rpc_commands import RpcCommands

    shared = {a.rpc_name for a in registry.actions() if a.rpc_name}
    assert shared >= {"compact", "set_model", "set_thinking_level", "export_html", "rewind", "set_session_name",
                      "new_session", "switch_session", "fork", "set_approval"}
    own = {name.removeprefix("cmd_") for name in dir(RpcCommands) if name.startswith("cmd_")}
    assert not shared & own
    with pytest.raises(ValueError, match="registered already"):
        registry.register(replace(STAMP, name="compact"))
    assert STAMP.rpc is not None
    with pytest.raises(ValueError, match="belongs to another action"):
        registry.register(replace(STAMP, rpc=replace(STAMP.rpc, name="set_model")))
    assert "stamp" not in registry.ACTIONS

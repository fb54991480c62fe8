"""The approval mode from an editor: ``baton --mode acp`` offers it as the ``mode`` config option
and as ACP's session modes (``session/set_mode``), tells the editor when it changes, and holds an
editor to the modes it may choose — plan mode is enforced whoever chose it, and ``full`` (no
sandbox) only when the user's own settings chose it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import text_block  # noqa: E402
from acp.exceptions import RequestError  # noqa: E402

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import write_models_json  # noqa: E402
from tests.tui.test_acp_mode import AM, EditorClient, acp_agent, wait_until  # noqa: E402


def _option(new: Any, option_id: str) -> Any:
    options = [getattr(o, "root", o) for o in new.config_options or []]
    return next(o for o in options if o.id == option_id)


def test_an_editor_switches_to_plan_mode_and_plan_mode_holds(home: Path, workdir: Path) -> None:
    (workdir / "notes.txt").write_text("keep me\n")
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_w", "write", {"path": "notes.txt", "content": "changed"},
                                  text="Writing anyway.")),
        Reply.sse(text_reply(AM, "Planned.")),
    ]

    async def story() -> EditorClient:
        client = EditorClient()
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            assert new.modes is not None and new.modes.current_mode_id == "auto"
            assert [m.id for m in new.modes.available_modes] == ["plan", "ask", "auto"]  # no "full" for an editor
            mode = _option(new, "mode")
            assert mode.category == "mode" and mode.current_value == "auto"
            assert [o.value for o in mode.options] == ["plan", "ask", "auto"]

            await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
            await wait_until(lambda: bool(client.of_kind("current_mode_update")))
            assert client.of_kind("current_mode_update")[-1]["currentModeId"] == "plan"
            options = client.of_kind("config_option_update")[-1]["configOptions"]
            assert next(o for o in options if o["id"] == "mode")["currentValue"] == "plan"

            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("change the notes")])
            assert result.stop_reason == "end_turn"

            with pytest.raises(RequestError):
                await conn.set_config_option(config_id="mode", session_id=new.session_id, value="full")
            changed = await conn.set_config_option(config_id="mode", session_id=new.session_id, value="ask")
            assert _option(changed, "mode").current_value == "ask"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story())
    assert (workdir / "notes.txt").read_text() == "keep me\n"
    done = [u for u in client.of_kind("tool_call_update") if u.get("toolCallId") == "toolu_w" and u.get("status")]
    assert done[-1]["status"] == "failed"


def test_full_is_offered_when_the_users_own_settings_chose_it(home: Path, workdir: Path) -> None:
    (home / "settings.json").write_text('{"approval": "full"}')

    async def story() -> None:
        async with acp_agent(EditorClient(), home, workdir, "--model", "replay-am/replay-model") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            assert new.modes is not None and new.modes.current_mode_id == "full"
            assert [m.id for m in new.modes.available_modes] == ["plan", "ask", "auto", "full"]

    with ReplayServer([]) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        asyncio.run(story())

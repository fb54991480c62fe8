"""Subagents in the interactive app (Textual pilot) and in RPC mode: the live box of a running
subagent, ``/agents`` and the roles ``/model`` shows."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, hold_at
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from tests.sessions.subagent_helpers import write_agent
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until
from tests.tui.cli_harness import baton_command, baton_env


async def test_a_running_subagent_shows_live_then_its_answer(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    release = asyncio.Event()
    faux_a.add(
        FauxResponse.tool_call("task", {"description": "look around", "prompt": "count the files"}, id="toolu_t"),
        FauxResponse.text("There are three files.", hold=hold_at(1, release)),
        FauxResponse.text("Parent done."),
    )
    session = await open_session(project, model_a, extra_models=[model_a], tools=["read", "task"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 34)) as pilot:
        await submit(pilot, app, "delegate it")
        await wait_until(pilot, lambda: "general on prov-a/model-a" in screen_text(app), timeout=15,
                         what="the live subagent box")
        assert "Task (" in screen_text(app) or "look around" in screen_text(app)
        release.set()
        await settle(pilot, app)
        await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
        assert "There are three files." in screen_text(app)

        await submit(pilot, app, "/agents")
        await wait_until(pilot, lambda: "explore (built-in)" in screen_text(app), what="the /agents list")
        assert "Roles: default: prov-a/model-a (session)" in screen_text(app)
        await submit(pilot, app, "/model")
        await wait_until(pilot, lambda: "Switch model" in screen_text(app), what="the model picker")
        await pilot.press("escape")  # the roles were said above the picker
        roles = "Model roles: default: prov-a/model-a (session) · fast: prov-a/model-a (default role)"
        await wait_until(pilot, lambda: roles in screen_text(app).replace("\n", " "), what="the roles /model shows")
    await session.close()


def test_rpc_get_agents_lists_agents_and_roles(home: Path, workdir: Path) -> None:
    write_agent(home / "agents", "reviewer", model="smart", tools="Read, Grep, Teleport")
    (home / "settings.json").write_text(json.dumps({"models": {"smart": "demo/baton-demo"}}))
    proc = subprocess.Popen(baton_command("--mode", "rpc", "--model", "demo/baton-demo"), cwd=workdir,
                            env=baton_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(json.dumps({"id": "1", "type": "get_agents"}).encode() + b"\n", timeout=60)
    assert proc.returncode == 0, err.decode()
    [response] = [r for r in map(json.loads, out.decode().splitlines()) if r.get("type") == "response"]
    data = response["data"]
    agents = {a["name"]: a for a in data["agents"]}
    assert list(agents)[:2] == ["general", "explore"]
    assert agents["reviewer"]["model"] == "smart → demo/baton-demo"
    assert agents["reviewer"]["tools"] == "read, grep" and agents["reviewer"]["source"] == "user"
    assert "smart: demo/baton-demo (settings)" in data["roles"]
    assert any("Teleport" in w for w in data["warnings"])

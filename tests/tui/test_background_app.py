"""The interactive app and background commands: ``!&``, the footer count, ``/ps`` (list, live output,
kill) — and notifications when a run ends (a notify command from the user's settings)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from textual import events

from baton.agent.tool import ToolError
from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.ps_command import OutputScreen
from baton.tui.app.widgets.pickers import ListPicker
from tests.process_helpers import processes_with
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until


async def test_ps_lists_views_and_kills_a_background_command(project: Path, model_a: Model) -> None:
    marker = uuid.uuid4().hex
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await submit(pilot, app, f"!& for i in 1 2 3; do echo tick $i; done; exec -a {marker} sleep 600")
        await wait_until(pilot, lambda: "1 in background (/ps)" in screen_text(app), 10, "the footer count")
        registry = session.background.registry
        [process] = registry.all()
        assert process.started_by == "user"
        await wait_until(pilot, lambda: bool(processes_with(marker)), 10, "the command to run")

        await submit(pilot, app, "/ps")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), 5, "the /ps list")
        listed = screen_text(app)
        assert "bash_1" in listed and "running" in listed and "tick 3" in listed, listed

        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, OutputScreen), 5, "the output view")
        await wait_until(pilot, lambda: "tick 1" in screen_text(app) and "tick 3" in screen_text(app), 5,
                         "the live output")
        await pilot.press("k")
        await wait_until(pilot, lambda: not process.running, 10, "the command to end")
        await wait_until(pilot, lambda: "in background (/ps)" not in screen_text(app), 5, "the footer to clear")
        assert process.state == "killed"
        assert not processes_with(marker), "its process is gone"
    await session.close()


async def test_ps_with_nothing_running_says_how_to_start_one(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await submit(pilot, app, "/ps")
        await wait_until(pilot, lambda: "No background commands" in screen_text(app), 5, "the notice")
    await session.close()


async def test_a_notify_command_hears_of_a_run_that_ended(project: Path, model_a: Model,
                                                          faux_a: FauxProvider) -> None:
    heard = project / "heard.txt"
    faux_a.add(FauxResponse.text("All done."))
    # afterSeconds 0: every run is long enough (the pilot's terminal always has the focus).
    settings = {"notify": {"method": f'printf "%s|%s" "$1" "$BATON_NOTIFY_MESSAGE" > {heard}', "afterSeconds": 0}}
    session = await open_session(project, model_a, settings=settings)
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        await wait_until(pilot, lambda: heard.exists() and heard.read_text() != "", 10, "the notify command")
    text = heard.read_text()
    assert text == "baton: the run in project ended|baton: the run in project ended", text
    await session.close()


async def test_a_short_run_with_the_focus_is_not_worth_a_word(project: Path, model_a: Model,
                                                              faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Quick."), FauxResponse.text("Again."))
    session = await open_session(project, model_a, settings={"notify": {"method": "bell", "afterSeconds": 3600}})
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        assert app.notifier.sent == []
        app.post_message(events.AppBlur())  # the terminal reported FocusOut: the user looks elsewhere
        await wait_until(pilot, lambda: not app.app_focus, 5, "the blur")
        app.sender.submit("again", follow_up=False)  # no key press: a key would give the focus back
        await settle(pilot, app)
        assert app.notifier.sent == [("bell", "baton: the run in project ended")]
    await session.close()


async def test_an_approval_waiting_while_the_user_is_away_is_worth_a_word(project: Path, model_a: Model,
                                                                        faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo hi"}), FauxResponse.text("Done."))
    session = await open_session(project, model_a, tools=["bash"],
                                 settings={"approval": "ask", "notify": {"method": "osc", "afterSeconds": 3600}})
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        app.post_message(events.AppBlur())
        await wait_until(pilot, lambda: not app.app_focus, 5, "the blur")
        app.sender.submit("go", follow_up=False)
        await wait_until(pilot, lambda: app.approval.display, 10, "the approval panel")
        assert app.notifier.sent[0] == ("osc9", "baton: approval needed for bash")
        await pilot.press("n")
        await settle(pilot, app)
    await session.close()


async def test_each_session_has_its_own_background_commands(project: Path, model_a: Model,
                                                            faux_a: FauxProvider) -> None:
    # An ACP process hosts several sessions: one's commands are not another's, nor its limit.
    first = await open_session(project, model_a, tools=["bash"], settings={"tools": {"maxBackground": 1}})
    second = await open_session(project, model_a, tools=["bash"])
    try:
        tools = {t.name: t for t in first.agent.tools}
        started = await tools["bash"].execute("c1", {"command": "sleep 600", "run_in_background": True})
        assert not started.is_error
        with pytest.raises(ToolError, match="At most 1 background commands"):
            await tools["bash"].execute("c2", {"command": "sleep 600", "run_in_background": True})
        other = {t.name: t for t in second.agent.tools}
        assert second.background.registry.all() == []
        with pytest.raises(ToolError, match="No background shell with id 'bash_1'"):
            await other["bash_output"].execute("o", {"bash_id": "bash_1"})
        assert (await other["bash"].execute("c3", {"command": "true", "run_in_background": True})).is_error is False
    finally:
        await first.close()
        await second.close()
    assert all(not p.running for p in [*first.background.registry.all(), *second.background.registry.all()])

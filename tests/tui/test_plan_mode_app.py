"""Plan mode and the task list in the interactive app (issue 27 §2, §3), driven with the pilot
over a real CodingSession on a scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from baton.providers.faux import FauxProvider, FauxResponse, faux_tool_call, hold_at
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.plan_review import PlanReviewScreen
from tests.tui.app_helpers import open_session, screen_text, settle, stored_messages, wait_until

PLAN = "# The plan\n\n1. Write `out.txt`.\n2. Check it."


def _results(path: Path) -> dict[str, dict[str, Any]]:
    return {m["toolCallId"]: m for m in stored_messages(path) if m["role"] == "toolResult"}


def _text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


async def test_shift_tab_cycles_default_plan_and_auto_accept_edits(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a, settings={"approval": "ask"})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            await pilot.pause(0.05)
            seen.append(session.permissions.mode)
        assert seen == ["plan", "auto", "ask"]
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: "plan · read-only" in screen_text(app), what="plan mode in the status bar")
        thinking = session.thinking_level
        await pilot.press("ctrl+r")  # the thinking level moved here
        await pilot.pause(0.05)
        assert session.thinking_level != thinking and session.permissions.mode == "plan"
    await session.close()


async def _propose(project: Path, model_a: Model, faux_a: FauxProvider, *then: FauxResponse) -> tuple[Any, BatonApp]:
    # a write in the same reply as the plan is judged before the user answers: refused
    faux_a.add(FauxResponse(content=[faux_tool_call("exit_plan_mode", {"plan": PLAN}, id="x1"),
                                     faux_tool_call("write", {"path": "early.txt", "content": "x"}, id="w0")]), *then)
    session = await open_session(project, model_a, tools=["read", "write", "bash"], settings={"approval": "ask"})
    return session, BatonApp(session)


async def test_accepting_the_plan_starts_the_work_in_auto_mode(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    session, app = await _propose(
        project, model_a, faux_a,
        FauxResponse(content=[faux_tool_call("write", {"path": "out.txt", "content": "done\n"}, id="w1")]),
        FauxResponse.text("Written."),
    )
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"/plan", "enter")
        await wait_until(pilot, lambda: session.permissions.mode == "plan", what="plan mode")
        await pilot.press(*"make out.txt", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReviewScreen), what="the plan shown")
        await wait_until(pilot, lambda: "Check it." in screen_text(app), what="the plan rendered")
        assert not (project / "out.txt").exists()
        await pilot.press("a")
        await settle(pilot, app)
        assert session.permissions.mode == "auto"
        assert (project / "out.txt").read_text() == "done\n"
    path = session.session_file
    await session.close()
    assert path is not None
    results = _results(path)
    assert results["x1"]["details"]["outcome"] == "accepted" and "now auto" in _text(results["x1"])
    assert not results["w1"]["isError"]
    assert results["w0"]["isError"] and "plan mode is read-only" in _text(results["w0"])
    assert not (project / "early.txt").exists()


async def test_keep_planning_sends_the_feedback_and_stays_in_plan_mode(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    session, app = await _propose(
        project, model_a, faux_a,
        FauxResponse(content=[faux_tool_call("write", {"path": "out.txt", "content": "x"}, id="w1")]),
        FauxResponse.text("Revising."),
    )
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press("shift+tab")
        assert session.permissions.mode == "plan"
        await pilot.press(*"make out.txt", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReviewScreen), what="the plan shown")
        await pilot.press("k", *"use a folder", "enter")
        await settle(pilot, app)
        assert session.permissions.mode == "plan"
    path = session.session_file
    await session.close()
    assert path is not None and not (project / "out.txt").exists()
    results = _results(path)
    assert results["x1"]["details"] == {"plan": PLAN, "outcome": "keep_planning", "feedback": "use a folder"}
    assert "use a folder" in _text(results["x1"])
    assert results["w1"]["isError"] and "plan mode is read-only" in _text(results["w1"])


async def test_cancelling_the_plan_changes_nothing(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    session, app = await _propose(project, model_a, faux_a, FauxResponse.text("Stopped."))
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press("shift+tab")
        await pilot.press(*"make out.txt", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanReviewScreen), what="the plan shown")
        await pilot.press("escape")
        await settle(pilot, app)
        assert session.permissions.mode == "plan"
        assert not isinstance(app.screen, PlanReviewScreen)
    path = session.session_file
    await session.close()
    assert path is not None
    assert _results(path)["x1"]["details"]["outcome"] == "cancelled"


TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


async def test_the_task_list_is_pinned_while_working_collapsed_after_and_back_on_resume(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    release = asyncio.Event()
    faux_a.add(FauxResponse(content=[faux_tool_call("todo_write", {"todos": TODOS})]),
               FauxResponse.text("Working on it. " * 20, hold=hold_at(3, release)))
    session = await open_session(project, model_a, tools=["read", "todo_write"])
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"fix it", "enter")
        await wait_until(pilot, lambda: "Fixing the bug" in screen_text(app), what="the task list")
        text = screen_text(app)
        assert "Tasks (1/3 done)" in text and "Run the tests" in text and "Read the code" in text
        assert app.todos.size.height == 4  # pinned above the editor in full while the run goes on
        release.set()
        await settle(pilot, app)
        await wait_until(pilot, lambda: "Tasks 1/3 done · now: Fixing the bug" in screen_text(app),
                         what="the list collapsed to one line")
        assert app.todos.size.height == 1  # the panel: one line once the run is over
    path = session.session_file
    await session.close()
    assert path is not None
    resumed = await open_session(project, model_a, tools=["read", "todo_write"], session=str(path))
    app = BatonApp(resumed)
    async with app.run_test(size=(110, 40)) as pilot:
        await wait_until(pilot, lambda: "Tasks 1/3 done · now: Fixing the bug" in screen_text(app),
                         what="the resumed session's task list")
    await resumed.close()

"""Pilot tests of the approval panel: y / a / n / Esc with a real session, tools and policy."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from baton.providers.faux import FauxProvider, FauxResponse, faux_tool_call
from baton.providers.models import Model
from baton.sessions import CodingSession
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.approval import ApprovalPanel
from tests.tui.app_helpers import open_session, screen_text, settle, stored_entries, stored_messages, wait_until


def panel_open(app: BatonApp) -> bool:
    return app.query_one(ApprovalPanel).has_class("-open")


@asynccontextmanager
async def asked(session: CodingSession) -> AsyncIterator[tuple[BatonApp, Pilot[Any]]]:
    """The app on ``session`` after the prompt "go", once the approval panel asks."""
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: panel_open(app), what="the approval panel")
        yield app, pilot


async def ask_session(project: Path, model: Model):  # type: ignore[no-untyped-def]
    session = await open_session(project, model, tools=["read", "bash", "edit", "write"],
                                 settings={"approval": "ask"})
    assert session.permissions.mode == "ask"
    return session


async def test_y_allows_once_and_n_denies(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo approved-run > y.txt"}),
               FauxResponse.tool_call("bash", {"command": "echo nope > n.txt"}),
               FauxResponse.text("Done."))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        text = screen_text(app)
        assert "Allow bash(echo approved-run > y.txt)?" in text
        assert "always allow: bash(echo approved-run > y.txt)" in text
        assert "saves it to .baton/settings.local.json" in text  # where "always" goes, before pressing it
        assert not (project / "y.txt").exists()
        await pilot.press("y")
        await wait_until(pilot, lambda: panel_open(app) and "n.txt" in screen_text(app), what="the second question")
        assert (project / "y.txt").read_text() == "approved-run\n"
        await pilot.press("n")
        await settle(pilot, app)
        assert not panel_open(app)
        assert app.focused is app.editor
    assert not (project / "n.txt").exists()
    path = session.session_file
    await session.close()
    assert path is not None
    results = [m for m in stored_messages(path) if m["role"] == "toolResult"]
    assert results[1]["isError"] and results[1]["content"][0]["text"] == "The user denied this."
    decisions = [e["data"] for e in stored_entries(path) if e.get("customType") == "permission_decision"]
    assert [(d["decision"], d["decidedBy"]) for d in decisions] == [("allow", "user"), ("deny", "user")]


async def test_a_saves_the_rule_and_the_next_identical_call_runs_unasked(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "echo again >> log.txt"}),
               FauxResponse.tool_call("bash", {"command": "echo again >> log.txt"}),
               FauxResponse.text("Done."))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        await pilot.press("a")
        await settle(pilot, app)
        assert not panel_open(app)
    await session.close()
    assert (project / "log.txt").read_text() == "again\nagain\n"
    saved = json.loads((project / ".baton" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["bash(echo again >> log.txt)"]}}


async def test_edited_rule_is_saved(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "npm run test:unit"}), FauxResponse.text("Done."))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        await pilot.press("e")
        editor = app.query_one("#approval-rule-input")
        await wait_until(pilot, lambda: editor.has_focus, what="the rule editor")
        await pilot.press("ctrl+u", *"bash(npm run test:*)", "enter")
        await settle(pilot, app)
    await session.close()
    saved = json.loads((project / ".baton" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["bash(npm run test:*)"]


async def test_escape_denies_and_stops_the_turn(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse(content=[faux_tool_call("write", {"path": "a.txt", "content": "one\ntwo\n"}),
                                     faux_tool_call("write", {"path": "b.txt", "content": "b"})]),
               FauxResponse.text("should not be asked for"))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        text = screen_text(app)
        assert "Allow write(a.txt)?" in text
        assert "+1 one" in text and "+2 two" in text  # the new file's content, as a diff
        await pilot.press("escape")
        await settle(pilot, app)
        assert not panel_open(app)
        assert "should not be asked for" not in screen_text(app)
    path = session.session_file
    await session.close()
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
    assert path is not None
    stored = stored_messages(path)
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "toolResult"]  # no further turn
    assert all(m["isError"] for m in stored[2:])


async def test_edit_outside_workspace_in_auto_shows_the_diff(project: Path, model_a: Model,
                                                             faux_a: FauxProvider) -> None:
    outside = project.parent / "other.txt"
    outside.write_text("alpha\nbeta\n")
    faux_a.add(FauxResponse.tool_call("edit", {"path": "../other.txt", "oldText": "beta", "newText": "GAMMA"}),
               FauxResponse.text("Done."))
    session = await open_session(project, model_a, tools=["edit"])
    async with asked(session) as (app, pilot):
        text = screen_text(app)
        assert "changes a file" in text and "outside the workspace" in text
        assert "GAMMA" in text and "beta" in text
        await pilot.press("y")
        await settle(pilot, app)
    await session.close()
    assert outside.read_text() == "alpha\nGAMMA\n"


async def test_approval_command_and_footer(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.05)
        assert "auto · sandbox" in screen_text(app) or "auto · no sandbox" in screen_text(app)
        await pilot.press(*"/approval full", "enter")
        await wait_until(pilot, lambda: "full · no sandbox" in screen_text(app), what="the footer")
        assert session.permissions.mode == "full"
        assert "Approval: full" in screen_text(app)
    await session.close()


async def test_r_denies_with_a_reason_the_model_reads(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "make deploy"}), FauxResponse.text("Understood."))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        await pilot.press("r")
        editor = app.query_one("#approval-rule-input")
        await wait_until(pilot, lambda: editor.has_focus, what="the reason input")
        await pilot.press(*"not on friday", "enter")
        await settle(pilot, app)
    path = session.session_file
    await session.close()
    assert path is not None
    result = next(m for m in stored_messages(path) if m["role"] == "toolResult")
    assert result["content"][0]["text"] == "The user denied this: not on friday"


async def test_a_new_file_shows_only_added_lines_and_the_call_waits_not_runs(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    """Issue 25, item 8: the new file's diff showed a removed empty line, and the call waiting
    for the answer said "running… 3.9s"."""
    faux_a.add(FauxResponse.tool_call("write", {"path": "new.txt", "content": "alpha\nbeta\n"}),
               FauxResponse.text("Done."))
    session = await ask_session(project, model_a)
    async with asked(session) as (app, pilot):
        await app.transcript.flush_now()
        await pilot.pause(0.1)
        body = str(app.query_one("#approval-body").render())
        assert "+1 alpha" in body and "+2 beta" in body and "-1" not in body
        text = screen_text(app)
        assert "waiting for your approval" in text and "running…" not in text
        await pilot.press("y")
        await settle(pilot, app)
    await session.close()
    assert (project / "new.txt").read_text() == "alpha\nbeta\n"


async def test_the_approval_picker_says_what_each_mode_does(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(150, 30)) as pilot:
        await pilot.press(*"/approval", "enter")
        await wait_until(pilot, lambda: "Approval mode" in screen_text(app), what="the picker")
        text = " ".join(screen_text(app).split())
        assert "every command, edit and write asks" in text
        assert "commands run in the sandbox" in text and "everything runs, without the sandbox" in text
        await pilot.press("escape")
    await session.close()

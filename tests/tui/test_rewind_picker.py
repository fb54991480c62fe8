"""Pilot tests of /rewind and Esc Esc: the prompt picker, the choice, the hand-edit confirmation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions.checkpoints.git import find_git
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import UserMessageView
from baton.tui.app.widgets.pickers import ConfirmScreen, ListPicker
from tests.tui.app_helpers import open_session, screen_text, settle, submit, views, wait_until

pytestmark = pytest.mark.skipif(find_git() is None, reason="git is not installed")


@asynccontextmanager
async def after_two_prompts(project: Path, model: Model, faux: FauxProvider,
                            **settings: Any) -> AsyncIterator[tuple[BatonApp, Pilot[Any]]]:
    """The app once the prompts "make one" and "make two" wrote one.txt and two.txt (the
    session is closed after the app)."""
    faux.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "1"}), "Made one.",
             FauxResponse.tool_call("write", {"path": "two.txt", "content": "2"}), "Made two.")
    session = await open_session(project, model, tools=["write"], settings=settings or None)
    app = BatonApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        for text in ("make one", "make two"):
            await submit(pilot, app, text)
            await settle(pilot, app)
        yield app, pilot
    await session.close()


async def test_rewind_picker_lists_prompts_and_restores_code_and_conversation(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    async with after_two_prompts(project, model_a, faux_a) as (app, pilot):
        assert (project / "two.txt").exists()
        await submit(pilot, app, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the prompt picker")
        text = screen_text(app)
        assert text.index("make two") < text.index("make one")  # newest first
        assert "model-a" in text and "+1" in text
        await pilot.press("down", "enter")  # "make one"
        await wait_until(pilot, lambda: "Code and conversation" in screen_text(app), what="the choices")
        assert "Conversation only" in screen_text(app) and "Code only" in screen_text(app)
        await pilot.press("enter")  # code and conversation
        await wait_until(pilot, lambda: app.editor.text == "make one", what="the prompt back in the editor")
        await wait_until(pilot, lambda: "restored 0 files, removed 2" in screen_text(app), what="the summary")
        assert not (project / "one.txt").exists() and not (project / "two.txt").exists()
        assert views(app, UserMessageView) == []


async def test_escape_twice_opens_rewind_and_hand_edits_need_confirmation(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    async with after_two_prompts(project, model_a, faux_a) as (app, pilot):
        (project / "one.txt").write_text("edited by hand")
        await pilot.press("escape")
        await pilot.pause(0.3)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the prompt picker")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: "Code only" in screen_text(app), what="the choices")
        await pilot.press("down", "down", "enter")  # code only
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        assert "one.txt" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: "nothing changed" in screen_text(app), what="the cancel notice")
        assert (project / "one.txt").read_text() == "edited by hand" and (project / "two.txt").exists()
        assert len(views(app, UserMessageView)) == 2  # code only: the conversation stays


async def test_a_file_too_large_for_the_checkpoint_is_reported_once(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    (project / "big.bin").write_bytes(b"x" * 4096)
    async with after_two_prompts(project, model_a, faux_a, checkpoints={"maxFileBytes": 1024}) as (app, _):
        text = screen_text(app)
        assert text.count("Left out of the checkpoint") == 1 and "big.bin" in text


async def test_rewind_rows_show_seconds_and_the_files_before_choosing(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    """Issue 25, item 9: rows differing only by minute, and no file list before the choice."""
    import re

    async with after_two_prompts(project, model_a, faux_a) as (app, pilot):
        await submit(pilot, app, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the prompt picker")
        assert re.search(r"\d\d-\d\d \d\d:\d\d:\d\d", screen_text(app))
        await pilot.press("down", "enter")  # "make one"
        await wait_until(pilot, lambda: "Code and conversation" in screen_text(app), what="the choices")
        text = " ".join(screen_text(app).split())
        assert "Files the agent changed since then: one.txt, two.txt" in text
        await pilot.press("down")
        await wait_until(pilot, lambda: "Files stay as they are." in screen_text(app), what="the conversation choice")
        await pilot.press("escape")


async def test_rewind_says_a_write_outside_the_workspace_is_not_undone(
    project: Path, model_a: Model, faux_a: FauxProvider, tmp_path: Path
) -> None:
    """Issue 25, item 9: writes outside the workspace are called out as not undoable."""
    outside = tmp_path / "elsewhere" / "outside.txt"
    outside.parent.mkdir()
    faux_a.add(FauxResponse.tool_call("write", {"path": "in.txt", "content": "1"}), "Made it.",
               FauxResponse.tool_call("write", {"path": str(outside), "content": "2"}), "Wrote outside.")
    session = await open_session(project, model_a, tools=["write"], settings={"approval": "full"})
    app = BatonApp(session)
    async with app.run_test(size=(150, 36)) as pilot:
        for text in ("make in", "write outside"):
            await submit(pilot, app, text)
            await settle(pilot, app)
        assert outside.read_text() == "2"
        await submit(pilot, app, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the prompt picker")
        await pilot.press("down", "enter")  # "make in"
        await wait_until(pilot, lambda: "Code and conversation" in screen_text(app), what="the choices")
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert f"Not undone (outside the workspace, no checkpoint covers them): {outside}" in text
        await pilot.press("escape")
    await session.close()


async def test_a_before_rewind_row_names_the_files_that_rewind_changed(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    async with after_two_prompts(project, model_a, faux_a) as (app, pilot):
        first = next(p for p in app.session.checkpoints() if p.label() == "make one")
        await app.session.rewind(first.entry_id, "code")
        await submit(pilot, app, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the prompt picker")
        assert "before rewind (it changed one.txt, two.txt)" in screen_text(app)
        await pilot.press("escape")

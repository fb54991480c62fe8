"""Pilot tests of /rewind and Esc Esc: the prompt picker, the choice, the hand-edit confirmation."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions.checkpoints.git import find_git
from baton.tui.app import BatonApp
from baton.tui.widgets.messages import UserMessageView
from baton.tui.widgets.pickers import ConfirmScreen, ListPicker
from tests.tui.app_helpers import open_session, screen_text, settle, submit, views, wait_until

pytestmark = pytest.mark.skipif(find_git() is None, reason="git is not installed")


async def _run_two_prompts(app: BatonApp, pilot: object) -> None:
    for text in ("make one", "make two"):
        app.editor.set_text(text)
        await pilot.press("enter")  # type: ignore[attr-defined]
        await settle(pilot, app)  # type: ignore[arg-type]


async def test_rewind_picker_lists_prompts_and_restores_code_and_conversation(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "1"}), "Made one.",
               FauxResponse.tool_call("write", {"path": "two.txt", "content": "2"}), "Made two.")
    session = await open_session(project, model_a, tools=["write"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _run_two_prompts(app, pilot)
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
    await session.close()


async def test_escape_twice_opens_rewind_and_hand_edits_need_confirmation(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "1"}), "Made one.",
               FauxResponse.tool_call("write", {"path": "two.txt", "content": "2"}), "Made two.")
    session = await open_session(project, model_a, tools=["write"])
    app = BatonApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _run_two_prompts(app, pilot)
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
    await session.close()


async def test_a_file_too_large_for_the_checkpoint_is_reported_once(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    (project / "big.bin").write_bytes(b"x" * 4096)
    faux_a.add(FauxResponse.tool_call("write", {"path": "one.txt", "content": "1"}), "Made one.",
               FauxResponse.tool_call("write", {"path": "two.txt", "content": "2"}), "Made two.")
    session = await open_session(project, model_a, tools=["write"], settings={"checkpoints": {"maxFileBytes": 1024}})
    app = BatonApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await _run_two_prompts(app, pilot)
        text = screen_text(app)
        assert text.count("Left out of the checkpoint") == 1 and "big.bin" in text
    await session.close()

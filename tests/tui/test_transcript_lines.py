"""A finished message costs a frame nothing: the transcript is one line-based widget, entries render
to strips once and are not rendered again while later turns stream (issue 17, figures).

Real tool calls (bash) through a real session; the tests look at what the screen lays out and at
whether an early message's rendering is the same object after more turns."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.widget import Widget

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_text, faux_tool_call
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.markdown_text import MarkdownText
from baton.tui.app.widgets.messages import AssistantMessageView, _TextPart
from baton.tui.app.widgets.tool_call import ToolCallView
from tests.tui.app_helpers import open_session, screen_text, settle, submit


def _step_replies(context: Any, model: Any) -> FauxResponse:
    user_turns = sum(1 for m in context.messages if m.role == "user")
    last_user = max(i for i, m in enumerate(context.messages) if m.role == "user")
    done = sum(1 for m in context.messages[last_user:] if m.role == "assistant")
    if done >= 4:  # four tool-calling turns per prompt, then an answer
        return FauxResponse.text(f"Finished round {user_turns}.")
    return FauxResponse(content=[faux_text(f"Step {done + 1}: one quick command, then on."),
                                 faux_tool_call("bash", {"command": f"echo step-{done + 1}"})])


def _laid_out(app: BatonApp) -> list[Widget]:
    # Scroll bars come and go with the content's height; they are not part of a turn's cost.
    return [w for w in app.screen._compositor.full_map if type(w).__name__ != "ScrollBar"]


def _replies(app: BatonApp) -> list[AssistantMessageView]:
    return [v for v in app.transcript.mounted_views if isinstance(v, AssistantMessageView)]


@asynccontextmanager
async def _steps_app(tmp_path: Path) -> AsyncIterator[tuple[Any, BatonApp]]:
    """The app on a real session whose model calls bash four times per prompt, then answers."""
    model = faux_model("steps", provider="faux-steps", api="faux-steps")
    with FauxProvider("faux-steps", _step_replies, chunk_size=6):
        session = await open_session(tmp_path, model, tools=["bash"])
        app = BatonApp(session)
        async with app.run_test(size=(110, 36)) as pilot:
            yield pilot, app
        await session.close()


async def _run_round(pilot: Any, app: BatonApp, prompt: str) -> None:
    await submit(pilot, app, prompt)
    await settle(pilot, app, timeout=30)
    await pilot.pause(0.05)


async def test_turns_add_no_widgets_and_finished_messages_are_not_rendered_again(tmp_path: Path) -> None:
    async with _steps_app(tmp_path) as (pilot, app):
        await _run_round(pilot, app, "round one")
        widgets_after_one = len(_laid_out(app))
        first = _replies(app)[0]
        rendering = first.strips(app.transcript._render_context())
        for prompt in ("round two", "round three"):
            await _run_round(pilot, app, prompt)
        assert "Finished round 3." in screen_text(app)
        assert len(_replies(app)) == 15
        # Ten more tool-calling replies and two more prompts: not one widget more on screen.
        assert len(_laid_out(app)) == widgets_after_one
        assert not app.transcript.children or all(
            type(child).__name__.startswith("ScrollBar") for child in app.transcript.children)
        # The early reply was rendered once; later turns reuse its strips as they are.
        assert first.strips(app.transcript._render_context()) is rendering
        # What is behind a rendered message is still there (/copy, late tool updates).
        assert app.transcript.last_answer() == "Finished round 3."
        call_id = _replies(app)[-2].tool_views[0].tool_call_id
        assert isinstance(app.transcript._tool_view(call_id), ToolCallView)


async def test_a_new_width_or_flag_renders_the_messages_again(tmp_path: Path) -> None:
    async with _steps_app(tmp_path) as (pilot, app):
        await _run_round(pilot, app, "round one")
        transcript = app.transcript
        assert "Step 4: one quick command, then on." in transcript.text
        await pilot.resize_terminal(30, 36)
        await pilot.pause(0.2)
        assert all(strip.cell_length <= 30 for strip in transcript._lines)
        assert "Step 4: one quick command, then on." not in transcript.text, "wrapped at the new width"
        assert "Finished round 1." in screen_text(app)
        before = transcript.text
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        assert transcript.text != before or "(Ctrl+O" not in before


async def test_a_message_rendered_again_keeps_the_rows_that_did_not_change_and_shows_the_change(
        tmp_path: Path) -> None:
    # Issue 30: every flush renders the live message again; its unchanged lines must not be
    # drawn again (a frame's costliest work), and a changed line must show its new text.
    async with _steps_app(tmp_path) as (pilot, app):
        await _run_round(pilot, app, "round one")
        transcript = app.transcript
        screen = Region(0, 0, transcript.size.width, transcript.size.height)
        before = transcript.render_lines(screen)
        last = _replies(app)[-1]
        text_part = last._order[0]
        assert isinstance(text_part, _TextPart)
        lines_before = list(transcript._lines)
        text_part.changed()  # rendered again with the same content, as a flush does
        transcript._relayout()
        assert transcript._lines[-1] is not lines_before[-1], "the lines are new objects"
        again = transcript.render_lines(screen)
        assert [row.text for row in again] == [row.text for row in before]
        assert all(row is old for row, old in zip(again, before, strict=True))
        text_part.markdown = MarkdownText("Finished round one, rewritten.")
        text_part.changed()
        transcript._relayout()
        changed = transcript.render_lines(screen)
        shown = [row.text for row in changed]
        assert any("Finished round one, rewritten." in line for line in shown), shown
        assert not any("Finished round 1." in line for line in shown), shown
        kept = sum(1 for row, old in zip(changed, before, strict=True) if row is old)
        assert kept >= len(before) - 3, "only the rows of the changed line were drawn again"


async def test_a_row_the_scroll_thumb_reaches_gets_a_new_bar_cell_not_a_new_drawing(tmp_path: Path) -> None:
    # Issue 30: the thumb moves as the conversation grows; the rows it passes over keep their
    # drawn line (the costly part) and only change their last cell.
    async with _steps_app(tmp_path) as (pilot, app):
        await _run_round(pilot, app, "round one")
        transcript = app.transcript
        height = transcript.size.height
        screen = Region(0, 0, transcript.size.width, height)
        transcript.scroll_to(y=0, animate=False, immediate=True, force=True)
        top = transcript.render_lines(screen)
        for n in range(40):  # the conversation grows: the thumb shrinks and leaves rows
            transcript.add_notice(f"notice {n}")
        await transcript.flush_now()
        transcript.scroll_to(y=0, animate=False, immediate=True, force=True)
        again = transcript.render_lines(screen)
        flipped = [y for y in range(height) if top[y].text[-1] != again[y].text[-1]]
        assert flipped, "the thumb moved"
        for y in flipped:
            assert top[y].text[:-1] == again[y].text[:-1]
            assert all(new is old for new, old in zip(list(again[y])[:-1], list(top[y])[:-1], strict=True))


async def test_the_program_moves_what_start_up_made_out_of_the_collectors_sight(tmp_path: Path) -> None:
    # Issue 30: a full collection walked every object start-up made (modules, the app, the
    # session): 50 ms each time. The program (not a test, which shares its process) freezes them.
    model = faux_model("steps", provider="faux-steps", api="faux-steps")
    with FauxProvider("faux-steps", _step_replies, chunk_size=6):
        session = await open_session(tmp_path, model, tools=["bash"])
        app = BatonApp(session)
        app.freeze_startup_objects = True
        try:
            async with app.run_test(size=(110, 36)) as pilot:
                await pilot.pause(0.1)
                assert gc.get_freeze_count() > 0
                await _run_round(pilot, app, "round one")
                assert "Finished round 1." in screen_text(app)
        finally:
            gc.unfreeze()
            await session.close()

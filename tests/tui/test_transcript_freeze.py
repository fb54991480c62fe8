"""A finished message costs the screen's layout passes one widget, whatever it holds, so the layout
work of a turn does not grow with the number of earlier turns (issue 17, figures).

Every streamed update asks Textual for a layout pass over every widget on the screen; the test
counts the widgets such a pass walks (the compositor's map) after a few turns and after more
turns, with real tool calls (bash) through a real session."""

from __future__ import annotations

import inspect
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_text, faux_tool_call
from baton.tui.app import BatonApp
from baton.tui.widgets.messages import AssistantMessageView
from baton.tui.widgets.tool_call import ToolCallView
from tests.tui.app_helpers import open_session, screen_text, settle, wait_until


def _step_replies(context: Any, model: Any) -> FauxResponse:
    user_turns = sum(1 for m in context.messages if m.role == "user")
    last_user = max(i for i, m in enumerate(context.messages) if m.role == "user")
    done = sum(1 for m in context.messages[last_user:] if m.role == "assistant")
    if done >= 4:  # four tool-calling turns per prompt, then an answer
        return FauxResponse.text(f"Finished round {user_turns}.")
    return FauxResponse(content=[faux_text(f"Step {done + 1}: one quick command, then on."),
                                 faux_tool_call("bash", {"command": f"echo step-{done + 1}"})])


def _laid_out_in_transcript(app: BatonApp) -> list[Widget]:
    transcript = app.transcript
    return [w for w in app.screen._compositor.full_map if transcript in w.ancestors]


def _finished_views(app: BatonApp) -> list[AssistantMessageView]:
    return [w for w in app.transcript.mounted_widgets if isinstance(w, AssistantMessageView)]


async def _run_round(pilot: Any, app: BatonApp, prompt: str) -> None:
    app.editor.set_text(prompt)
    await pilot.press("enter")
    await settle(pilot, app, timeout=30)
    await wait_until(pilot, lambda: all(v.is_frozen for v in _finished_views(app)), timeout=10,
                     what="the finished messages to be frozen")
    await pilot.pause(0.05)


async def test_finished_messages_are_one_widget_each_in_every_layout_pass(tmp_path: Path) -> None:
    model = faux_model("steps", provider="faux-steps", api="faux-steps")
    with FauxProvider("faux-steps", _step_replies, chunk_size=6):
        session = await open_session(tmp_path, model, tools=["bash"])
        app = BatonApp(session)
        async with app.run_test(size=(110, 36)) as pilot:
            await _run_round(pilot, app, "round one")
            first_views = len(_finished_views(app))
            first_laid_out = len(_laid_out_in_transcript(app))
            for prompt in ("round two", "round three"):
                await _run_round(pilot, app, prompt)
            views = _finished_views(app)
            laid_out = _laid_out_in_transcript(app)
            assert "Finished round 3." in screen_text(app)
            # Twice as many finished messages, each with a text block and a tool box (about ten
            # widgets when live): the layout pass walks one more widget per new entry, no more.
            new_entries = len(app.transcript.mounted_widgets) - (first_views + 2)
            assert len(views) == 15 and first_views == 5
            assert len(laid_out) - first_laid_out <= new_entries + 1
            for view in views:
                assert view in laid_out
                assert not any(child in laid_out for child in view.walk_children())
            # What is behind a frozen message is still there (/copy, late tool updates).
            assert app.transcript.last_answer() == "Finished round 3."
            assert isinstance(app.transcript._tool_view(views[-2].tool_views[0].tool_call_id), ToolCallView)
        await session.close()


async def test_a_frozen_message_looks_like_the_live_one_and_thaws_when_its_look_changes(tmp_path: Path) -> None:
    model = faux_model("steps", provider="faux-steps", api="faux-steps")
    with FauxProvider("faux-steps", _step_replies, chunk_size=6):
        session = await open_session(tmp_path, model, tools=["bash"])
        app = BatonApp(session)
        async with app.run_test(size=(110, 36)) as pilot:
            await _run_round(pilot, app, "round one")
            await wait_until(pilot, lambda: "step-4" in screen_text(app), timeout=10, what="the frozen picture")
            frozen_text = screen_text(app)
            for view in _finished_views(app):
                view.thaw()
            await wait_until(pilot, lambda: not any(v.is_frozen for v in _finished_views(app)), what="thawed")
            await pilot.pause(0.1)
            assert screen_text(app) == frozen_text
            assert all(view.freeze() for view in _finished_views(app))
            await pilot.pause(0.1)
            assert screen_text(app) == frozen_text
            # A new width re-lays out the real widgets and freezes them again at that width.
            await pilot.resize_terminal(80, 36)
            await pilot.pause(0.2)
            await wait_until(pilot, lambda: all(v.is_frozen and v.outer_size.width < 80
                                                for v in _finished_views(app)), timeout=10,
                             what="frozen at the new width")
            assert "Finished round 1." in screen_text(app)
        await session.close()


class _RestyleCountingApp(BatonApp):
    """Counts the CSS restyles Textual runs (a class change restyles the node and everything in it)."""

    CSS_PATH = str(Path(inspect.getfile(BatonApp)).with_name("theme.tcss"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.restyled: list[Any] = []

    def update_styles(self, node: Any, *args: Any, **kwargs: Any) -> None:
        # Textual's signature differs between versions (``animate`` is newer): pass it through.
        self.restyled.append(node)
        super().update_styles(node, *args, **kwargs)


@pytest.mark.skipif(
    int(version("textual").split(".")[0]) < 8,
    reason="older Textual restyles a widget once per class changed, not once per set_classes call; "
           "this counts the batching baton relies on with the Textual 8 it is measured with",
)
async def test_a_turn_restyles_each_tool_box_once_per_state_and_freezing_restyles_nothing(tmp_path: Path) -> None:
    model = faux_model("steps", provider="faux-steps", api="faux-steps")
    with FauxProvider("faux-steps", _step_replies, chunk_size=6):
        session = await open_session(tmp_path, model, tools=["bash"])
        app = _RestyleCountingApp(session)
        async with app.run_test(size=(110, 36)) as pilot:
            app.restyled.clear()
            await _run_round(pilot, app, "round one")
            boxes = [box for view in _finished_views(app) for box in view.tool_views]
            assert len(boxes) == 4 and all(box.state == "done" for box in boxes)
            # Running, then done: two restyles of each box, whatever classes the result sets.
            for box in boxes:
                assert 1 <= app.restyled.count(box) <= 2
            views = _finished_views(app)
            for view in views:
                view.thaw()
            await pilot.pause(0.1)
            app.restyled.clear()
            assert all(view.freeze() for view in views)
            await pilot.pause(0.1)
            assert not any(node is view or view in node.ancestors for node in app.restyled for view in views)
        await session.close()

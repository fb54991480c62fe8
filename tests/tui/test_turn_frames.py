"""What a tool-calling turn's frames show while the app does less per frame (issue 30): the status
area repeats its kept lines between changes, a tool call works out its parts once per frame, and
the transcript lays out again only the entries that said they changed. Each test compares what is
painted with what a fresh rendering paints."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Region

from baton.tui.app.widgets.messages import AssistantMessageView
from baton.tui.app.widgets.status import ActivityBar, StatusBar, StatusInfo
from baton.tui.app.widgets.tool_call import ToolCallView
from baton.tui.app.widgets.transcript import Transcript
from baton.tui.app.widgets.transcript_entries import Entry
from tests.tui.app_helpers import screen_text, wait_until


class BottomApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.transcript = Transcript()
        self.activity = ActivityBar(id="activity")
        self.status = StatusBar(id="status")

    def compose(self) -> ComposeResult:
        yield self.transcript
        with Vertical(id="bottom"):
            yield self.activity
            yield self.status


def _fresh(widget: StatusBar | ActivityBar) -> list[Any]:
    """The widget's lines rendered now, without the kept ones."""
    widget._still = None
    return widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))


def _kept(widget: StatusBar | ActivityBar) -> list[Any]:
    return widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))


async def test_the_status_area_repaints_what_changed_in_it_and_nothing_stale() -> None:
    app = BottomApp()
    async with app.run_test(size=(90, 20)) as pilot:
        app.status.set_info(StatusInfo(cwd="~/project", model="replay/replay-model", cost=0.5))
        app.activity.start()
        await wait_until(pilot, lambda: "replay/replay-model" in screen_text(app), what="the status line")
        kept = _kept(app.status)
        assert _kept(app.status) is kept  # a spinner frame asks again: the same lines
        app.status.set_info(StatusInfo(cwd="~/project", model="replay/other-model", cost=1.25))
        await wait_until(pilot, lambda: "replay/other-model" in screen_text(app), what="the new model")
        assert "$1.25" in screen_text(app) or "1.25" in screen_text(app)
        assert _kept(app.status) == _fresh(app.status)
        before = _kept(app.status)
        app.theme = "textual-light"
        await pilot.pause(0.2)
        assert _kept(app.status) == _fresh(app.status)
        assert _kept(app.status) != before  # the light theme's colours, not the kept dark ones
        await pilot.resize_terminal(70, 20)
        await pilot.pause(0.2)
        assert _kept(app.status) == _fresh(app.status)
        assert _kept(app.activity) == _fresh(app.activity)
        assert "replay/other-model" in screen_text(app)


async def test_a_tool_call_in_an_earlier_entry_shows_its_result_when_it_arrives() -> None:
    """A call's result arrives after later entries were added (a notice below its reply): the
    transcript lays its entry out again because the view said it changed."""
    app = BottomApp()
    async with app.run_test(size=(90, 24)) as pilot:
        transcript = app.transcript
        view = AssistantMessageView(None, streaming=True)
        call = ToolCallView("call-1", "bash", {"command": "echo hello"})
        view._add(0, call)
        transcript.add_entry(Entry("assistant", factory=lambda: view))
        transcript.add_notice("a notice below the reply")
        call.set_running()
        await transcript.flush_now()
        await wait_until(pilot, lambda: "a notice below the reply" in screen_text(app), what="the notice")
        call.set_result("hello\n", {"exitCode": 0}, is_error=False)
        await wait_until(pilot, lambda: "✓" in screen_text(app), what="the finished call")
        assert "hello" in screen_text(app)
        assert call.header_text.startswith("✓")
        # The laid-out lines are those of a transcript laid out afresh.
        shown = transcript.text
        transcript._restructure(0)
        transcript._relayout()
        assert transcript.text == shown

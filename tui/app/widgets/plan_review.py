"""The plan the model proposed (``exit_plan_mode``), rendered, and the user's verdict.

Keys: ``a`` accept and start in auto mode, ``s`` accept and start in ask mode, ``k`` keep planning
(type feedback, Enter sends it), Esc cancel. The screen answers with a
:class:`~baton.sessions.plan_mode.PlanAnswer`; only that answer leaves plan mode.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Markdown, Static

from baton.sessions.plan_mode import PlanAnswer
from baton.tui.app.render import clean

HINT = "a accept, auto mode · s accept, ask mode · k keep planning · Esc cancel"


class PlanReviewScreen(ModalScreen[PlanAnswer]):
    """Shows a plan and asks what to do with it (see the module docstring)."""

    DEFAULT_CSS = """
    PlanReviewScreen { align: center middle; background: $background 60%; }
    PlanReviewScreen > Vertical {
        width: 94%; max-width: 140; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    PlanReviewScreen .plan-title { text-style: bold; color: $text-accent; }
    PlanReviewScreen VerticalScroll { height: auto; max-height: 70vh; }
    PlanReviewScreen .plan-hint { color: $text-muted; margin: 1 0 0 0; }
    PlanReviewScreen Input { display: none; }
    PlanReviewScreen Input.-typing { display: block; }
    """
    BINDINGS = [
        Binding("a", "accept('auto')", "Accept (auto)", show=False),
        Binding("s", "accept('ask')", "Accept (ask)", show=False),
        Binding("k", "keep", "Keep planning", show=False),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, plan: str) -> None:
        super().__init__()
        self._plan = clean(plan)  # a model wrote it: no control sequences reach the terminal

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("The plan — start the work?", classes="plan-title")
            with VerticalScroll(id="plan-body"):
                yield Markdown(self._plan, id="plan-markdown")
            yield Input(id="plan-feedback", placeholder="what should change? (Enter sends, Esc cancels)")
            yield Static(HINT, classes="plan-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#plan-body").focus()

    @property
    def _typing(self) -> bool:
        return self.query_one("#plan-feedback", Input).has_class("-typing")

    def action_accept(self, mode: str) -> None:
        """Start the work in ``mode``."""
        if not self._typing:
            self.dismiss(PlanAnswer("accept", mode))

    def action_keep(self) -> None:
        """Ask for feedback, then keep planning."""
        if self._typing:
            return
        field = self.query_one("#plan-feedback", Input)
        field.add_class("-typing")
        field.focus()

    def action_cancel(self) -> None:
        """Esc: leave the feedback field, else cancel the plan."""
        field = self.query_one("#plan-feedback", Input)
        if self._typing:
            field.remove_class("-typing")
            field.value = ""
            self.query_one("#plan-body").focus()
            return
        self.dismiss(PlanAnswer("cancel"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(PlanAnswer("keep_planning", feedback=event.value))

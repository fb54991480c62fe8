"""An MCP server's question as a form (:mod:`tools.mcp.elicitation`).

The title says whose question it is, and that baton does not vouch for what it asks: a server
may ask for a password it has no business with. One input per field (its kind and options in
the placeholder); Enter sends when every field reads well (else the first bad one is named),
Esc declines. A question without fields is a yes/no question: Enter accepts, Esc declines.
"""

from __future__ import annotations

import asyncio

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from baton.tools.mcp.elicitation import ElicitationAnswer, ElicitationQuestion, FormField, checked_values
from baton.tui.app.render import safe

WARNING = "baton does not check what a server asks: give it only what you would give that server."


def _placeholder(form_field: FormField) -> str:
    if form_field.kind == "enum":
        hint = "one of: " + ", ".join(form_field.options)
    elif form_field.kind == "boolean":
        hint = "yes or no"
    else:
        hint = form_field.kind
    required = "required" if form_field.required else "optional"
    return f"{hint} ({required})"


def _secret_name(name: str) -> bool:
    """A field whose name says it holds a secret is typed unseen."""
    lowered = name.lower()
    return any(word in lowered for word in ("password", "secret", "token", "key"))


class ElicitationScreen(ModalScreen[ElicitationAnswer]):
    """The form; dismissed with the answer."""

    DEFAULT_CSS = """
    ElicitationScreen { align: center middle; background: $background 60%; }
    ElicitationScreen > Vertical {
        width: 80%; max-width: 110; height: auto; max-height: 90%; border: round $warning;
        background: $surface; padding: 0 1;
    }
    ElicitationScreen .elicit-title { text-style: bold; }
    ElicitationScreen .elicit-warning { color: $text-warning; }
    ElicitationScreen .elicit-label { margin: 1 0 0 0; }
    ElicitationScreen .elicit-error { color: $text-error; }
    ElicitationScreen .elicit-hint { color: $text-muted; margin: 1 0 0 0; }
    ElicitationScreen VerticalScroll { height: auto; max-height: 20; }
    """

    BINDINGS = [
        Binding("escape", "decline", show=False, priority=True),
        Binding("enter", "send", show=False, priority=True),
    ]

    def __init__(self, question: ElicitationQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        question = self.question
        with Vertical():
            yield Static(safe(f"MCP server '{question.server}' asks"), markup=False, classes="elicit-title")
            yield Static(safe(WARNING), markup=False, classes="elicit-warning")
            yield Static(safe(question.message), markup=False)
            with VerticalScroll():
                for index, form_field in enumerate(question.fields):
                    label = form_field.title + (f" — {form_field.description}" if form_field.description else "")
                    yield Static(safe(label), markup=False, classes="elicit-label")
                    default = "" if form_field.default is None else str(form_field.default)
                    yield Input(value=default, placeholder=_placeholder(form_field), id=f"field-{index}",
                                password=form_field.kind == "string" and _secret_name(form_field.name))
            yield Static("", markup=False, classes="elicit-error", id="elicit-error")
            hint = "Enter send · Esc decline" if question.fields else "Enter yes · Esc no"
            yield Static(hint, markup=False, classes="elicit-hint")

    def on_mount(self) -> None:
        inputs = self.query(Input)
        if inputs:
            inputs.first().focus()

    def typed(self) -> dict[str, str]:
        """What the inputs hold, by field name."""
        inputs = list(self.query(Input))
        return {f.name: inputs[i].value for i, f in enumerate(self.question.fields) if i < len(inputs)}

    def action_send(self) -> None:
        """Send when every field reads well; else name the first bad one."""
        typed = self.typed()
        try:
            checked_values(self.question, typed)
        except ValueError as exc:
            self.query_one("#elicit-error", Static).update(safe(str(exc)))
            return
        self.dismiss(ElicitationAnswer("accept", typed))

    def action_decline(self) -> None:
        """Decline the question."""
        self.dismiss(ElicitationAnswer("decline"))

    def on_click(self, event: events.Click) -> None:
        event.stop()


async def ask_with_form(app: object, question: ElicitationQuestion) -> ElicitationAnswer:
    """Show the form on ``app`` and wait for the answer."""
    from textual.app import App

    assert isinstance(app, App)
    answered: asyncio.Future[ElicitationAnswer] = asyncio.get_running_loop().create_future()

    def settle(answer: ElicitationAnswer | None) -> None:
        if not answered.done():
            answered.set_result(answer or ElicitationAnswer("cancel"))

    app.push_screen(ElicitationScreen(question), settle)
    return await answered

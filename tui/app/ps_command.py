"""``/ps``: the session's background commands — state, runtime, last line; live output; kill.

``/ps`` lists them in a picker; picking one opens its live output (the last lines the ring holds,
redacted and cleaned, refreshed a few times a second) where ``k`` ends it and Esc closes.
``/ps kill ID`` ends one directly. The user starts their own with ``!& command``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from baton.providers.redact import redact
from baton.tui.app.command_registry import command
from baton.tui.app.render import clean
from baton.tui.app.widgets.pickers import ListPicker, PickerItem, picker_label

if TYPE_CHECKING:
    from baton.tools.background import BackgroundProcess
    from baton.tui.app.baton_app import BatonApp

VIEW_LINES = 400
"""Lines of output the live view shows (the end of what the ring holds)."""
REFRESH_SECONDS = 0.25


def format_runtime(seconds: float) -> str:
    """``8s``, ``3m05s``, ``2h04m``."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def process_row(process: BackgroundProcess) -> Content:
    """One picker row: id, state, runtime, command, last line."""
    state_style = "$text-success" if process.running else "$text-muted"
    process.catch_up()
    last = redact(process.ring.last_line(120))
    return picker_label(
        (f"{process.id:<9}", "bold"), (f"{process.status_text():<16}", state_style),
        (f"{format_runtime(process.runtime):>7}  ", "$text-muted"), (_short(process.command, 50), "$text"),
        (f"  │ {last}" if last else "", "$text-muted"),
    )


@command("ps", "/ps [kill ID]", "List background commands (state, runtime, last line); view one's output or kill it")
async def cmd_ps(app: BatonApp, args: str) -> None:
    registry = app.session.background.registry
    words = args.split()
    if words[:1] == ["kill"] and len(words) == 2:
        await _kill(app, words[1])
        return
    if words:
        app.notice("Usage: /ps, or /ps kill ID", "warning")
        return
    processes = registry.all()
    if not processes:
        app.notice("No background commands. Start one with !& command (or ask the agent to).")
        return
    items = [PickerItem(process_row(p), p.id, f"{p.id} {p.command}") for p in reversed(processes)]
    running = len(registry.running())
    picked = await app.push_screen_wait(ListPicker(
        f"Background commands ({running} running, at most {registry.limit})", items,
        hint="↑↓ move · Enter view output · Esc close · type to filter"))
    if picked is None:
        return
    process = registry.get(picked)
    kill = await app.push_screen_wait(OutputScreen(process))
    if kill:
        await _kill(app, process.id)


async def _kill(app: BatonApp, shell_id: str) -> None:
    from baton.tools.background import BackgroundError

    registry = app.session.background.registry
    try:
        process = registry.get(shell_id)
    except BackgroundError as exc:
        app.notice(clean(str(exc)), "warning")
        return
    if not process.running:
        app.notice(f"{process.id} has already ended ({process.status_text()}).")
        return
    await registry.kill(process.id)
    app.notice(f"Ended {process.id}: {clean(_short(process.command, 80))}", "success")
    app.refresh_status()


class OutputScreen(ModalScreen[bool]):
    """A background command's live output; ``k`` kills it (dismisses with True), Esc closes."""

    DEFAULT_CSS = """
    OutputScreen { align: center middle; background: $background 60%; }
    OutputScreen > Vertical {
        width: 94%; max-width: 160; height: 85%; border: round $primary; background: $surface; padding: 0 1;
    }
    OutputScreen .output-title { text-style: bold; height: auto; }
    OutputScreen VerticalScroll { height: 1fr; }
    OutputScreen .output-hint { height: auto; color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape,q", "close", "Close", show=False),
        Binding("k", "kill", "Kill", show=False),
    ]

    def __init__(self, process: BackgroundProcess) -> None:
        super().__init__()
        self.process = process
        self._title = Static("", markup=False, classes="output-title")
        self._body = Static("", markup=False, classes="output-body")
        self._scroll = VerticalScroll()
        self._shown_bytes = -1
        self._shown_state = ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield self._title
            with self._scroll:
                yield self._body
            yield Static(Content("k kill · Esc close"), markup=False, classes="output-hint")

    def on_mount(self) -> None:
        self._refresh_output()
        self.set_interval(REFRESH_SECONDS, self._refresh_output)

    def _refresh_output(self) -> None:
        process = self.process
        state = f"{process.status_text()} · {format_runtime(process.runtime)}"
        self._title.update(picker_label((f"{process.id}  ", "bold"), (_short(process.command, 100), "$text"),
                                        (f"  ({state})", "$text-muted")))
        process.catch_up()
        if process.ring.total_bytes == self._shown_bytes and state == self._shown_state:
            return
        at_end = self._scroll.scroll_y >= self._scroll.max_scroll_y
        self._shown_bytes, self._shown_state = process.ring.total_bytes, state
        lines = clean(redact(process.ring.tail_text())).splitlines()[-VIEW_LINES:]
        self._body.update("\n".join(lines) or "(no output yet)")
        if at_end:
            self._scroll.scroll_end(animate=False)

    def action_close(self) -> None:
        """Close the view (the command keeps running)."""
        self.dismiss(False)

    def action_kill(self) -> None:
        """End the command (the caller kills it once the view is closed)."""
        self.dismiss(self.process.running)


def _short(command: str, limit: int) -> str:
    text = " ".join(clean(command).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""The status bar (cwd, model, thinking, tokens, cache, cost, context use), the startup header,
and the activity line with queued messages above the editor."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from baton.providers.bounded_read import read_regular
from baton.providers.paths import baton_home_display
from baton.tui.app.render import clean, format_cost, format_duration, format_tokens, one_line, safe, short_path

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions import CodingSession

DEMO_PROVIDER = "demo"
KEY_HINTS = (
    "Enter send · Shift+Enter/Ctrl+J newline · Esc abort · Ctrl+L model · Ctrl+P next model · "
    "Shift+Tab mode (plan) · Ctrl+R thinking · Ctrl+T show thinking · Ctrl+O expand tools · /hotkeys"
)


def is_demo(model: Model | None) -> bool:
    """True for the built-in offline demo model."""
    return model is not None and model.provider == DEMO_PROVIDER


def git_branch(cwd: Path) -> str | None:
    """The checked-out branch of the repository containing ``cwd`` (read from .git/HEAD)."""
    for directory in (cwd, *cwd.parents):
        head = directory / ".git" / "HEAD"
        try:
            # a repository's HEAD may be a FIFO or /dev/zero: read a regular file's first bytes only
            text = read_regular(head, 4096, truncate=True).decode("utf-8", "replace").strip()
        except OSError:
            if (directory / ".git").exists():
                return None
            continue
        if text.startswith("ref: refs/heads/"):
            return clean(text[len("ref: refs/heads/") :])
        return clean(text[:8])
    return None


class StillLines(Widget):
    """A widget whose frames repeat its last lines while nothing about it changed.

    The spinner above the editor ticks five times a second while the agent works, and Textual
    then asks every widget of the bottom area for its lines, repainted or not: for one that
    changed nothing (the status bar, the activity bar's padding) that costs as much as the tick.
    Anything that changes what such a widget shows (its content, its size, its styles or the
    theme, a selection over it) goes through :meth:`refresh` or :meth:`notify_style_update`,
    which forget the lines kept.
    """

    _still: tuple[object, list[Strip]] | None = None

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> Self:
        self._still = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def notify_style_update(self) -> None:
        self._still = None
        super().notify_style_update()

    def render_lines(self, crop: Region) -> list[Strip]:
        key = (crop, self.size, self.app.theme, tuple(self.app._filters))
        still = self._still
        if still is not None and still[0] == key:
            return still[1]
        lines = super().render_lines(crop)
        self._still = (key, lines)
        return lines


@dataclass
class StatusInfo:
    """What the status bar shows."""

    cwd: str = ""
    branch: str | None = None
    session_name: str | None = None
    model: str = ""
    demo: bool = False
    reasoning: bool = False
    thinking: str = "off"
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_percent: float | None = None
    context_window: int | None = None
    approval: str = ""
    """``auto · sandbox``, ``full · no sandbox``, ... (empty: no permission policy)."""
    mcp: str = ""
    """MCP servers, e.g. ``MCP 2/3 ✗ db`` (empty without servers)."""
    background: int = 0
    """Background commands running (``/ps`` lists them)."""


class StatusBar(StillLines):
    """Two lines at the bottom: where and with what model; what it has cost so far."""

    DEFAULT_CSS = """
    StatusBar { height: 2; padding: 0 1; color: $text-muted; background: $panel; }
    """

    auto_links = False  # no clickable links: its frames skip Textual's link-styling pass

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.info = StatusInfo()

    def set_info(self, info: StatusInfo) -> None:
        """Show ``info`` (no repaint when nothing changed)."""
        if info == self.info:
            return
        self.info = info
        self.refresh()

    def render(self) -> Content:
        info = self.info
        width = max(self.size.width - 2, min(self.size.width, 20))  # size: the content area
        where = Content.assemble((info.cwd, "$text"), (f" ({info.branch})" if info.branch else "", "$text-muted"))
        if info.session_name:
            where = Content.assemble(where, (" · ", "$text-muted"), safe(info.session_name, "$text-accent"))
        if info.demo:
            model = Content.styled(f"{info.model} · offline demo model (no API key)", "bold $text-warning")
        else:
            model = Content.styled(info.model, "$text-accent")
        thinking = (
            Content.assemble((" · thinking ", "$text-muted"), (info.thinking, "$text"))
            if info.reasoning else Content("")
        )
        right1 = Content.assemble(model, thinking)
        line1 = _spread(where, right1, width)

        usage = [f"↑{format_tokens(info.tokens_in)}", f"↓{format_tokens(info.tokens_out)}"]
        prompt = info.tokens_in + info.cache_read + info.cache_write
        if info.cache_read or info.cache_write:
            usage.append(f"cache {info.cache_read / prompt:.0%}" if prompt else "cache 0%")
        usage.append(format_cost(info.cost))
        left2 = Content.styled("  ".join(usage), "$text-muted")
        if info.approval:
            style = "bold $text-error" if info.approval.startswith("full") else "bold $text-accent" \
                if info.approval.startswith("plan") else ("$text-warning" if "no sandbox" in info.approval
                                                          else "$text-muted")
            left2 = Content.assemble(left2, ("  ·  ", "$text-muted"), (info.approval, style))
        if info.mcp:
            style = "$text-error" if "✗" in info.mcp else "$text-muted"
            left2 = Content.assemble(left2, ("  ", "$text-muted"), (info.mcp, style))
        if info.background:
            running = f"{info.background} in background (/ps)"
            left2 = Content.assemble(left2, ("  ·  ", "$text-muted"), (running, "$text"))
        if info.context_percent is not None:
            pct = info.context_percent
            style = "$text-success" if pct < 50 else "$text-warning" if pct < 80 else "bold $text-error"
            window = f" of {format_tokens(info.context_window)}" if info.context_window else ""
            right2 = Content.assemble(("context ", "$text-muted"), (f"{pct:.0f}%", style), (window, "$text-muted"))
        else:
            right2 = Content("")
        line2 = _spread(left2, right2, width)
        return Content.assemble(line1, "\n", line2)


def _spread(left: Content, right: Content, width: int) -> Content:
    """``left`` and ``right`` on one line of ``width`` cells: the left part is shortened first
    (down to 8 cells), then the right one — a line that wrapped would push the footer's second
    line out of its two rows."""
    gap = width - left.cell_length - right.cell_length
    if gap < 1:
        room = max(width - right.cell_length - 2, 8)
        left = left.truncate(room, ellipsis=True)
        if left.cell_length + 2 + right.cell_length > width:
            right = right.truncate(max(width - left.cell_length - 2, 1), ellipsis=True)
        gap = max(width - left.cell_length - right.cell_length, 1)
    return Content.assemble(left, " " * gap, right)


def status_from_session(session: CodingSession, *, branch: str | None) -> StatusInfo:
    """Gather the status of a ``CodingSession``."""
    model = session.model
    info = StatusInfo(
        cwd=short_path(session.cwd),
        branch=branch,
        session_name=session.session_name,
        model=model.ref,
        demo=is_demo(model),
        reasoning=model.reasoning,
        thinking=str(session.thinking_level),
    )
    stats = session.stats()
    info.tokens_in = stats.input_tokens
    info.tokens_out = stats.output_tokens
    info.cache_read = stats.cache_read_tokens
    info.cache_write = stats.cache_write_tokens
    info.cost = stats.cost
    usage = session.context_usage()
    info.context_percent = usage.percent
    info.context_window = usage.context_window
    if session.permissions is not None:
        info.approval = session.permissions.status_line()
    info.mcp = session.mcp.summary()
    info.background = len(session.background.registry.running())
    return info


class StartupHeader(Static):
    """The first transcript entry: version, model, loaded context files, key shortcuts."""

    DEFAULT_CSS = """
    StartupHeader { height: auto; padding: 0 1; margin: 0 0 0 0; color: $text-muted; }
    StartupHeader.-starting { height: 1fr; padding: 0 2; }
    """

    def __init__(
        self, *, version: str, model: Model | None, cwd: Path, context_files: Sequence[Path | str] = (),
        starting: bool = False,
    ) -> None:
        content = startup_header_content(version=version, model=model, cwd=cwd, context_files=context_files,
                                         starting=starting)
        super().__init__(content, markup=False, classes="-starting" if starting else "")


def startup_header_content(
    *, version: str, model: Model | None, cwd: Path, context_files: Sequence[Path | str] = (), starting: bool = False,
) -> Content:
    """What the startup header says (the first transcript entry, and the first frame's text)."""
    lines: list[Content] = [
        Content.assemble(("baton ", "bold $text-accent"), (version, "$text-muted"),
                         (" · a terminal coding agent", "$text-muted")),
    ]
    if starting:  # the first frame, before the session is open: type away meanwhile
        return Content("\n").join([*lines, Content.styled(KEY_HINTS, "$text-muted")])
    if is_demo(model):
        lines.append(Content.styled(
            "⚠ Offline demo model: no API key or configured model was found, so the replies are "
            "canned. Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY (or add "
            f"{baton_home_display()}/models.json), then pick a model with /model.",
            "$text-warning",
        ))
    files = [short_path(str(f), cwd) for f in context_files]
    if files:
        lines.append(Content.assemble(("context: ", "$text-muted"), safe(", ".join(files), "$text")))
    lines.append(Content.styled(KEY_HINTS, "$text-muted"))
    return Content("\n").join(lines)


class _ActivityLine(Widget):
    """One line repainted in place (no layout pass): the spinner ticks cheaply."""

    DEFAULT_CSS = "_ActivityLine { height: 1; }"

    auto_links = False  # no clickable links: each tick of the spinner skips Textual's link styling

    def __init__(self, classes: str) -> None:
        super().__init__(classes=classes)
        self.content = Content("")

    def set(self, content: Content) -> None:
        self.content = content
        self.refresh()

    def render(self) -> Content:
        return self.content


class ActivityBar(StillLines):
    """Above the editor: a spinner while a run is active, and the queued messages."""

    DEFAULT_CSS = """
    ActivityBar { height: auto; padding: 0 1; }
    ActivityBar > .activity { height: 1; color: $text-accent; display: none; }
    ActivityBar.-running > .activity { display: block; }
    ActivityBar > .queued { height: auto; color: $text-muted; display: none; }
    ActivityBar.-queued > .queued { display: block; }
    """

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._activity = _ActivityLine(classes="activity")
        self._queued = Static("", markup=False, classes="queued")
        self._started = 0.0
        self._label = "Working"
        self._frame = 0
        self._last_tick = 0.0
        self._timer: Timer | None = None
        self.queue: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        yield self._activity
        yield self._queued

    def start(self, label: str = "Working") -> None:
        """Show the spinner."""
        self._label = label
        if not self.has_class("-running"):
            self._started = time.monotonic()
        self.add_class("-running")
        if self._timer is None:
            self._timer = self.set_interval(0.5, self.tick, name="activity")
        else:
            self._timer.resume()
        self.tick()

    def stop(self) -> None:
        """Hide the spinner."""
        self.remove_class("-running")
        if self._timer is not None:
            self._timer.pause()

    def tick(self) -> None:
        """Advance the spinner (at most every 0.2 s). The transcript calls this from its flush, so
        while text streams the spinner shares the flush's frame; a slow timer covers the rest."""
        if not self.has_class("-running"):
            return
        now = time.monotonic()
        if now - self._last_tick < 0.19:
            return
        self._last_tick = now
        self._frame = (self._frame + 1) % len(self.FRAMES)
        seconds = time.monotonic() - self._started
        elapsed = f"{int(seconds)}s" if seconds < 60 else format_duration(seconds)
        # While the agent works, say how to talk to it (Tab: terminals without the kitty
        # keyboard protocol deliver Alt+Enter as a plain Enter).
        keys = " · Enter steers · Tab queues a follow-up" if self._label == "Working" else ""
        self._activity.set(Content.assemble(
            (self.FRAMES[self._frame] + " ", "bold"), (f"{self._label}… ", "bold"),
            (f"{elapsed} · Esc to abort{keys}", "$text-muted"),
        ))

    def set_queue(self, queue: Sequence[tuple[str, str]]) -> None:
        """Show queued messages: ``(kind, text)`` with kind ``steer`` or ``follow-up``, in the
        order they will be delivered (steering messages before follow-ups)."""
        self.queue = sorted(queue, key=lambda item: item[0] != "steer")
        self.set_class(bool(self.queue), "-queued")
        if not self.queue:
            return
        lines = [
            Content.assemble((f"↳ {kind}: ", "bold $text-accent"), one_line(text, 200),
                             (_more_lines(text), "$text-muted"))
            for kind, text in self.queue
        ]
        lines.append(Content.styled("Alt+Up to edit the queued messages", "$text-muted"))
        self._queued.update(Content("\n").join(lines))


def _more_lines(text: str) -> str:
    """`` (+N lines)`` when a queued message has more lines than the one shown."""
    extra = len(text.strip().splitlines()) - 1
    return f" (+{extra} line{'s' if extra > 1 else ''})" if extra > 0 else ""

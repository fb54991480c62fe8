"""A subagent (a ``task`` call) in the transcript: one live box, and its own transcript inside.

Collapsed, the box says what the subagent is doing — its call's header, then agent, model,
current tool, turns, tokens and elapsed time (from the call's progress updates, the clock ticking
at every flush) — and its answer once it has one. Ctrl+O (the transcript's ``expand_tools``, the
key that expands every tool's output) opens the box onto the subagent's transcript, drawn by the
same views as the main flow (``messages.py``, ``tool_call.py``) at the box's inner width:

- live, from the subagent's events the session forwards under the call's id
  (:class:`~sessions.events.SubagentEvent`, routed here by the transcript);
- afterwards (a rebuilt transcript, ``baton -c``), from the child session file the result's
  details link, read by the transcript in a worker through :mod:`sessions.subagent_files` (which
  refuses any file but the one baton wrote for that call).

Bounded: a log keeps only its last :data:`LOG_ENTRIES` entries (the note above them says how many
came before and where the whole transcript is), so a subagent with 500 tool calls costs the box
as much as one with 30. Several subagents of one reply sit side by side
(:func:`subagent_rows`) while each box gets at least :data:`MIN_BOX_WIDTH` columns, else stacked.
Every string in the box is cleaned text (:func:`~tui.app.render.clean`), never markup.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip

from baton.agent.events import (
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from baton.providers.messages import AssistantMessage, ToolResultMessage
from baton.tui.app.render import format_duration, format_tokens, one_line
from baton.tui.app.widgets.paint import RenderContext, stack
from baton.tui.app.widgets.tool_call import ToolCallView, output_lines

if TYPE_CHECKING:
    from pathlib import Path

    from baton.agent.messages import AgentMessage
    from baton.tui.app.widgets.transcript_entries import Entry

logger = logging.getLogger(__name__)

LOG_ENTRIES = 30
"""Entries of a subagent's transcript kept and drawn in its box (the latest ones)."""
MIN_BOX_WIDTH = 40
"""Columns a box needs to be readable; narrower than that, parallel boxes stack."""
ROW_GAP = 1
"""Columns between boxes side by side."""

_BORDERS = {"running": "accent", "error": "text-error"}


def _text(details: object, key: str) -> str:
    value = details.get(key) if isinstance(details, Mapping) else None
    return value if isinstance(value, str) else ""


def _number(details: object, key: str) -> int:
    value = details.get(key) if isinstance(details, Mapping) else None
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _tokens(details: object) -> int:
    usage = details.get("usage") if isinstance(details, Mapping) else None
    return sum(_number(usage, key) for key in ("input", "output", "cacheRead", "cacheWrite"))


class SubagentLog:
    """A subagent's transcript as its box shows it: its last :data:`LOG_ENTRIES` entries, each
    with the view the main flow would draw it with."""

    def __init__(self, *, path: str | None = None, error: str | None = None) -> None:
        self.entries: list[Entry] = []
        self.dropped = 0
        """Entries before the kept ones (not drawn; the child file has them)."""
        self.path = path
        self.error = error
        self.version = 0
        self._owner: dict[str, Entry] = {}
        self._running: dict[ToolCallView, None] = {}
        self._drawn: list[Strip] = []
        self._drawn_key: object = None

    @classmethod
    def from_messages(cls, messages: Sequence[AgentMessage], path: Path | str | None) -> SubagentLog:
        """The log of a finished subagent (its child session file's messages)."""
        from baton.tui.app.widgets.transcript_entries import entries_for

        log = cls(path=str(path) if path is not None else None)
        entries = entries_for(messages)
        log.dropped = max(len(entries) - LOG_ENTRIES, 0)
        for entry in entries[log.dropped :]:
            log._keep(entry)
        return log

    # -- live events -------------------------------------------------------------------------------

    def handle(self, event: AgentEvent) -> None:
        """Apply one of the subagent's events (the session forwards all but streamed deltas)."""
        match event:
            case MessageStartEvent(message=message) if not isinstance(message, AssistantMessage | ToolResultMessage):
                from baton.tui.app.widgets.transcript_entries import entries_for

                for entry in entries_for([message]):
                    self._add(entry)
            case MessageEndEvent(message=AssistantMessage() as message):
                from baton.tui.app.widgets.transcript_entries import Entry

                self._add(Entry("assistant", message))
            case MessageEndEvent(message=ToolResultMessage() as message):
                owner = self._owner.get(message.tool_call_id)
                if owner is None:
                    from baton.tui.app.widgets.transcript_entries import Entry

                    self._add(Entry("tool_result", message))
                else:
                    owner.results[message.tool_call_id] = message
                    if (view := self.tool_view(message.tool_call_id)) is not None:
                        view.set_result(message.content, message.details, is_error=message.is_error, render=False)
                        self._running[view] = None
            case ToolExecutionStartEvent():
                if (view := self.tool_view(event.tool_call_id)) is not None:
                    view.set_running(event.args)
                    self._running[view] = None
            case ToolExecutionUpdateEvent():
                if (view := self.tool_view(event.tool_call_id)) is not None:
                    view.set_partial(event.partial_result.content, event.partial_result.details)
            case ToolExecutionEndEvent():
                if (view := self.tool_view(event.tool_call_id)) is not None:
                    result = event.result
                    view.set_result(result.content, result.details, is_error=event.is_error, render=False)

    def tool_view(self, tool_call_id: str) -> ToolCallView | None:
        """The view of one of the subagent's tool calls (None once its entry was dropped)."""
        from baton.tui.app.widgets.messages import AssistantMessageView

        owner = self._owner.get(tool_call_id)
        if owner is not None and isinstance(owner.view, AssistantMessageView):
            return owner.view.tool_view(tool_call_id)
        return None

    def find(self, tool_call_id: str) -> ToolCallView | None:
        """One of the subagent's tool calls, or one of its own subagents' (at any depth)."""
        view = self.tool_view(tool_call_id)
        if view is not None:
            return view
        for running in list(self._running):
            if isinstance(running, SubagentView) and running.log is not None:
                found = running.log.find(tool_call_id)
                if found is not None:
                    return found
        return None

    @property
    def waiting(self) -> bool:
        """One of the subagent's calls (or its subagents') waits for the user's approval."""
        return any(view.waiting or (isinstance(view, SubagentView) and view.log is not None and view.log.waiting)
                   for view in self._running)

    def _add(self, entry: Entry) -> None:
        self._keep(entry)
        while len(self.entries) > LOG_ENTRIES:
            old = self.entries.pop(0)
            self.dropped += 1
            for call_id in [k for k, v in self._owner.items() if v is old]:
                del self._owner[call_id]
            self._running = {v: None for v in self._running if v.tool_call_id in self._owner}
        self.version += 1

    def _keep(self, entry: Entry) -> None:
        from baton.tui.app.widgets.transcript_entries import build_view

        entry.view = build_view(entry, None)
        self.entries.append(entry)
        if isinstance(entry.message, AssistantMessage):
            self._owner.update((call.id, entry) for call in entry.message.tool_calls)

    def flush(self) -> None:
        """Render what the running tool calls buffered (and tick their clocks)."""
        for view in list(self._running):
            view.flush()
            if view.state in ("done", "error", "skipped"):
                del self._running[view]

    # -- drawing -------------------------------------------------------------------------------------

    @property
    def current_version(self) -> tuple[object, ...]:
        """Changes when an entry is added or any kept entry changes."""
        return (self.version, *(entry.view.current_version for entry in self.entries if entry.view is not None))

    def render(self, ctx: RenderContext) -> list[Strip]:
        """The kept entries, one after the other, under a note on the ones left out (the same
        list, the same strips, while nothing changed: the box frames each strip once)."""
        key = (ctx.key, ctx.width, self.current_version, self.error)
        if key != self._drawn_key:
            self._drawn = self._render(ctx)
            self._drawn_key = key
        return self._drawn

    def _render(self, ctx: RenderContext) -> list[Strip]:
        if self.error is not None:
            return ctx.content(Content.styled(f"⚠ {one_line(self.error, 400)}", "$text-error"))
        parts: list[list[Strip]] = []
        if self.dropped:
            where = f" · all of it: baton --session {one_line(self.path, 400)}" if self.path else ""
            noun = "entry" if self.dropped == 1 else "entries"
            parts.append(ctx.content(Content.styled(f"↑ {self.dropped} earlier {noun} not shown{where}",
                                                    "$text-muted")))
        try:
            parts.extend(entry.view.strips(ctx) for entry in self.entries if entry.view is not None)
        except Exception as exc:  # a child file is data: what it holds must not take the app down
            logger.warning("a subagent's transcript could not be drawn", exc_info=True)
            why = f"⚠ The subagent's transcript cannot be shown: {one_line(str(exc), 300)}"
            return ctx.content(Content.styled(why, "$text-error"))
        if not parts:
            return ctx.content(Content.styled("(nothing yet)", "$text-muted"))
        return stack(parts)


class SubagentView(ToolCallView):
    """A ``task`` call drawn as a box (see the module docstring)."""

    log: SubagentLog | None = None
    """The subagent's transcript: live, or read back from its child file (None: not yet)."""
    loading = False
    """The child file is being read (by the transcript's worker)."""

    # -- state -----------------------------------------------------------------------------------------

    @property
    def details(self) -> object:
        """The call's latest details (its progress while it runs, its result's afterwards)."""
        return self._details

    @property
    def session_file(self) -> str:
        """The child session file the details link ("" when none)."""
        return _text(self._details, "sessionFile")

    @property
    def session_id(self) -> str:
        """The child session's id the details name."""
        return _text(self._details, "sessionId")

    def on_subagent_event(self, event: AgentEvent) -> None:
        """One of the subagent's own events (live)."""
        if self.log is None:
            self.log = SubagentLog()
        self.log.path = self.log.path or self.session_file or None  # named by the first progress update
        self.log.handle(event)
        self._dirty = True

    def set_log(self, log: SubagentLog) -> None:
        """The transcript read back from the child file (or why it could not be)."""
        self.log = log
        self.loading = False
        self.changed()

    def flush(self) -> None:
        if self.log is not None:
            self.log.flush()
        super().flush()

    @property
    def current_version(self) -> tuple[object, ...]:
        return (self.version, self.log.current_version if self.log is not None else None)

    # -- drawing ---------------------------------------------------------------------------------------

    _style: tuple[object, RichStyle] | None = None
    _frames: dict[int, tuple[Strip, Strip]] | None = None
    """Framed lines by the id of the line they frame (with it, to tell a reused id)."""
    _frames_key: object = None

    def border_style(self, ctx: RenderContext) -> RichStyle:
        """The box's frame colour (by the call's state)."""
        key = (ctx.theme, self.state)
        if self._style is None or self._style[0] != key:
            self._style = (key, RichStyle.parse(ctx.color(_BORDERS.get(self.state, "text-muted"))))
        return self._style[1]

    def progress_line(self) -> Content | None:
        """``scout on openai/gpt-5 · running bash · 3 turns · 12.3k tokens · 14s`` (None for a
        call that ended before its subagent started: an unknown agent, a model without a key)."""
        details = self._details
        agent, model = _text(details, "agent"), _text(details, "model")
        if not agent:
            return Content.styled("starting…", "$text-muted") if self.state == "running" else None
        parts = [f"{one_line(agent, 60)} on {one_line(model, 80)}" if model else one_line(agent, 60)]
        tool = _text(details, "currentTool")
        if self.state == "running" and self.log is not None and self.log.waiting:
            parts.append("waiting for your approval")
        elif tool and self.state == "running":
            parts.append(f"running {one_line(tool, 60)}")
        turns = _number(details, "turns")
        parts.append(f"{turns} turn{'s' if turns != 1 else ''}")
        parts.append(f"{format_tokens(_tokens(details))} tokens")
        if self.state == "running" and self._started is not None:
            parts.append(format_duration(time.monotonic() - self._started))
        elif "elapsedMs" in (details if isinstance(details, Mapping) else {}):
            parts.append(format_duration(_number(details, "elapsedMs") / 1000))
        status = _text(details, "status")
        if status in ("aborted", "error"):
            parts.append(status)
        return Content.styled(" · ".join(part for part in parts if part), "$text-muted")

    def render(self, ctx: RenderContext) -> list[Strip]:
        return self.boxed(ctx)

    def boxed(self, ctx: RenderContext, height: int = 0) -> list[Strip]:
        """The box at ``ctx.width`` columns, at least ``height`` lines tall."""
        width = max(ctx.width, 6)
        inner = replace(ctx, width=width - 4)
        lines = self._inside(inner)
        style = self.border_style(ctx)
        out = [Strip([Segment("╭" + "─" * (width - 2) + "╮", style)], width)]
        blank = Strip.blank(width - 4)
        lines += [blank] * max(height - 2 - len(lines), 0)
        # A running box is drawn again at every tick (its clock) and every event: the lines of
        # its transcript it framed before are reused, not framed again.
        key = (width, style)
        old = self._frames if self._frames is not None and self._frames_key == key else {}
        frames: dict[int, tuple[Strip, Strip]] = {}
        for line in lines:
            framed = old.get(id(line))
            if framed is None or framed[0] is not line:
                body = line.crop_extend(0, width - 4, None)
                framed = (line, Strip([Segment("│ ", style), *body, Segment(" │", style)], width))
            frames[id(line)] = framed
            out.append(framed[1])
        self._frames, self._frames_key = frames, key
        out.append(Strip([Segment("╰" + "─" * (width - 2) + "╯", style)], width))
        return out

    def _inside(self, ctx: RenderContext) -> list[Strip]:
        self._parts()
        progress = self.progress_line()
        lines = ctx.content(self._header) + (ctx.content(progress) if progress is not None else [])
        finished = self.state in ("done", "error", "skipped")
        if ctx.expand_tools:
            body = self._transcript(ctx)
            if body:
                return stack([lines, body])
        rendered = self._rendered
        if finished and rendered is not None and rendered.preview:
            lines += output_lines(ctx, rendered, style="$text-error" if self.state == "error" else "")
        if not ctx.expand_tools and (self.log is not None or self.session_file):
            lines += ctx.content(Content.styled("Ctrl+O: the subagent's transcript", "$text-muted"))
        return lines

    def _transcript(self, ctx: RenderContext) -> list[Strip]:
        """The subagent's own transcript (asking for the child file when there is no live log)."""
        if self.log is not None:
            return self.log.render(ctx)
        if self.state not in ("done", "error"):
            return []
        if not self.session_file:
            note = "(this subagent's transcript was not kept: the session is not saved)"
            return ctx.content(Content.styled(note, "$text-muted"))
        if not self.loading and ctx.load_subagent is not None:
            self.loading = True
            ctx.load_subagent(self)
        return ctx.content(Content.styled("loading the subagent's transcript…", "$text-muted"))


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a box was drawn in its rows' lines."""

    view: SubagentView
    region: Region


def subagent_rows(ctx: RenderContext, views: Sequence[SubagentView]) -> tuple[list[Strip], list[Placed]]:
    """Consecutive subagent boxes side by side, as many to a row as get :data:`MIN_BOX_WIDTH`
    columns each (one to a row: stacked), and where each box went."""
    per_row = max(1, min(len(views), (ctx.width + ROW_GAP) // (MIN_BOX_WIDTH + ROW_GAP)))
    lines: list[Strip] = []
    placed: list[Placed] = []
    for start in range(0, len(views), per_row):
        row = views[start : start + per_row]
        if lines:
            lines.append(Strip.blank(0))
        top = len(lines)
        if len(row) == 1:
            strips = row[0].strips(ctx)
            placed.append(Placed(row[0], Region(0, top, ctx.width, len(strips))))
            lines.extend(strips)
            continue
        room = ctx.width - ROW_GAP * (len(row) - 1)
        widths = [room // len(row) + (1 if i < room % len(row) else 0) for i in range(len(row))]
        boxes = [view.strips(replace(ctx, width=w)) for view, w in zip(row, widths, strict=True)]
        height = max(len(box) for box in boxes)
        boxes = [box if len(box) == height else view.boxed(replace(ctx, width=w), height)
                 for box, view, w in zip(boxes, row, widths, strict=True)]
        x = 0
        for view, w in zip(row, widths, strict=True):
            placed.append(Placed(view, Region(x, top, w, height)))
            x += w + ROW_GAP
        gap = Strip([Segment(" " * ROW_GAP)], ROW_GAP)
        for y in range(height):
            parts: list[Strip] = []
            for index, (box, w) in enumerate(zip(boxes, widths, strict=True)):
                if index:
                    parts.append(gap)
                parts.append(box[y].crop_extend(0, w, None))
            lines.append(Strip.join(parts))
    return lines, placed


def tool_call_view(tool_call_id: str, name: str, args: Mapping[str, object] | None = None, *,
                   cwd: Path | None = None, streaming: bool = False) -> ToolCallView:
    """The view of a tool call: a box for a tool that delegates to a subagent, else the usual one."""
    from baton.tools import tool_type

    kind = SubagentView if tool_type(name).delegates else ToolCallView
    return kind(tool_call_id, name, args, cwd=cwd, streaming=streaming)  # type: ignore[arg-type]

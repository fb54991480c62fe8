"""The scrolling transcript: entries built from agent messages, streamed live, drawn as lines.

Entries are data plus a view (``messages.py``, ``tool_call.py``) that renders itself to strips for
a width and caches them; the transcript is one line-based widget that shows the strips of its
entries one after the other and draws only the rows on screen. A finished message therefore
costs a frame nothing but the copy of its visible rows: no widget, no layout pass, no restyle
(pi's terminal UI works the same way). When something changes, only the lines from the first
changed entry on are rebuilt — for streaming, the last entry.

Agent events arrive through :meth:`Transcript.handle_event` (synchronously, from the session's
subscriber) and are buffered by the views; a ~10 Hz flush takes them in and repaints once, so a
turn costs a couple of frames however many events it streams. A subagent's events
(``SubagentEvent``) go to the box of the ``task`` call that runs it (``subagent_box.py``).

Windowing: while following, only the entries of the last ``LIVE_SCREENS`` screens of lines (at
most ``MAX_LIVE + PAGE`` entries) have views; scrolling to the top renders the previous ``PAGE``
entries, and resuming a long session renders only its last screens.
"""

from __future__ import annotations

import contextlib
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.color import Color
from textual.content import Content
from textual.geometry import Offset, Region, Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip
from textual.timer import Timer

from baton.agent.events import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from baton.agent.messages import AgentMessage, BashExecutionMessage
from baton.providers.messages import AssistantMessage, ToolResultMessage, UserMessage
from baton.sessions.events import AnySessionEvent, SubagentEvent
from baton.tui.app.widgets.messages import AssistantMessageView, BashExecutionView, HeaderView, NoticeLevel
from baton.tui.app.widgets.paint import RenderContext, View
from baton.tui.app.widgets.subagent_box import SubagentLog, SubagentView
from baton.tui.app.widgets.tool_call import ToolCallView
from baton.tui.app.widgets.transcript_entries import Entry, build_view, entries_for

__all__ = ["FLUSH_INTERVAL", "Entry", "Transcript", "ViewFlag"]

V = TypeVar("V", bound=View)
ViewFlag = Literal["-show-thinking", "-expand-tools"]

_THUMB = "┃"
_TRACK = " "

FLUSH_INTERVAL = 0.1
"""Seconds between renders of streamed text (<= 10 Hz)."""


@dataclass(slots=True)
class _DrawnRow:
    """A line as drawn, with the scroll bar's track or thumb after it: valid while the line's
    strip is the same object (``source``) or an equal one, and the width the same."""

    source: Strip | None
    width: int
    on_track: Strip | None = None
    on_thumb: Strip | None = None
    drawn: Strip | None = None
    """The line without the bar: the thumb moves as the conversation grows, and a row changing
    from track to thumb needs only a new bar cell."""


class Transcript(ScrollView, can_focus=False):
    """The conversation. See the module docstring."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; scrollbar-size-vertical: 0; overflow-x: hidden; }
    """

    auto_links = False
    """The entries' text has no clickable (``@click``) links, so rendering it skips Textual's
    link-styling pass (a third of the cost of a one-line entry)."""

    MAX_LIVE = 150
    """Entries kept rendered while following the conversation (at most; see ``LIVE_SCREENS``)."""
    LIVE_SCREENS = 3
    """While following, the rendered entries are cut back to the last ``LIVE_SCREENS`` screens of
    lines once they fill a screen more: a rendered entry keeps its strips (~40 kB for a short
    reply with a tool call), so 150 of them held 6 MB, growing with every turn for the first 150.
    The entries above are rendered again, the same, when scrolled back to."""
    PAGE = 25
    """Entries rendered at a time when scrolling up (and the slack before the oldest are dropped);
    more pages at once while the rendered entries fill less than ``FILL_SCREENS`` screens."""
    FILL_SCREENS = 2
    ROW_CACHE_SCREENS = 3
    """Drawn rows are kept for this many screens around the one shown (the screen, one above and
    one below); rows further off are dropped once there are a screen more, and drawn again, the
    same, when scrolled back to. Unbounded, every row ever shown stayed (~35 kB a turn)."""

    def __init__(self, *, cwd: Path | None = None, header: Callable[[], Content] | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.entries: list[Entry] = []
        self._first = 0
        self._header_factory = header
        self._live: AssistantMessageView | None = None
        self._live_entry: Entry | None = None
        self._watched: dict[View, Entry] = {}
        """Views with buffered updates (running tools, ``!cmd`` output) flushed on each tick."""
        self._call_owner: dict[str, Entry] = {}
        self._timer: Timer | None = None
        self.text_only_model: Callable[[], str | None] = lambda: None
        """The current model's ``provider/id`` when it reads no images (set by the app)."""
        self._ticking = False
        self._in_flush: list[Callable[[], None]] = []
        self.on_flush: Callable[[], None] | None = None
        """Called inside every flush's frame (the app ticks its spinner there)."""
        self._lines: list[Strip] = []
        self._starts: list[int] = []
        """First line (its top margin included) of each rendered entry, from ``_first`` on."""
        self._stale_from: int | None = 0
        """Index (into ``entries``) of the first entry whose lines must be rebuilt (structure)."""
        self._changed: dict[int, Entry] = {}
        """Entries whose view said it changed since the last layout (by ``id``): a frame lays out
        again from the first of them without asking every entry of the window."""
        self._ctx: RenderContext | None = None
        self._theme = 0
        self._show_thinking = False
        self._expand_tools = False
        self._following = True
        self._line_cache: dict[int, _DrawnRow] = {}
        """Drawn rows by line index."""
        self._scroll_bar_style: RichStyle | None = None
        self._line_style: RichStyle | None = None
        """The widget's style, looked up once per frame (it walks the DOM): see :meth:`render_lines`."""
        self._line_background: Color | None = None
        """The background the app's line filters blend over, looked up once per frame too."""
        self._loading_earlier = False
        self.subagent_roots: Callable[[], list[Path]] = lambda: []
        """The folders a subagent's child session file may be read from (set by the app)."""

    def on_mount(self) -> None:
        super().on_mount()
        if self._header_factory is not None and not self.entries:
            header = self._header_factory
            self.add_entry(Entry("header", factory=lambda: HeaderView(header())))
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.render_again())

    # -- state -----------------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom (the user has not scrolled up)."""
        return self._following or self.virtual_size.height <= self.size.height

    @property
    def first_mounted(self) -> int:
        """Index of the first entry with a view (the window's start)."""
        return self._first

    @property
    def mounted_views(self) -> list[View]:
        """Views of the entries in the window, in order."""
        return [e.view for e in self.entries[self._first :] if e.view is not None]

    def views_of(self, kind: type[V]) -> list[V]:
        """The views of one class in the window, in order (tool calls inside replies included)."""
        out: list[V] = []
        for view in self.mounted_views:
            if isinstance(view, kind):
                out.append(view)
            if isinstance(view, AssistantMessageView) and issubclass(kind, ToolCallView):
                out.extend(call for call in view.tool_views if isinstance(call, kind))
        return out

    @property
    def text(self) -> str:
        """Every laid-out line as plain text (what scrolling through the window would show)."""
        return "\n".join(strip.text.rstrip() for strip in self._lines)

    def last_answer(self) -> str | None:
        """The text of the latest assistant message with text (for ``/copy``)."""
        for entry in reversed(self.entries):
            if entry.kind != "assistant":
                continue
            if isinstance(entry.view, AssistantMessageView) and entry.view is self._live:
                text = entry.view.text
            else:
                text = entry.message.text if isinstance(entry.message, AssistantMessage) else ""
            if text.strip():
                return str(text)
        return None

    # -- building ----------------------------------------------------------------------------------

    def reset(self, messages: Iterable[AgentMessage], *, visible: int | None = None) -> list[Awaitable[None]]:
        """Replace the transcript with ``messages`` at once, rendering only the last ``visible``
        entries (more while they fill less than ``FILL_SCREENS`` screens). Nothing to await: the
        list is empty (kept for callers written when entries were widgets)."""
        self._live = None
        self._live_entry = None
        self._watched.clear()
        self._changed.clear()
        header = [e for e in self.entries[:1] if e.kind == "header"]
        self.entries = list(header)
        self.entries.extend(entries_for(messages))
        self._call_owner = {}
        for entry in self.entries:
            if isinstance(entry.message, AssistantMessage):
                for call in entry.message.tool_calls:
                    self._call_owner[call.id] = entry
        count = self.PAGE if visible is None else visible
        self._first = max(len(self.entries) - count, 0)
        for index, entry in enumerate(self.entries):
            if index >= self._first:
                self._show(entry, build_view(entry, self.cwd))
            else:
                entry.view = None
            entry.laid_out = None
        self._following = True
        self._restructure(0)
        self._line_cache.clear()
        self._fill_window()
        if self.is_attached:
            self._relayout()
        return []

    async def load_history(self, messages: Iterable[AgentMessage], *, visible: int | None = None) -> None:
        """:meth:`reset` (kept async for its callers)."""
        self.reset(messages, visible=visible)

    def add_entry(self, entry: Entry) -> View:
        """Append an entry (shown at the next flush, which is asked for now)."""
        self.entries.append(entry)
        view = self._show(entry, build_view(entry, self.cwd))
        self._restructure(len(self.entries) - 1)
        self._flush_soon()
        return view

    def add_notice(self, content: Content | str, level: NoticeLevel = "info") -> View:
        """Append a notice (model switch, compaction, command output...)."""
        body = content if isinstance(content, Content) else Content(content)
        return self.add_entry(Entry("notice", content=body, level=level))

    def add_notice_before_reply(self, content: Content | str, level: NoticeLevel = "info") -> View:
        """A notice about the reply being requested (a retry): placed above the live reply while
        nothing of it has arrived, so the answer that follows appears below it."""
        live, live_entry = self._live, self._live_entry
        if live is None or live_entry is None or not live.is_empty or live_entry not in self.entries:
            return self.add_notice(content, level)
        body = content if isinstance(content, Content) else Content(content)
        entry = Entry("notice", content=body, level=level)
        index = self.entries.index(live_entry)
        self.entries.insert(index, entry)
        view = self._show(entry, build_view(entry, self.cwd))
        self._restructure(index)
        self._flush_soon()
        return view

    def add_bash(self, command: str, *, exclude_from_context: bool) -> BashExecutionView:
        """Append a live ``!cmd`` run; the caller feeds it output and then its result."""
        view = BashExecutionView(command, exclude_from_context=exclude_from_context)
        entry = Entry("bash", factory=lambda: view)
        self.add_entry(entry)
        self._watched[view] = entry
        self._ensure_timer()
        return view

    def finish_bash(self, view: BashExecutionView, message: BashExecutionMessage) -> None:
        """Record a finished ``!cmd`` run so the entry can be rebuilt after windowing."""
        self._flush_soon()
        for entry in reversed(self.entries):
            if entry.view is view:
                entry.factory = None
                entry.message = message
                break

    # -- live events -------------------------------------------------------------------------------

    def handle_event(self, event: AnySessionEvent) -> None:
        """Apply one agent event (called synchronously by the session's subscriber; the session's
        own events change nothing here)."""
        match event:
            case MessageUpdateEvent():
                live = self._live
                if live is not None:
                    live.on_stream_event(event.assistant_message_event)
            case ToolExecutionUpdateEvent():
                view = self._tool_view(event.tool_call_id)
                if view is not None:
                    result = event.partial_result
                    view.set_partial(result.content, result.details)
            case MessageStartEvent():
                self._on_message_start(event.message)
            case MessageEndEvent():
                self._on_message_end(event.message)
            case ToolExecutionStartEvent():
                view = self._tool_view(event.tool_call_id)
                if view is not None:
                    view.set_running(event.args)
            case ToolExecutionEndEvent():
                view = self._tool_view(event.tool_call_id)
                if view is not None:
                    result = event.result
                    view.set_result(result.content, result.details, is_error=event.is_error, render=False)
            case AgentStartEvent():
                self._ensure_timer()
            case AgentEndEvent():
                self._flush_soon()
            case SubagentEvent():
                box = self._subagent_view(event.tool_call_id)
                if box is not None:
                    box.on_subagent_event(event.event)

    def _on_message_start(self, message: AgentMessage) -> None:
        if isinstance(message, AssistantMessage):
            view = AssistantMessageView(message, cwd=self.cwd, streaming=True)
            entry = Entry("assistant", message)
            self._live, self._live_entry = view, entry
            self.entries.append(entry)
            self._show(entry, view)
            self._restructure(len(self.entries) - 1)
            self._ensure_timer()
            return
        if isinstance(message, ToolResultMessage):
            return
        for entry in entries_for([message]):
            if isinstance(message, UserMessage) and not isinstance(message.content, str) and any(
                block.type == "image" for block in message.content
            ):
                entry.images_not_sent_to = self.text_only_model()
            self.add_entry(entry)

    def _on_message_end(self, message: AgentMessage) -> None:
        if isinstance(message, AssistantMessage):
            live, entry = self._live, self._live_entry
            self._live = self._live_entry = None
            if entry is not None:
                entry.message = message
                for call in message.tool_calls:
                    self._call_owner[call.id] = entry
            if live is not None:
                live.finish(message)
                if entry is not None:
                    for view in live.tool_views:
                        if view.state not in ("done", "error", "skipped"):
                            self._watched[view] = entry
            # Shown by the next tick (<= 0.1 s): a turn's tool call usually starts meanwhile, and
            # one frame then shows both.
            self._ensure_timer()
        elif isinstance(message, ToolResultMessage):
            owner = self._call_owner.get(message.tool_call_id)
            if owner is not None:
                owner.results[message.tool_call_id] = message
                call_view = self._tool_view(message.tool_call_id)
                if call_view is not None:
                    call_view.set_result(message.content, message.details, is_error=message.is_error, render=False)
            else:
                self.add_entry(Entry("tool_result", message))

    def set_waiting_for_approval(self, tool_call_id: str, waiting: bool) -> None:
        """Show the call as waiting for the user's approval (not as running), or no longer."""
        view = self._tool_view(tool_call_id) or self._subagents_tool_view(tool_call_id)
        if view is not None:
            view.set_waiting(waiting)

    def _subagents_tool_view(self, tool_call_id: str) -> ToolCallView | None:
        """A call a running subagent made (at any depth), in its box's log."""
        for watched in list(self._watched):
            if isinstance(watched, SubagentView) and watched.log is not None:
                found = watched.log.find(tool_call_id)
                if found is not None:
                    return found
        return None

    def _subagent_view(self, tool_call_id: str) -> SubagentView | None:
        """The box of the subagent a ``task`` call runs: in the flow, or (a subagent's own
        subagent) in the transcript of a running one."""
        view = self._tool_view(tool_call_id)
        if view is None:
            view = self._subagents_tool_view(tool_call_id)
        return view if isinstance(view, SubagentView) else None

    def _load_subagent(self, view: SubagentView) -> None:
        """Read a finished subagent's transcript from its child file in a worker thread, then
        show it in its box (or the line saying why it cannot be shown)."""
        file, session_id, roots = view.session_file, view.session_id, self.subagent_roots()

        def read() -> None:
            from baton.sessions.subagent_files import read_child_transcript

            try:
                child = read_child_transcript(file, session_id, roots)
                result: tuple[list[AgentMessage], Path] | str = (child.messages, child.path)
            except Exception as exc:  # refused or corrupt: one line in the box, never a crash
                result = f"The subagent's transcript cannot be shown: {exc}"
            with contextlib.suppress(RuntimeError):  # the app is closing
                self.app.call_from_thread(self._subagent_loaded, view, result)

        self.run_worker(read, thread=True, exit_on_error=False, group="subagent-files")

    def _subagent_loaded(self, view: SubagentView, result: tuple[list[AgentMessage], Path] | str) -> None:
        log: SubagentLog | None = None
        if not isinstance(result, str):
            try:
                log = SubagentLog.from_messages(*result)
            except Exception as exc:  # the file's messages are data: never a crash
                result = f"The subagent's transcript cannot be shown: {exc}"
        view.set_log(log if log is not None else SubagentLog(path=view.session_file, error=str(result)))
        self._relayout()

    def subagent_regions(self) -> dict[str, Region]:
        """Where each subagent box in the window is drawn (call id → its columns, counted from
        the transcript's left edge, and its lines, counted from the top of the laid-out lines)."""
        out: dict[str, Region] = {}
        ctx = self._ctx
        for offset, entry in enumerate(self.entries[self._first :]):
            view = entry.view
            if ctx is None or not isinstance(view, AssistantMessageView) or offset >= len(self._starts):
                continue
            end = self._starts[offset + 1] if offset + 1 < len(self._starts) else len(self._lines)
            top = end - len(view.strips(ctx))
            for call_id, region in view.boxes.items():
                out[call_id] = region.translate(Offset(1, top))  # the margin cell each line starts with
        return out

    def _tool_view(self, tool_call_id: str) -> ToolCallView | None:
        live, live_entry = self._live, self._live_entry
        if live is not None and live_entry is not None and (view := live.tool_view(tool_call_id)) is not None:
            self._watched[view] = live_entry
            return view
        owner = self._call_owner.get(tool_call_id)
        if owner is not None and isinstance(owner.view, AssistantMessageView):
            view = owner.view.tool_view(tool_call_id)
            if view is not None:
                self._watched[view] = owner
                self._ensure_timer()
            return view
        return None

    # -- flushing ----------------------------------------------------------------------------------

    def _ensure_timer(self) -> None:
        self._ticking = True
        if self._timer is None:
            self._timer = self.set_interval(FLUSH_INTERVAL, self.flush_now, name="transcript-flush")
        else:
            self._timer.resume()

    def _flush_soon(self) -> None:
        if self.is_attached:
            self.call_later(self.flush_now)

    async def flush_now(self) -> None:
        """Take in everything buffered and repaint once (the periodic flush; also run when an
        entry is added or a message ends)."""
        with self.app.batch_update():
            if self.on_flush is not None:
                self.on_flush()
            callbacks, self._in_flush = self._in_flush, []
            for callback in callbacks:
                callback()
            live = self._live
            if live is not None:
                live.flush()
            for view in list(self._watched):
                if isinstance(view, ToolCallView):
                    view.flush()
                    if view.state in ("done", "error", "skipped"):
                        del self._watched[view]
                elif isinstance(view, BashExecutionView):
                    view.flush()
                    if view.is_done:
                        del self._watched[view]
            self._prune()
            self._relayout()
        if live is None and self._live is None and not self._watched and self._timer is not None:
            self._timer.pause()
            self._ticking = False

    def in_next_flush(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` in the next flush's frame (status updates that can wait up to 0.1 s)."""
        self._in_flush.append(callback)
        self._ensure_timer()

    # -- laying out lines --------------------------------------------------------------------------

    def _show(self, entry: Entry, view: V) -> V:
        """Give ``entry`` its ``view``, which reports its changes to the transcript."""
        entry.view = view
        view.on_change = lambda: self._changed.__setitem__(id(entry), entry)
        return view

    def _restructure(self, index: int) -> None:
        """Entries from ``index`` on were added, removed or replaced: rebuild their lines."""
        if self._stale_from is None or index < self._stale_from:
            self._stale_from = index

    def _render_context(self) -> RenderContext | None:
        width = self.size.width - 3  # a margin cell each side, and the bar
        if width <= 0:
            return None
        ctx = self._ctx
        if ctx is None or ctx.width != width or ctx.theme != self._theme or \
                ctx.show_thinking != self._show_thinking or ctx.expand_tools != self._expand_tools:
            painter = ctx._painter if ctx is not None and ctx.theme == self._theme else None
            ctx = self._ctx = RenderContext(self, width, self._show_thinking, self._expand_tools, self._theme,
                                            _painter=painter, load_subagent=self._load_subagent)
            self._stale_from = 0
        return ctx

    def _relayout(self) -> None:
        """Rebuild the lines of the entries that changed (from the first one on) and repaint."""
        ctx = self._render_context()
        if ctx is None:
            return
        start = self._first_changed()
        if start is None:
            return
        self._stale_from = None
        start = min(start, len(self._starts))
        line = 0 if start == 0 else self._starts[start] if start < len(self._starts) else len(self._lines)
        del self._lines[line:]
        del self._starts[start:]
        if start == 0 and self._first > 0:
            self._lines.extend(_earlier_entries_note(ctx, self.entries, self._first))
        for entry in self.entries[self._first + start :]:
            self._starts.append(len(self._lines))
            self._lines.extend(_entry_lines(ctx, entry, first=not self._lines))
        follow = self.following
        size = Size(self.size.width, len(self._lines) + 1)
        if size != self.virtual_size:
            # Without a layout pass of the screen (``virtual_size`` is a layout reactive): this
            # widget's own size does not change, only its scroll range does. Showing the scroll
            # bar for the first time still lays out (its ``display`` changes).
            self.set_reactive(Transcript.virtual_size, size)
            self._scroll_update(size)
        if follow:
            self._following = True
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)
        self.refresh()

    def _first_changed(self) -> int | None:
        """The window offset of the first entry whose lines must be rebuilt (None: none)."""
        entries, first = self.entries, self._first
        start = None if self._stale_from is None else max(self._stale_from - first, 0)
        changed, self._changed = self._changed, {}
        # The live reply and the running calls change at every frame: asked whatever they said.
        for entry in (self._live_entry, *self._watched.values()):
            if entry is not None and entry.view is not None and entry.laid_out != entry.view.current_version:
                changed[id(entry)] = entry
        # The entries that changed are the last ones, nearly always: looked for from the end.
        index = len(entries)
        while changed and index > first:
            index -= 1
            if changed.pop(id(entries[index]), None) is not None and (start is None or index - first < start):
                start = index - first
        return start

    def render_line(self, y: int) -> Strip:
        return self.render_lines(Region(0, y, self.size.width, 1))[0]

    def render_lines(self, crop: Region) -> list[Strip]:
        # The lines are final (styled, filtered, cached), so Textual's per-line styling pass
        # (padding, borders, tint, filters) is skipped, and the scroll bar is a column drawn
        # here: Textual's scroll bar widget re-renders all its rows whenever the range grows.
        # A frame that scrolls (the conversation grew) mostly finds its rows in the cache.
        width = self.size.width
        body = max(width - 1, 0)
        selection = self.text_selection
        scroll_y = self.scroll_offset.y
        thumb = self._thumb(self.size.height)
        self._line_style = self._line_background = None
        lines = []
        for y in range(crop.y, crop.bottom):
            on_thumb = thumb is not None and thumb[0] <= y < thumb[1]
            line = self._row(scroll_y + y, body, selection, on_thumb)
            if crop.x or crop.right < width:
                line = line.crop_extend(crop.x, crop.right, None)
            lines.append(line)
        self._trim_row_cache(scroll_y, self.size.height)
        return lines

    def _trim_row_cache(self, scroll_y: int, height: int) -> None:
        """Drop the drawn rows more than a screen above or below the one at ``scroll_y``."""
        cache = self._line_cache
        height = max(height, 1)
        if len(cache) <= (self.ROW_CACHE_SCREENS + 1) * height:
            return
        low, high = scroll_y - height, scroll_y + (self.ROW_CACHE_SCREENS - 1) * height
        for index in [i for i in cache if not low <= i < high]:
            del cache[index]

    def _row(self, index: int, body: int, selection: Selection | None, on_thumb: bool) -> Strip:
        if selection is not None:
            bar = Segment(_THUMB if on_thumb else _TRACK, self._bar_style())
            return Strip([*self._line(index, body, selection), bar], body + 1)
        source = self._lines[index] if index < len(self._lines) else None
        cached = self._line_cache.get(index)
        if cached is None or cached.width != body:
            cached = self._line_cache[index] = _DrawnRow(source, body)
        elif cached.source is not source:
            # The entry was rendered again (the live message, each flush): most of its lines
            # come out the same, and drawing one (offsets for selection, styles) is the costly
            # part of a frame, so a line equal to the one drawn keeps its drawn row.
            if cached.source is None or source is None or cached.source != source:
                cached = self._line_cache[index] = _DrawnRow(source, body)
            else:
                cached.source = source
        row = cached.on_thumb if on_thumb else cached.on_track
        if row is None:
            drawn = cached.drawn
            if drawn is None:
                drawn = cached.drawn = self._line(index, body, None)
            bar = Segment(_THUMB if on_thumb else _TRACK, self._bar_style())
            row = Strip([*drawn, bar], body + 1)
            if on_thumb:
                cached.on_thumb = row
            else:
                cached.on_track = row
        return row

    def _thumb(self, height: int) -> tuple[int, int] | None:
        total = self.virtual_size.height
        if total <= height or height <= 0:
            return None
        size = max(1, round(height * height / total))
        span = max(total - height, 1)
        start = round(min(self.scroll_offset.y, span) / span * (height - size))
        return start, start + size

    def _bar_style(self) -> RichStyle:
        style = self._scroll_bar_style
        if style is None:
            ctx = self._render_context()
            color = ctx.color("text-muted") if ctx is not None else "#808080"
            style = self._scroll_bar_style = self.rich_style + RichStyle.parse(color)
        return style

    def _line(self, index: int, width: int, selection: Selection | None) -> Strip:
        style = self._line_style
        if style is None:
            style = self._line_style = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, style)
        strip = self._lines[index]
        if selection is not None and (span := selection.get_span(index)) is not None:
            strip = _highlight(strip, span, self.screen.get_component_rich_style("screen--selection"))
        line = Strip([Segment(" "), *strip], strip.cell_length + 1).crop_extend(0, width, None)
        line = line.apply_style(style).apply_offsets(0, index)
        filters = self.app._filters
        if filters:
            background = self._line_background
            if background is None:
                background = self._line_background = self.background_colors[1]
            for line_filter in filters:
                line = line.apply_filter(line_filter, background)
        return line

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text (the lines as shown, without styles)."""
        # Each line is drawn after a margin cell, which the selection's x offsets count.
        text = selection.extract("\n".join(" " + strip.text for strip in self._lines))
        return "\n".join(line[1:] if line.startswith(" ") else line for line in text.split("\n")), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._line_cache.clear()
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._line_cache.clear()
        following = self._following
        self._relayout()
        if following:
            self.follow()

    # -- following ---------------------------------------------------------------------------------

    def follow(self) -> None:
        """Jump to the end and follow the conversation again (the user sent something)."""
        self._following = True
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True, force=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        # Not ScrollView's: it moves the (zero-width, hidden) scroll bar widget, whose refresh
        # spans the screen's height and makes Textual repaint every widget in that box.
        if round(old_value) != round(new_value):
            self.refresh()
        self._following = new_value >= self.max_scroll_y
        if new_value < 1 and old_value >= 1 and self._first > 0:
            self.call_later(self.load_earlier)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if self.scroll_y < 1 and self._first > 0:
            self.call_later(self.load_earlier)
        super()._on_mouse_scroll_up(event)

    # -- look --------------------------------------------------------------------------------------

    def render_again(self) -> None:
        """Render every entry again (the theme or something else that changes the look changed)."""
        self._theme += 1
        self._scroll_bar_style = None
        self._line_cache.clear()
        if self.is_attached:
            self._relayout()

    def set_view_flag(self, flag: ViewFlag, on: bool) -> None:
        """Show all thinking blocks (Ctrl+T) or expand all tool output (Ctrl+O)."""
        self.set_class(on, flag)
        if flag == "-show-thinking":
            self._show_thinking = on
        else:
            self._expand_tools = on
        self._line_cache.clear()
        self._relayout()

    # -- windowing ---------------------------------------------------------------------------------

    def _prune(self) -> None:
        if not self.following:
            return
        new_first = self._first
        if len(self.entries) - self._first > self.MAX_LIVE + self.PAGE:
            new_first = len(self.entries) - self.MAX_LIVE
        height = max(self.size.height, 1)
        lines = len(self._lines)
        if lines > (self.LIVE_SCREENS + 1) * height and self._starts:
            # The first entry starting within the last LIVE_SCREENS screens (from the last layout;
            # the last laid-out entry stays in any case).
            offset = min(bisect_left(self._starts, lines - self.LIVE_SCREENS * height), len(self._starts) - 1)
            new_first = max(new_first, self._first + offset)
        if new_first <= self._first:
            return
        for index in range(self._first, new_first):
            entry = self.entries[index]
            if entry.view is self._live or entry in self._watched.values():
                new_first = index
                break
            entry.view = None
        if new_first != self._first:
            self._first = new_first
            self._restructure(0)
            self._line_cache.clear()

    def _fill_window(self) -> None:
        # Render earlier pages while the window fills less than FILL_SCREENS screens.
        height = max(self.size.height, 1)
        ctx = self._render_context()
        while self._first > 0 and ctx is not None:
            lines = sum(len(e.view.strips(ctx)) + 1 for e in self.entries[self._first :] if e.view is not None)
            if lines >= height * self.FILL_SCREENS:
                break
            self._render_page()

    def _render_page(self) -> None:
        start = max(self._first - self.PAGE, 0)
        for entry in self.entries[start : self._first]:
            self._show(entry, build_view(entry, self.cwd))
            entry.laid_out = None
        self._first = start
        self._restructure(0)
        self._line_cache.clear()

    async def load_earlier(self, *, keep_view: bool = True) -> bool:
        """Render the previous page of entries above the first rendered one; False if none.
        ``keep_view``: keep what the reader was looking at in place (scrolling up)."""
        if self._first == 0 or self._loading_earlier:
            return False
        self._loading_earlier = True
        try:
            before = len(self._lines)
            scroll_y = self.scroll_y
            self._render_page()
            self._relayout()
            if keep_view and not self.following:
                self.scroll_to(y=scroll_y + len(self._lines) - before, animate=False, immediate=True)
            return True
        finally:
            self._loading_earlier = False


def _highlight(strip: Strip, span: tuple[int, int], style: RichStyle) -> Strip:
    """``strip`` with the selected cells ``span`` (end -1: to the end of the line) in ``style``."""
    length = strip.cell_length
    start, end = span
    end = length if end == -1 else min(end, length)
    if end <= start:
        return strip
    before, middle, after = strip.divide([start, end, length])
    return Strip.join([before, middle.apply_style(style), after])


def _earlier_entries_note(ctx: RenderContext, entries: list[Entry], first: int) -> list[Strip]:
    """The line above the window saying how many entries are not rendered."""
    count = first - (1 if entries and entries[0].kind == "header" else 0)
    noun = "entry" if count == 1 else "entries"
    note = Content.styled(f"↑ {count} earlier {noun} · scroll up to show", "$text-muted")
    return ctx.content(note.center(ctx.width))


def _entry_lines(ctx: RenderContext, entry: Entry, *, first: bool) -> list[Strip]:
    """The lines of ``entry`` (none without a view), after a blank line when its view asks for
    a margin and it is not the ``first`` line of the transcript; records what was laid out."""
    view = entry.view
    if view is None:
        return []
    strips = view.strips(ctx)
    entry.laid_out = view.current_version
    if strips and view.margin_top and not first:
        return [Strip.blank(0), *strips]
    return list(strips)

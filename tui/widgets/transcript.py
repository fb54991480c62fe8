"""The scrolling transcript: entries built from agent messages, streamed live, windowed.

The transcript keeps every entry as plain data and mounts widgets only for a window at the end:
live, it prunes the oldest widgets once more than ``MAX_LIVE + PAGE`` are mounted (while the view
follows the bottom), and scrolling to the top mounts the previous ``PAGE`` entries again. So
streaming costs the same in a long session as in a new one, and resuming a 1,000-message session
paints only its last screens.

A finished assistant message is frozen once laid out (see ``AssistantMessageView.freeze``): painted
once into strips, its children hidden, so the screen's layout passes (one per streamed update) walk
one widget for it; the transcript thaws and re-freezes messages when their look changes (width,
theme, Ctrl+T / Ctrl+O) and a tool update for a frozen message thaws it.

Agent events arrive through :meth:`Transcript.handle_event` (synchronously, from the session's
subscriber); streamed text is buffered by the widgets and rendered by a ~10 Hz flush.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from textual import events
from textual.containers import VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

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
from baton.agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import AssistantMessage, ToolResultMessage, UserMessage
from baton.tui.widgets.messages import (
    AssistantMessageView,
    BashExecutionView,
    NoticeLevel,
    NoticeView,
    UserMessageView,
    compaction_notice,
    user_text,
)
from baton.tui.widgets.tool_call import ToolCallView

EntryKind = Literal["header", "user", "assistant", "tool_result", "bash", "notice", "compaction", "custom"]

FLUSH_INTERVAL = 0.1
"""Seconds between renders of streamed text (<= 10 Hz)."""


@asynccontextmanager
async def _batch(app: Any) -> AsyncIterator[None]:
    """One flush, one frame: hold screen updates until every widget has taken its update."""
    with app.batch_update():
        yield


@dataclass(eq=False)
class Entry:
    """One transcript entry as data; ``widget`` is set while it is mounted."""

    kind: EntryKind
    message: Any = None
    results: dict[str, ToolResultMessage] = field(default_factory=dict)
    content: Content | None = None
    level: NoticeLevel = "info"
    widget: Widget | None = None
    factory: Callable[[], Widget] | None = None


class Transcript(VerticalScroll, can_focus=False):
    """The conversation. See the module docstring."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 1 1; scrollbar-size-vertical: 1; }
    Transcript > #earlier { color: $text-muted; height: auto; text-align: center; display: none; }
    Transcript.-has-earlier > #earlier { display: block; }
    """

    MAX_LIVE = 30
    """Entries kept mounted while following the conversation."""
    PAGE = 10
    """Entries mounted at a time when scrolling up (and the slack before pruning); more pages
    are mounted at once while the mounted entries fill less than ``FILL_SCREENS`` screens."""
    FILL_SCREENS = 2

    def __init__(self, *, cwd: Path | None = None, header: Callable[[], Widget] | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd
        self.entries: list[Entry] = []
        self._first = 0
        self._earlier = Static("", markup=False, id="earlier")
        self._header_factory = header
        self._live: AssistantMessageView | None = None
        self._live_entry: Entry | None = None
        self._finishing: list[tuple[AssistantMessageView, AssistantMessage]] = []
        self._dirty_views: set[Widget] = set()
        self._call_owner: dict[str, Entry] = {}
        self._timer: Timer | None = None
        self._ticking = False
        self._loading_earlier = False
        self._to_freeze: list[Entry] = []
        self._in_flush: list[Callable[[], None]] = []
        self.flushes = 0
        """Flushes run so far (each is at most one frame; tests count them)."""
        self._freeze_timer: Timer | None = None
        self._width = 0
        self._lock = asyncio.Lock()
        self.on_flush: Callable[[], None] | None = None
        """Called inside every flush's frame (the app ticks its spinner there)."""

    def compose(self) -> Iterable[Widget]:
        yield self._earlier

    def on_mount(self) -> None:
        if self._header_factory is not None and not self.entries:
            self.add_entry(Entry("header", factory=self._header_factory))
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refreeze())

    # -- state -----------------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom (the user has not scrolled up)."""
        if not self.is_anchored:
            return self.virtual_size.height <= self.container_size.height
        return not self._anchor_released

    def on_resize(self, event: events.Resize) -> None:
        self._sync_anchor()
        if event.size.width != self._width:
            self._width = event.size.width
            self.refreeze()

    def _size_updated(self, size: Any, virtual_size: Any, container_size: Any, layout: bool = True) -> bool:
        # Streaming grows the virtual size on every flush, and Textual then asks for a second full
        # layout pass (``virtual_size`` is a layout reactive), doubling the cost of each flush.
        # That pass only matters when the scrollbar appears or goes (the content width changes);
        # otherwise the scrollbars are updated here anyway.
        old = self.virtual_size.height > self.container_size.height
        new = virtual_size.height > container_size.height
        changed = virtual_size != self.virtual_size
        updated = super()._size_updated(size, virtual_size, container_size, layout=layout and old != new)
        if changed:
            self.call_after_refresh(self._sync_anchor)
        return updated

    def follow(self) -> None:
        """Jump to the end and follow the conversation again (the user sent something)."""
        if self.virtual_size.height > self.container_size.height:
            self.anchor()
        else:
            self.call_after_refresh(self._sync_anchor)

    def _scroll_to(self, x: float | None = None, y: float | None = None, **kwargs: Any) -> bool:
        # Textual releases the anchor on every scroll, even one that cannot move because the view
        # is already at the bottom (Page Down there), and only takes it back when the position
        # changes; the transcript would then stop following new text and resizes. Scrolling to
        # the end keeps (or takes back) the anchor.
        scrolled = super()._scroll_to(x, y, **kwargs)
        if y is not None and self.is_anchored and self._anchor_released and y >= self.max_scroll_y:
            self._anchor_released = False
        return scrolled

    def _sync_anchor(self) -> None:
        # Short content stays at the top; once it overflows, stick to the bottom (anchor) until
        # the user scrolls up.
        height = self.container_size.height
        if not height:
            return
        overflow = self.virtual_size.height > height
        if overflow and not self.is_anchored:
            self.anchor()
        elif not overflow and self.is_anchored:
            self.anchor(False)
            self.scroll_to(y=0, animate=False, immediate=True)

    @property
    def first_mounted(self) -> int:
        """Index of the first entry with a mounted widget."""
        return self._first

    @property
    def mounted_widgets(self) -> list[Widget]:
        """Widgets of the mounted entries, in order."""
        return [e.widget for e in self.entries[self._first :] if e.widget is not None]

    def last_answer(self) -> str | None:
        """The text of the latest assistant message with text (for ``/copy``)."""
        for entry in reversed(self.entries):
            if entry.kind != "assistant":
                continue
            if isinstance(entry.widget, AssistantMessageView) and entry.widget is self._live:
                text = entry.widget.text
            else:
                text = entry.message.text if isinstance(entry.message, AssistantMessage) else ""
            if text.strip():
                return str(text)
        return None

    # -- building ----------------------------------------------------------------------------------

    def build_widget(self, entry: Entry) -> Widget:
        """A fresh widget for ``entry`` (mounting or re-mounting it)."""
        message = entry.message
        if entry.factory is not None:
            return entry.factory()
        if entry.kind == "user":
            return UserMessageView(user_text(message.content))
        if entry.kind == "assistant":
            self._to_freeze.append(entry)
            self._schedule_freeze()
            return AssistantMessageView(message, results=entry.results, cwd=self.cwd)
        if entry.kind == "tool_result":
            view = ToolCallView(message.tool_call_id, message.tool_name, {}, cwd=self.cwd)
            view.set_result(message.content, message.details, is_error=message.is_error)
            return view
        if entry.kind == "bash":
            bash = BashExecutionView(message.command, exclude_from_context=bool(message.exclude_from_context))
            bash.set_result(message.output, message.exit_code, cancelled=message.cancelled)
            return bash
        if entry.kind == "custom":
            content = message.content
            text = content if isinstance(content, str) else user_text(content)
            return NoticeView(text, "info")
        return NoticeView(entry.content or Content(""), entry.level)

    def entries_for(self, messages: Iterable[Any]) -> list[Entry]:
        """Entries for a history (tool results folded into the assistant message that called them)."""
        out: list[Entry] = []
        owner: dict[str, Entry] = {}
        for message in messages:
            if isinstance(message, UserMessage):
                out.append(Entry("user", message))
            elif isinstance(message, AssistantMessage):
                entry = Entry("assistant", message)
                for call in message.tool_calls:
                    owner[call.id] = entry
                out.append(entry)
            elif isinstance(message, ToolResultMessage):
                parent = owner.get(message.tool_call_id)
                if parent is not None:
                    parent.results[message.tool_call_id] = message
                else:
                    out.append(Entry("tool_result", message))
            elif isinstance(message, BashExecutionMessage):
                out.append(Entry("bash", message))
            elif isinstance(message, CompactionSummaryMessage):
                out.append(Entry("compaction", content=compaction_notice(message.tokens_before, message.summary)))
            elif isinstance(message, BranchSummaryMessage):
                out.append(Entry("notice", content=Content.styled("⎇ Returned from a branch (summarised)",
                                                                    "$text-accent")))
            elif isinstance(message, CustomMessage) and message.display:
                out.append(Entry("custom", message))
        return out

    def reset(self, messages: Iterable[Any], *, visible: int | None = None) -> list[Awaitable[Any]]:
        """Replace the transcript with ``messages`` at once, mounting only the last ``visible``
        entries; returns the pending removal/mount to await (ordering with later events holds
        without awaiting)."""
        old = [e.widget for e in self.entries if e.widget is not None]
        self._live = None
        self._live_entry = None
        self._finishing.clear()
        self._dirty_views.clear()
        self._to_freeze.clear()
        self.entries = []
        if self._header_factory is not None:
            self.entries.append(Entry("header", factory=self._header_factory))
        self.entries.extend(self.entries_for(messages))
        self._call_owner = {}
        for entry in self.entries:
            if entry.kind == "assistant":
                for call in entry.message.tool_calls:
                    self._call_owner[call.id] = entry
        count = self.PAGE if visible is None else visible
        self._first = max(len(self.entries) - count, 0)
        widgets = []
        for entry in self.entries[self._first :]:
            entry.widget = self.build_widget(entry)
            widgets.append(entry.widget)
        self._update_earlier()
        pending: list[Awaitable[Any]] = []
        if old:
            pending.append(self.remove_children(old))
        if widgets:
            pending.append(self.mount_all(widgets))
        self.anchor(False)
        self.call_after_refresh(self._stick_to_bottom)
        return pending

    def _stick_to_bottom(self) -> None:
        if self.virtual_size.height > self.container_size.height:
            self.anchor()
        if self._first > 0 and self.virtual_size.height < self.container_size.height * self.FILL_SCREENS:
            self.call_later(self._fill_screen)

    async def _fill_screen(self) -> None:
        if await self.load_earlier(keep_view=False):
            self.call_after_refresh(self._stick_to_bottom)

    async def load_history(self, messages: Iterable[Any], *, visible: int | None = None) -> None:
        """:meth:`reset` and wait until the widgets are mounted."""
        for pending in self.reset(messages, visible=visible):
            await pending

    def add_entry(self, entry: Entry) -> Widget:
        """Append an entry and mount its widget at the end."""
        self.entries.append(entry)
        widget = entry.widget = self.build_widget(entry)
        self.mount(widget)
        self._maybe_prune()
        return widget

    def add_notice(self, content: Content | str, level: NoticeLevel = "info") -> Widget:
        """Append a notice (model switch, compaction, command output...)."""
        body = content if isinstance(content, Content) else Content(content)
        return self.add_entry(Entry("notice", content=body, level=level))

    def add_notice_before_reply(self, content: Content | str, level: NoticeLevel = "info") -> Widget:
        """A notice about the reply being requested (a retry): placed above the live reply while
        nothing of it has arrived, so the answer that follows appears below it."""
        live, live_entry = self._live, self._live_entry
        if live is None or live_entry is None or not live.is_empty or live_entry not in self.entries:
            return self.add_notice(content, level)
        body = content if isinstance(content, Content) else Content(content)
        entry = Entry("notice", content=body, level=level)
        self.entries.insert(self.entries.index(live_entry), entry)
        widget = entry.widget = self.build_widget(entry)
        self.mount(widget, before=live)
        return widget

    def add_bash(self, command: str, *, exclude_from_context: bool) -> BashExecutionView:
        """Append a live ``!cmd`` run; the caller feeds it output and then its result."""
        view = BashExecutionView(command, exclude_from_context=exclude_from_context)
        self.add_entry(Entry("bash", factory=lambda: view))
        self._dirty_views.add(view)
        self._ensure_timer()
        return view

    def finish_bash(self, view: BashExecutionView, message: BashExecutionMessage) -> None:
        """Record a finished ``!cmd`` run so the entry can be rebuilt after pruning."""
        self._dirty_views.discard(view)
        for entry in reversed(self.entries):
            if entry.widget is view:
                entry.factory = None
                entry.message = message
                break

    # -- live events -------------------------------------------------------------------------------

    def handle_event(self, event: Any) -> None:
        """Apply one agent event (called synchronously by the session's subscriber)."""
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
                self.call_later(self.flush_now)

    def _on_message_start(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            view = AssistantMessageView(message, cwd=self.cwd, streaming=True)
            entry = Entry("assistant", message)
            self._live, self._live_entry = view, entry
            self.entries.append(entry)
            entry.widget = view
            self.mount(view)
            self._maybe_prune()
            self._ensure_timer()
            return
        if isinstance(message, ToolResultMessage):
            return
        for entry in self.entries_for([message]):
            self.add_entry(entry)

    def _on_message_end(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            live, entry = self._live, self._live_entry
            self._live = self._live_entry = None
            if entry is not None:
                entry.message = message
                for call in message.tool_calls:
                    self._call_owner[call.id] = entry
            if live is not None:
                self._finishing.append((live, message))
                self._dirty_views.update(live.tool_views)
                self.call_later(self.flush_now)
                if entry is not None:
                    self._to_freeze.append(entry)
        elif isinstance(message, ToolResultMessage):
            owner = self._call_owner.get(message.tool_call_id)
            if owner is not None:
                owner.results[message.tool_call_id] = message
                view = self._tool_view(message.tool_call_id)
                if view is not None:
                    view.set_result(message.content, message.details, is_error=message.is_error, render=False)
            else:
                self.add_entry(Entry("tool_result", message))

    def _tool_view(self, tool_call_id: str) -> ToolCallView | None:
        live = self._live
        if live is not None and (view := live.tool_view(tool_call_id)) is not None:
            self._dirty_views.add(view)
            return view
        owner = self._call_owner.get(tool_call_id)
        if owner is not None and isinstance(owner.widget, AssistantMessageView):
            view = owner.widget.tool_view(tool_call_id)
            if view is not None:
                if owner.widget.is_frozen:
                    owner.widget.thaw()
                    self._to_freeze.append(owner)
                self._dirty_views.add(view)
                self._ensure_timer()
            return view
        return None

    # -- rendering ---------------------------------------------------------------------------------

    def _ensure_timer(self) -> None:
        self._ticking = True
        if self._timer is None:
            self._timer = self.set_interval(FLUSH_INTERVAL, self.flush_now, name="transcript-flush")
        else:
            self._timer.resume()

    async def flush_now(self) -> None:
        """Render everything buffered (the periodic flush; also run when a message ends)."""
        async with self._lock, _batch(self.app):
            self.flushes += 1
            if self._to_freeze:
                # Laid out by the previous frame: frozen in this one rather than in a frame of
                # their own.
                self._freeze_ready()
            if self.on_flush is not None:
                self.on_flush()
            callbacks, self._in_flush = self._in_flush, []
            for callback in callbacks:
                callback()
            live = self._live
            if live is not None:
                await live.flush()
            waiting = []
            for view, message in self._finishing:
                if view.is_attached and not await view.finish(message):
                    waiting.append((view, message))
            self._finishing = waiting
            if waiting:
                # Their widgets are still being mounted (a reply that streamed within one frame):
                # finish them right after the next refresh rather than waiting for a timer tick.
                self.call_after_refresh(self.flush_now)
            for dirty in list(self._dirty_views):
                if isinstance(dirty, ToolCallView):
                    dirty.flush()
                    if dirty.state in ("done", "error", "skipped"):
                        self._dirty_views.discard(dirty)
                elif isinstance(dirty, BashExecutionView):
                    dirty.flush()
            if live is None and not self._finishing and not self._dirty_views and self._timer is not None:
                self._timer.pause()
                self._ticking = False
            if self._to_freeze and not self._ticking:
                self._schedule_freeze()

    def in_next_flush(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` in the next flush's frame (status updates that can wait up to 0.1 s)."""
        self._in_flush.append(callback)
        self._ensure_timer()

    # -- freezing finished messages ----------------------------------------------------------------

    def _schedule_freeze(self) -> None:
        # After the next refresh, so that the layout of the last update is done; a short timer
        # retries what could not be frozen yet (a few times, then it waits for the next flush).
        if self._freeze_timer is None:
            self._freeze_timer = self.set_timer(0.05, self._freeze_settled, name="transcript-freeze")

    def _freeze_settled(self, attempt: int = 0) -> None:
        self._freeze_timer = None
        waiting = self._freeze_ready()
        if waiting and attempt < 20:
            self._freeze_timer = self.set_timer(0.1, lambda: self._freeze_settled(attempt + 1),
                                                name="transcript-freeze")

    def _freeze_ready(self) -> list[Entry]:
        """Freeze what can be frozen now; the rest stays waiting (and is returned)."""
        waiting: list[Entry] = []
        for entry in self._to_freeze:
            widget = entry.widget
            if not isinstance(widget, AssistantMessageView) or widget.is_frozen or widget.parent is not self:
                continue
            if not self._settled(entry, widget) or not widget.freeze():
                waiting.append(entry)
        self._to_freeze = waiting
        return waiting

    def _settled(self, entry: Entry, widget: AssistantMessageView) -> bool:
        """True when nothing more is coming for this message: finished, every tool call answered."""
        if widget is self._live or any(view is widget for view, _ in self._finishing):
            return False
        message = entry.message
        if not isinstance(message, AssistantMessage) or not message.stop_reason:
            return False
        for view in widget.tool_views:
            if view in self._dirty_views or view.state not in ("done", "error", "skipped"):
                return False
            if view.state != "skipped" and view.tool_call_id not in entry.results:
                return False
        return True

    def refreeze(self) -> None:
        """Thaw every frozen message and freeze it again once re-laid out (its look changed)."""
        for entry in self.entries[self._first :]:
            widget = entry.widget
            if isinstance(widget, AssistantMessageView) and widget.is_frozen:
                widget.thaw()
                self._to_freeze.append(entry)
        if self._to_freeze:
            self._schedule_freeze()

    # -- windowing ---------------------------------------------------------------------------------

    def _maybe_prune(self) -> None:
        mounted = len(self.entries) - self._first
        if mounted <= self.MAX_LIVE + self.PAGE or not self.following:
            return
        new_first = len(self.entries) - self.MAX_LIVE
        stale = []
        for index in range(self._first, new_first):
            entry = self.entries[index]
            widget = entry.widget
            if widget is self._live or widget in self._dirty_views:
                new_first = index
                break
            if widget is not None:
                stale.append(widget)
                entry.widget = None
        self._first = new_first
        self._update_earlier()
        if stale:
            self.remove_children(stale)

    def _update_earlier(self) -> None:
        hidden = self._first
        has_header = bool(self.entries) and self.entries[0].kind == "header"
        count = hidden - (1 if has_header and hidden else 0)
        self.set_class(hidden > 0, "-has-earlier")
        if hidden:
            noun = "entry" if count == 1 else "entries"
            self._earlier.update(Content(f"↑ {count} earlier {noun} · scroll up to show"))

    async def load_earlier(self, *, keep_view: bool = True) -> bool:
        """Mount the previous page of entries above the first mounted one; False if none.
        ``keep_view``: keep what the reader was looking at in place (scrolling up)."""
        if self._first == 0 or self._loading_earlier:
            return False
        self._loading_earlier = True
        try:
            async with self._lock:
                anchor = next((e.widget for e in self.entries[self._first :] if e.widget is not None), None)
                start = max(self._first - self.PAGE, 0)
                widgets = []
                for entry in self.entries[start : self._first]:
                    entry.widget = self.build_widget(entry)
                    widgets.append(entry.widget)
                self._first = start
                self._update_earlier()
                if anchor is not None:
                    await self.mount_all(widgets, before=anchor)
                else:
                    await self.mount_all(widgets)
            if anchor is not None and keep_view:
                self.call_after_refresh(self._keep_in_view, anchor)
            return True
        finally:
            self._loading_earlier = False

    def _keep_in_view(self, anchor: Widget) -> None:
        # Only while the reader is still up there: if the view went back to following the end
        # meanwhile (the user sent something), moving it would release the anchor again.
        if anchor.is_mounted and not self.following:
            self.scroll_to_widget(anchor, top=True, animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < 1 and old_value >= 1 and self._first > 0:
            self.call_later(self.load_earlier)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if self.scroll_y < 1 and self._first > 0:
            self.call_later(self.load_earlier)
        super()._on_mouse_scroll_up(event)

    def set_view_flag(self, flag: Literal["-show-thinking", "-expand-tools"], on: bool) -> None:
        """Show all thinking blocks (Ctrl+T) or expand all tool output (Ctrl+O)."""
        self.set_class(on, flag)
        self.refreeze()

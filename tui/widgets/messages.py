"""Transcript entries: user prompts, assistant replies (streamed), thinking, shell runs, notices."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from textual import events
from textual._compositor import Compositor
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from baton.providers.events import (
    AssistantMessageEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from baton.providers.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage
from baton.tui.render import StreamCleaner, clean, format_duration, one_line, safe
from baton.tui.widgets.markdown_stream import StreamingMarkdown
from baton.tui.widgets.tool_call import ToolCallView
from baton.tui.widgets.tool_render import result_body, result_text

NoticeLevel = Literal["info", "success", "warning", "error"]


def user_text(content: Any) -> str:
    """The text of a user message's content (images as ``[image]`` placeholders)."""
    if isinstance(content, str):
        return content
    return result_text(content)


class UserMessageView(Static):
    """A prompt the user sent (or a steering / follow-up message once delivered)."""

    DEFAULT_CSS = """
    UserMessageView {
        height: auto; margin: 1 0 0 0; padding: 0 1;
        background: $boost; border-left: outer $primary;
    }
    """

    def __init__(self, text: str) -> None:
        from baton.tui.attachments import collapse_file_blocks

        # Attached files show as one line each; the text sent keeps them whole.
        super().__init__(safe(collapse_file_blocks(text)), markup=False, classes="user-message")
        self.text = text


class ThinkingBlock(Widget):
    """A thinking block: one dim line while collapsed; the transcript's ``-show-thinking`` class
    (Ctrl+T) shows the whole text."""

    SCOPED_CSS = False  # the rules refer to the transcript's classes

    DEFAULT_CSS = """
    ThinkingBlock { height: auto; margin: 1 0 0 0; }
    ThinkingBlock > .thinking-summary { height: auto; color: $text-muted; text-style: italic; }
    ThinkingBlock > .thinking-body {
        display: none; height: auto; color: $text-muted; text-style: italic; padding: 0 0 0 2;
    }
    .-show-thinking ThinkingBlock > .thinking-body { display: block; }
    .-show-thinking ThinkingBlock > .thinking-summary { display: none; }
    """

    def __init__(self, text: str = "", *, streaming: bool = False, redacted: bool = False) -> None:
        super().__init__(classes="thinking")
        self._cleaner = StreamCleaner()
        self._parts: list[str] = [clean(text)] if text else []
        self._pending: list[str] = []
        self._streaming = streaming
        self._redacted = redacted
        self._summary = Static("", markup=False, classes="thinking-summary")
        self._body = Static("", markup=False, classes="thinking-body")
        self._render_now()

    def compose(self) -> ComposeResult:
        yield self._summary
        yield self._body

    @property
    def text(self) -> str:
        """The thinking text received so far."""
        return "".join(self._parts) + clean("".join(self._pending))

    def append(self, delta: str) -> None:
        """Buffer a streamed fragment."""
        self._pending.append(delta)

    def flush(self) -> None:
        """Show what was buffered."""
        if self._pending:
            self._parts.append(self._cleaner.feed("".join(self._pending)))
            self._pending.clear()
            self._render_now()

    def finish(self) -> None:
        """The block is complete."""
        self._parts.append(self._cleaner.feed("".join(self._pending)) + self._cleaner.finish())
        self._pending.clear()
        self._streaming = False
        self._render_now()

    def _render_now(self) -> None:
        text = "".join(self._parts).strip()
        if self._redacted:
            self._summary.update(Content.styled("∴ Thinking (redacted by the provider)", "$text-muted"))
            self._body.update(Content.styled("(redacted)", "$text-muted"))
            return
        lines = text.count("\n") + 1 if text else 0
        if self._streaming:
            last = text.rsplit("\n", 1)[-1] if text else ""
            label = Content.assemble(("∴ Thinking… ", "bold $text-muted"), (one_line(last, 100), "$text-muted"))
        else:
            label = Content.assemble(
                ("∴ Thought ", "bold $text-muted"),
                (f"· {lines} line{'s' if lines != 1 else ''} (Ctrl+T to show)", "$text-muted"),
            )
        self._summary.update(label)
        self._body.update(Content.assemble(("∴ ", "bold"), text))


class AssistantMessageView(Widget):
    """An assistant message: thinking, text and tool calls in content order, streamed live."""

    DEFAULT_CSS = """
    AssistantMessageView { height: auto; margin: 1 0 0 0; }
    AssistantMessageView > StreamingMarkdown { margin: 1 0 0 0; }
    AssistantMessageView > .-first { margin: 0; }
    AssistantMessageView > .message-status { height: auto; margin: 1 0 0 0; display: none; }
    AssistantMessageView > .message-status.-shown { display: block; }
    AssistantMessageView > .message-status.-first { margin: 0; }
    """

    def __init__(
        self,
        message: AssistantMessage | None = None,
        *,
        results: Mapping[str, ToolResultMessage] | None = None,
        cwd: Path | None = None,
        streaming: bool = False,
    ) -> None:
        super().__init__(classes="assistant-message")
        self._cwd = cwd
        self._streaming = streaming
        self._blocks: dict[int, Widget] = {}
        self._order: list[Widget] = []
        self._finishing: set[int] = set()
        self._composed = False
        self.message = message
        self._status = Static("", markup=False, classes="message-status")
        self._frozen: list[Strip] | None = None
        if message is not None and not streaming:
            self._build_static(message, results or {})

    def compose(self) -> ComposeResult:
        self._composed = True
        yield from self._order
        yield self._status

    @property
    def is_empty(self) -> bool:
        """True while nothing of the reply has arrived (no block yet)."""
        return not self._order

    @property
    def tool_views(self) -> list[ToolCallView]:
        """The tool-call widgets of this message, in order."""
        return [w for w in self._order if isinstance(w, ToolCallView)]

    @property
    def text(self) -> str:
        """The text blocks shown so far."""
        return "\n\n".join(w.text for w in self._order if isinstance(w, StreamingMarkdown))

    def _build_static(self, message: AssistantMessage, results: Mapping[str, ToolResultMessage]) -> None:
        for index, block in enumerate(message.content):
            widget: Widget
            if isinstance(block, TextContent):
                if not block.text.strip():
                    continue
                widget = StreamingMarkdown(block.text)
            elif isinstance(block, ThinkingContent):
                if not block.thinking.strip() and not block.redacted:
                    continue
                widget = ThinkingBlock(block.thinking, redacted=bool(block.redacted))
            elif isinstance(block, ToolCall):
                view = ToolCallView(block.id, block.name, block.arguments, cwd=self._cwd)
                result = results.get(block.id)
                if result is not None:
                    view.set_result(result.content, result.details, is_error=result.is_error)
                elif message.stop_reason in ("aborted", "error", "length"):
                    view.mark_not_run()
                widget = view
            else:
                continue
            if not self._order:
                widget.add_class("-first")
            self._blocks[index] = widget
            self._order.append(widget)
        self._show_status(message)

    # -- live streaming -------------------------------------------------------------------------

    def on_stream_event(self, event: AssistantMessageEvent) -> None:
        """Apply one provider event (from an agent ``message_update``)."""
        if isinstance(event, TextDeltaEvent):
            block = self._blocks.get(event.content_index)
            if isinstance(block, StreamingMarkdown):
                block.append(event.delta)
            else:
                self._add(event.content_index, StreamingMarkdown(event.delta, streaming=True))
        elif isinstance(event, ThinkingDeltaEvent):
            block = self._blocks.get(event.content_index)
            if isinstance(block, ThinkingBlock):
                block.append(event.delta)
            else:
                thinking = ThinkingBlock(streaming=True)
                thinking.append(event.delta)
                self._add(event.content_index, thinking)
        elif isinstance(event, ToolCallDeltaEvent):
            block = self._blocks.get(event.content_index)
            call = _block_at(event.partial, event.content_index)
            if isinstance(block, ToolCallView) and isinstance(call, ToolCall):
                block.set_args(call.arguments)
        elif isinstance(event, TextStartEvent):
            self._add(event.content_index, StreamingMarkdown(streaming=True))
        elif isinstance(event, ThinkingStartEvent):
            thinking_block = _block_at(event.partial, event.content_index)
            redacted = isinstance(thinking_block, ThinkingContent) and bool(thinking_block.redacted)
            self._add(event.content_index, ThinkingBlock(streaming=not redacted, redacted=redacted))
        elif isinstance(event, ToolCallStartEvent):
            call = _block_at(event.partial, event.content_index)
            if isinstance(call, ToolCall):
                view = ToolCallView(call.id, call.name, call.arguments, cwd=self._cwd, streaming=True)
                self._add(event.content_index, view)
        elif isinstance(event, ToolCallEndEvent):
            block = self._blocks.get(event.content_index)
            if isinstance(block, ToolCallView):
                block.set_args(event.tool_call.arguments, final=True)
        elif isinstance(event, TextEndEvent | ThinkingEndEvent):
            self._finishing.add(event.content_index)

    def _add(self, index: int, widget: Widget) -> None:
        if index in self._blocks:
            return
        if not self._order:
            widget.add_class("-first")
        self._blocks[index] = widget
        self._order.append(widget)
        if self._composed:
            self.mount(widget, before=self._status)

    async def flush(self) -> None:
        """Render what was buffered since the last flush (called at most ~10 times a second)."""
        for index, widget in list(self._blocks.items()):
            if not widget.is_mounted:
                continue
            if isinstance(widget, StreamingMarkdown):
                if index in self._finishing:
                    self._finishing.discard(index)
                    await widget.finish()
                else:
                    await widget.flush()
            elif isinstance(widget, ThinkingBlock):
                if index in self._finishing:
                    self._finishing.discard(index)
                    widget.finish()
                else:
                    widget.flush()
            elif isinstance(widget, ToolCallView):
                widget.flush()

    async def finish(self, message: AssistantMessage) -> bool:
        """The message is complete (possibly aborted or failed): flush everything and mark it.
        Returns False (nothing done yet) while the widgets are still being mounted."""
        self.message = message
        if not self.is_mounted or not all(w.is_mounted for w in self._order):
            return False
        self._streaming = False
        for widget in list(self._blocks.values()):
            if isinstance(widget, StreamingMarkdown):
                await widget.finish()
            elif isinstance(widget, ThinkingBlock):
                widget.finish()
            elif isinstance(widget, ToolCallView):
                if message.stop_reason in ("aborted", "error", "length"):
                    widget.mark_not_run()
                widget.flush()
        self._finishing.clear()
        self._show_status(message)
        return True

    # -- freezing -------------------------------------------------------------------------------
    #
    # A finished message does not change, yet every layout pass of the screen (one per streamed
    # update elsewhere) walks its widgets again: a text block, a Markdown widget and its blocks, a
    # tool box and its lines. Frozen, it is painted once into strips and its children are hidden,
    # so the compositor sees one fixed-height widget that repaints from the cache. The transcript
    # thaws it again whenever its look could change (width, theme, Ctrl+T / Ctrl+O) and when the
    # mouse enters it (links and text selection need the real widgets).

    @property
    def is_frozen(self) -> bool:
        """True while the message is shown from its cached rendering."""
        return self._frozen is not None

    def freeze(self) -> bool:
        """Render the message once and show it from that cache; False when it cannot be frozen
        yet (not laid out, still streaming, or an update is waiting for the next layout)."""
        if self._frozen is not None:
            return True
        size = self.outer_size
        if self._streaming or not self.is_mounted or not size.width or not size.height:
            return False
        screen = self.screen
        if screen._layout_required or self._layout_required:
            return False
        for widget in self.walk_children(Widget, with_self=True):
            if widget._layout_required or widget._refresh_styles_required:
                return False
        compositor = Compositor()
        compositor.reflow(self, size)
        # The screen's last layout must match this one (a style or content change not laid out
        # yet would freeze a picture the real widgets no longer show).
        for widget, geometry in compositor.full_map.items():
            if geometry.region.size != widget.outer_size:
                return False
        strips = compositor.render_strips(size)
        if len(strips) != size.height:
            return False
        self._frozen = strips
        self.styles.height = size.height
        # Hidden with inline styles, not a class: a class change restyles every widget inside.
        for child in self.children:
            child.styles.display = "none"
        return True

    def thaw(self) -> None:
        """Show the real widgets again."""
        if self._frozen is None:
            return
        self._frozen = None
        self.styles.clear_rule("height")
        for child in self.children:
            if child.styles.clear_rule("display"):
                child.refresh(layout=True)
        self.refresh(layout=True)

    def render_lines(self, crop: Region) -> list[Strip]:
        frozen = self._frozen
        if frozen is None:
            return super().render_lines(crop)
        return [strip.crop(crop.x, crop.right) for strip in frozen[crop.y : crop.bottom]]

    def on_enter(self, event: events.Enter) -> None:
        self.thaw()

    def tool_view(self, tool_call_id: str) -> ToolCallView | None:
        """The widget of the call with this id, if it belongs to this message."""
        for widget in self._order:
            if isinstance(widget, ToolCallView) and widget.tool_call_id == tool_call_id:
                return widget
        return None

    def _show_status(self, message: AssistantMessage) -> None:
        reason = message.stop_reason
        if reason == "aborted":
            self._status.update(Content.styled("⏹ Aborted" + _detail(message, "Request was aborted"),
                                               "$text-warning"))
        elif reason == "error":
            self._status.update(Content.styled("✗ Error: " + one_line(message.error_message or "unknown", 300),
                                               "$text-error"))
        elif reason == "length":
            self._status.update(Content.styled("⚠ Stopped: the output limit was reached", "$text-warning"))
        else:
            self._status.remove_class("-shown")
            return
        self.add_class(f"-{reason}")
        self._status.set_class(not self._order, "-first")
        self._status.add_class("-shown")


def _detail(message: AssistantMessage, default: str) -> str:
    text = message.error_message
    if not text or text.rstrip(".") == default:
        return ""
    return ": " + one_line(text, 200)


def _block_at(message: AssistantMessage, index: int) -> Any:
    content = message.content
    return content[index] if 0 <= index < len(content) else None


class NoticeView(Static):
    """A one-off line in the transcript: model switches, compactions, command output, errors."""

    DEFAULT_CSS = """
    NoticeView { height: auto; margin: 1 0 0 0; color: $text-muted; }
    NoticeView.-success { color: $text-success; }
    NoticeView.-warning { color: $text-warning; }
    NoticeView.-error { color: $text-error; }
    """

    def __init__(self, content: Content | str, level: NoticeLevel = "info") -> None:
        body = content if isinstance(content, Content) else safe(content)
        super().__init__(body, markup=False, classes=f"notice -{level}")
        self.level = level
        self.plain = body.plain


class BashExecutionView(Widget):
    """A shell command the user ran with ``!cmd`` (or ``!!cmd``): command, live output, exit code."""

    SCOPED_CSS = False  # the rules refer to the transcript's classes

    DEFAULT_CSS = """
    BashExecutionView { height: auto; margin: 1 0 0 0; }
    BashExecutionView > Static { height: auto; }
    BashExecutionView > .bash-output { padding: 0 0 0 2; }
    BashExecutionView > .bash-full { display: none; padding: 0 0 0 2; }
    .-expand-tools BashExecutionView.-collapsible > .bash-output { display: none; }
    .-expand-tools BashExecutionView.-collapsible > .bash-full { display: block; }
    """

    def __init__(self, command: str, *, exclude_from_context: bool = False) -> None:
        super().__init__(classes="bash-execution")
        self.command = command
        self._exclude = exclude_from_context
        self._output = ""
        self._exit_code: int | None = None
        self._cancelled = False
        self._done = False
        self._duration: float | None = None
        self._dirty = True
        self._header = Static("", markup=False, classes="bash-header")
        self._body = Static("", markup=False, classes="bash-output")
        self._full = Static("", markup=False, classes="bash-full")
        self._render_now()

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._body
        yield self._full

    def append_output(self, chunk: str) -> None:
        """Live output (rendered at the next flush)."""
        self._output += chunk
        self._dirty = True

    def set_result(
        self, output: str, exit_code: int | None, *, cancelled: bool = False, duration: float | None = None
    ) -> None:
        """The command finished."""
        self._output = output
        self._exit_code = exit_code
        self._cancelled = cancelled
        self._duration = duration
        self._done = True
        self._dirty = True
        self._render_now()

    def flush(self) -> None:
        """Re-render if the output changed."""
        if self._dirty:
            self._render_now()

    def _render_now(self) -> None:
        self._dirty = False
        marker = "!!" if self._exclude else "!"
        note = "  (not sent to the model)" if self._exclude else ""
        self._header.update(
            Content.assemble((marker + " ", "bold $accent"), one_line(self.command, 200), (note, "$text-muted"))
        )
        details: dict[str, Any] = {"exitCode": self._exit_code} if self._exit_code is not None else {}
        if self._cancelled:
            details = {"aborted": True}
        failed = self._cancelled or (self._exit_code not in (None, 0))
        rendered = result_body(
            "bash", {}, self._output, details, is_error=failed and self._done, running=not self._done,
            duration=self._duration,
        )
        preview = rendered.preview
        if rendered.hidden:
            hint = Content.styled(f"… {rendered.hidden} earlier lines (Ctrl+O to expand)", "$text-muted")
            preview = Content.assemble(hint, "\n", preview)
        self._body.update(preview)
        self._full.update(rendered.full)
        self.set_class(bool(rendered.hidden), "-collapsible")


def compaction_notice(tokens_before: int | None, summary: str | None = None) -> Content:
    """The notice shown where earlier context was compacted."""
    from baton.tui.render import format_tokens

    size = f" ({format_tokens(tokens_before)} tokens summarised)" if tokens_before else ""
    head = Content.styled(f"⟳ Earlier conversation compacted{size}", "$text-accent")
    if not summary:
        return head
    return Content.assemble(head, "\n", Content.styled(one_line(_summary_gist(summary), 300), "$text-muted"))


def _summary_gist(summary: str) -> str:
    """The first line of a compaction summary that says something (not a Markdown heading)."""
    for line in summary.splitlines():
        text = line.strip().lstrip("-*• ").strip()
        if text and not line.lstrip().startswith("#"):
            return text
    return summary


def retry_notice(attempt: int, max_attempts: int, delay_ms: int, error: str) -> str:
    """The notice shown when a failed request is retried."""
    return (f"↻ Retrying in {format_duration(delay_ms / 1000)} (attempt {attempt}/{max_attempts}): "
            f"{one_line(error, 200)}")

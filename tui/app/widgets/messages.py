"""Transcript entries: user prompts, assistant replies (streamed), thinking, shell runs, notices.

Each is a :class:`~baton.tui.app.widgets.paint.View`: state plus a rendering to strips, not a widget
(see ``paint.py`` and ``transcript.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.geometry import Offset, Region
from textual.strip import Strip

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
from baton.providers.json_types import JsonObject
from baton.providers.messages import (
    ABORTED_MESSAGE,
    AssistantContentBlock,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from baton.tui.app.render import StreamCleaner, clean, one_line, safe
from baton.tui.app.widgets.markdown_text import MarkdownText
from baton.tui.app.widgets.paint import RenderContext, View, stack
from baton.tui.app.widgets.subagent_box import SubagentView, subagent_rows, tool_call_view
from baton.tui.app.widgets.tool_call import ToolCallView, output_lines
from baton.tui.app.widgets.tool_render import ResultContent, result_body, result_text

NoticeLevel = Literal["info", "success", "warning", "error"]

_LEVEL_STYLES: dict[str, str] = {
    "info": "$text-muted", "success": "$text-success", "warning": "$text-warning", "error": "$text-error",
}


def user_text(content: ResultContent, *, images_not_sent_to: str | None = None) -> str:
    """The text of a user message's content (images as ``[image: type]`` placeholders; with
    ``images_not_sent_to``, the text-only model the request replaced them for, said)."""
    if isinstance(content, str):
        return content
    if images_not_sent_to is None:
        return result_text(content)
    return "\n".join(
        block.text if block.type == "text"
        else f"[image: {block.mime_type} — not sent: {images_not_sent_to} reads text only]"
        for block in content or [] if block.type in ("text", "image")
    )


class UserMessageView(View):
    """A prompt the user sent (or a steering / follow-up message once delivered): on a raised
    background behind a bar in the primary colour."""

    def __init__(self, text: str) -> None:
        from baton.tui.cli.attachments import collapse_file_blocks

        super().__init__()
        # Attached files show as one line each; the text sent keeps them whole.
        self._content = safe(collapse_file_blocks(text))
        self.text = text

    def render(self, ctx: RenderContext) -> list[Strip]:
        background = ctx.color("boost")
        bar = Segment("▌", RichStyle.parse(f"{ctx.color('primary')} on {background}"))
        fill = RichStyle.parse(f"on {background}")
        inner = max(ctx.width - 3, 1)
        out = []
        for strip in ctx.content(self._content, width=inner):
            body = strip.apply_style(fill).extend_cell_length(inner, fill)
            out.append(Strip([bar, Segment(" ", fill), *body, Segment(" ", fill)], inner + 3))
        return out


class HeaderView(View):
    """The first entry: version, model, context files, key shortcuts (muted, indented by one)."""

    margin_top = 0

    def __init__(self, content: Content) -> None:
        super().__init__()
        self._content = content

    def render(self, ctx: RenderContext) -> list[Strip]:
        return ctx.content(self._content, indent=1, style="$text-muted", width=ctx.width - 1)


class ThinkingBlock(View):
    """A thinking block: one dim line while collapsed; Ctrl+T (the context's ``show_thinking``)
    shows the whole text."""

    def __init__(self, text: str = "", *, streaming: bool = False, redacted: bool = False) -> None:
        super().__init__()
        self._cleaner = StreamCleaner()
        self._parts: list[str] = [clean(text)] if text else []
        self._pending: list[str] = []
        self._streaming = streaming
        self._redacted = redacted

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
            self.changed()

    def finish(self) -> None:
        """The block is complete."""
        self._parts.append(self._cleaner.feed("".join(self._pending)) + self._cleaner.finish())
        self._pending.clear()
        self._streaming = False
        self.changed()

    def render(self, ctx: RenderContext) -> list[Strip]:
        text = "".join(self._parts).strip()
        if self._redacted:
            if ctx.show_thinking:
                return ctx.content(Content.styled("(redacted)", "$text-muted"), indent=2)
            return ctx.content(Content.styled("∴ Thinking (redacted by the provider)", "$text-muted"))
        if ctx.show_thinking:
            return ctx.content(Content.assemble(("∴ ", "bold"), text), indent=2, style="italic $text-muted")
        lines = text.count("\n") + 1 if text else 0
        if self._streaming:
            last = text.rsplit("\n", 1)[-1] if text else ""
            label = Content.assemble(("∴ Thinking… ", "bold $text-muted"), (one_line(last, 100), "$text-muted"))
        else:
            label = Content.assemble(
                ("∴ Thought ", "bold $text-muted"),
                (f"· {lines} line{'s' if lines != 1 else ''} (Ctrl+T to show)", "$text-muted"),
            )
        return ctx.content(label, style="italic")


class _TextPart(View):
    """An assistant text block (Markdown), rendered through :class:`MarkdownText`."""

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        super().__init__()
        self.markdown = MarkdownText(text, streaming=streaming)

    @property
    def text(self) -> str:
        return self.markdown.text

    def append(self, delta: str) -> None:
        self.markdown.append(delta)

    def flush(self) -> None:
        if self.markdown.flush():
            self.changed()

    def finish(self) -> None:
        if self.markdown.is_streaming and self.markdown.finish():
            self.changed()

    def render(self, ctx: RenderContext) -> list[Strip]:
        # One cell kept free on the right, as the widget had (wide tables, long code lines).
        return self.markdown.render(ctx.painter, max(ctx.width - 1, 1), ctx.theme)


class AssistantMessageView(View):
    """An assistant message: thinking, text and tool calls in content order, streamed live."""

    def __init__(
        self,
        message: AssistantMessage | None = None,
        *,
        results: Mapping[str, ToolResultMessage] | None = None,
        cwd: Path | None = None,
        streaming: bool = False,
    ) -> None:
        super().__init__()
        self._cwd = cwd
        self._streaming = streaming
        self._blocks: dict[int, View] = {}
        self._order: list[View] = []
        self._finishing: set[int] = set()
        self.message = message
        self._status: Content | None = None
        self.boxes: dict[str, Region] = {}
        """Where each subagent box was drawn in the last rendering (call id → lines and columns)."""
        if message is not None and not streaming:
            self._build_static(message, results or {})

    @property
    def is_empty(self) -> bool:
        """True while nothing of the reply has arrived (no block yet)."""
        return not self._order

    @property
    def is_streaming(self) -> bool:
        """True until :meth:`finish`."""
        return self._streaming

    @property
    def tool_views(self) -> list[ToolCallView]:
        """The tool calls of this message, in order."""
        return [w for w in self._order if isinstance(w, ToolCallView)]

    @property
    def text(self) -> str:
        """The text blocks shown so far."""
        return "\n\n".join(w.text for w in self._order if isinstance(w, _TextPart))

    def _build_static(self, message: AssistantMessage, results: Mapping[str, ToolResultMessage]) -> None:
        for index, block in enumerate(message.content):
            view: View
            if isinstance(block, TextContent):
                if not block.text.strip():
                    continue
                view = _TextPart(block.text)
            elif isinstance(block, ThinkingContent):
                if not block.thinking.strip() and not block.redacted:
                    continue
                view = ThinkingBlock(block.thinking, redacted=bool(block.redacted))
            elif isinstance(block, ToolCall):
                call = tool_call_view(block.id, block.name, block.arguments, cwd=self._cwd)
                result = results.get(block.id)
                if result is not None:
                    call.set_result(result.content, result.details, is_error=result.is_error)
                elif message.stop_reason in ("aborted", "error", "length"):
                    call.mark_not_run()
                view = call
            else:
                continue
            view.owner = self
            self._blocks[index] = view
            self._order.append(view)
        self._show_status(message)

    # -- live streaming -------------------------------------------------------------------------

    def on_stream_event(self, event: AssistantMessageEvent) -> None:
        """Apply one provider event (from an agent ``message_update``)."""
        if isinstance(event, TextDeltaEvent):
            block = self._blocks.get(event.content_index)
            if isinstance(block, _TextPart):
                block.append(event.delta)
            else:
                self._add(event.content_index, _TextPart(event.delta, streaming=True))
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
            self._add(event.content_index, _TextPart(streaming=True))
        elif isinstance(event, ThinkingStartEvent):
            thinking_block = _block_at(event.partial, event.content_index)
            redacted = isinstance(thinking_block, ThinkingContent) and bool(thinking_block.redacted)
            self._add(event.content_index, ThinkingBlock(streaming=not redacted, redacted=redacted))
        elif isinstance(event, ToolCallStartEvent):
            call = _block_at(event.partial, event.content_index)
            if isinstance(call, ToolCall):
                view = tool_call_view(call.id, call.name, call.arguments, cwd=self._cwd, streaming=True)
                self._add(event.content_index, view)
        elif isinstance(event, ToolCallEndEvent):
            block = self._blocks.get(event.content_index)
            if isinstance(block, ToolCallView):
                block.set_args(event.tool_call.arguments, final=True)
        elif isinstance(event, TextEndEvent | ThinkingEndEvent):
            self._finishing.add(event.content_index)

    def _add(self, index: int, view: View) -> None:
        if index in self._blocks:
            return
        view.owner = self  # a change of a part is a change of the message (current_version)
        self._blocks[index] = view
        self._order.append(view)
        self.changed()

    def flush(self) -> None:
        """Take in what was buffered since the last flush (called at most ~10 times a second)."""
        for index, view in list(self._blocks.items()):
            if isinstance(view, _TextPart | ThinkingBlock):
                if index in self._finishing:
                    self._finishing.discard(index)
                    view.finish()
                else:
                    view.flush()
            elif isinstance(view, ToolCallView):
                view.flush()

    def finish(self, message: AssistantMessage) -> None:
        """The message is complete (possibly aborted or failed): flush everything and mark it."""
        self.message = message
        self._streaming = False
        for view in list(self._blocks.values()):
            if isinstance(view, _TextPart | ThinkingBlock):
                view.finish()
            elif isinstance(view, ToolCallView):
                if message.stop_reason in ("aborted", "error", "length"):
                    view.mark_not_run()
                view.flush()
        self._finishing.clear()
        self._show_status(message)
        self.changed()

    def tool_view(self, tool_call_id: str) -> ToolCallView | None:
        """The view of the call with this id, if it belongs to this message."""
        for view in self._order:
            if isinstance(view, ToolCallView) and view.tool_call_id == tool_call_id:
                return view
        return None

    def render(self, ctx: RenderContext) -> list[Strip]:
        # Subagent boxes next to each other (parallel ``task`` calls) share rows.
        out: list[Strip] = []
        self.boxes = {}
        index, order = 0, self._order
        while index < len(order):
            end = index + 1
            if isinstance(order[index], SubagentView):
                while end < len(order) and isinstance(order[end], SubagentView):
                    end += 1
                strips, placed = subagent_rows(ctx, [v for v in order[index:end] if isinstance(v, SubagentView)])
            else:
                strips, placed = order[index].strips(ctx), []
            index = end
            if not strips:
                continue
            if out:
                out.append(Strip.blank(0))
            for box in placed:
                self.boxes[box.view.tool_call_id] = box.region.translate(Offset(0, len(out)))
            out.extend(strips)
        if self._status is not None:
            out = stack([out, ctx.content(self._status)])
        return out

    def _show_status(self, message: AssistantMessage) -> None:
        reason = message.stop_reason
        if reason == "aborted":
            self._status = Content.styled("⏹ Aborted" + _detail(message, ABORTED_MESSAGE), "$text-warning")
        elif reason == "error":
            self._status = Content.styled("✗ Error: " + one_line(message.error_message or "unknown", 300),
                                          "$text-error")
        elif reason == "length":
            self._status = Content.styled("⚠ Stopped: the output limit was reached", "$text-warning")
        else:
            self._status = None


def _detail(message: AssistantMessage, default: str) -> str:
    text = message.error_message
    if not text or text.rstrip(".") == default:
        return ""
    return ": " + one_line(text, 200)


def _block_at(message: AssistantMessage, index: int) -> AssistantContentBlock | None:
    content = message.content
    return content[index] if 0 <= index < len(content) else None


class NoticeView(View):
    """A one-off line in the transcript: model switches, compactions, command output, errors."""

    def __init__(self, content: Content | str, level: NoticeLevel = "info") -> None:
        super().__init__()
        self._content = content if isinstance(content, Content) else safe(content)
        self.level = level
        self.plain_text = self._content.plain

    def render(self, ctx: RenderContext) -> list[Strip]:
        return ctx.content(self._content, style=_LEVEL_STYLES.get(self.level, ""))


class BashExecutionView(View):
    """A shell command the user ran with ``!cmd`` (or ``!!cmd``): command, live output, exit code."""

    def __init__(self, command: str, *, exclude_from_context: bool = False) -> None:
        super().__init__()
        self.command = command
        self._exclude = exclude_from_context
        self._output = ""
        self._exit_code: int | None = None
        self._cancelled = False
        self._done = False
        self._duration: float | None = None
        self._dirty = True

    @property
    def output(self) -> str:
        """The output so far."""
        return self._output

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
        self.changed()

    @property
    def is_done(self) -> bool:
        """True once the result is in."""
        return self._done

    def flush(self) -> None:
        """Re-render if the output changed."""
        if self._dirty:
            self._dirty = False
            self.changed()

    def render(self, ctx: RenderContext) -> list[Strip]:
        marker = "!!" if self._exclude else "!"
        note = "  (not sent to the model)" if self._exclude else ""
        lines = ctx.content(
            Content.assemble((marker + " ", "bold $accent"), one_line(self.command, 200), (note, "$text-muted"))
        )
        details: JsonObject = {"exitCode": self._exit_code} if self._exit_code is not None else {}
        if self._cancelled:
            details = {"aborted": True}
        failed = self._cancelled or (self._exit_code not in (None, 0))
        output = self._output if self._output.strip() or not self._done else "(no output)"
        rendered = result_body(
            "bash", {}, output, details, is_error=failed and self._done, running=not self._done,
            duration=self._duration,
        )
        return lines + output_lines(ctx, rendered)


def compaction_notice(tokens_before: int | None, summary: str | None = None) -> Content:
    """The notice shown where earlier context was compacted."""
    from baton.tui.app.render import format_tokens

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

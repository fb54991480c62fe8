"""One tool call in the transcript: header, arguments as they stream, then its result."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from textual.content import Content
from textual.strip import Strip

from baton.providers.json_types import JsonMapping
from baton.tui.app.widgets.model_call import answer_lines
from baton.tui.app.widgets.paint import RenderContext, View
from baton.tui.app.widgets.tool_render import (
    PREVIEW_LINES,
    Rendered,
    ResultContent,
    args_body,
    header,
    result_body,
    result_text,
    running_status,
)

ToolState = Literal["streaming", "pending", "running", "done", "error", "skipped"]

_GLYPHS: dict[str, tuple[str, str]] = {
    "streaming": ("◌", "$text-muted"),
    "pending": ("○", "$text-muted"),
    "running": ("◐", "$text-warning"),
    "done": ("✓", "$text-success"),
    "error": ("✗", "$text-error"),
    "skipped": ("–", "$text-muted"),
}


def output_lines(ctx: RenderContext, rendered: Rendered, *, style: str = "") -> list[Strip]:
    """A tool's output under its header: all of it with Ctrl+O, else the collapsed preview and
    what it leaves out ("… N earlier lines" above a tail, "… N more lines" below a head)."""
    if rendered.markdown is not None:
        head = ctx.content(rendered.preview, indent=2, style=style) if rendered.preview.plain else []
        return head + answer_lines(ctx, rendered.markdown, indent=2, preview_lines=PREVIEW_LINES)
    if rendered.hidden and ctx.expand_tools:
        return ctx.content(rendered.full, indent=2, style=style)
    if rendered.hidden and rendered.tail:
        hint = Content.styled(f"… {rendered.hidden} earlier lines (Ctrl+O to expand)", "$text-muted")
        return ctx.content(hint, indent=2) + ctx.content(rendered.preview, indent=2, style=style)
    lines = ctx.content(rendered.preview, indent=2, style=style)
    if rendered.hidden:
        more = rendered.hint or f"… {rendered.hidden} more lines (Ctrl+O to expand)"
        lines += ctx.content(Content.styled(more, "$text-muted"), indent=2)
    return lines


class ToolCallView(View):
    """A tool call: ``✓ edit src/app.py`` then a diff, live bash output, a read summary...

    Collapsed past a few lines; Ctrl+O (the context's ``expand_tools``) shows all.
    """

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        args: JsonMapping | None = None,
        *,
        cwd: Path | None = None,
        streaming: bool = False,
    ) -> None:
        super().__init__()
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self._args: JsonMapping = args or {}
        self._cwd = cwd
        self.state: ToolState = "streaming" if streaming else "pending"
        self._started: float | None = None
        self._waiting = False
        self._duration: float | None = None
        self._output = ""
        self._details: object = None
        """The result's details as the tool gave them (read as a typed view when rendered)."""
        self._dirty = True
        self._stale = True
        """The parts below are to be worked out again before they are drawn (:meth:`_parts`)."""
        self._header = Content("")
        self._args_view: Content | None = None
        self._rendered: Rendered | None = None
        self._status: Content | None = None

    # -- updates from the transcript ----------------------------------------------------------

    @property
    def args(self) -> JsonMapping:
        """The call's arguments as last seen (partial while streaming)."""
        return self._args

    @property
    def output(self) -> str:
        """The result (or live output) text as last seen."""
        return self._output

    @property
    def waiting(self) -> bool:
        """True while the call waits for the user's approval."""
        return self._waiting

    @property
    def header_text(self) -> str:
        """The header line as shown (status glyph, tool, arguments)."""
        self._parts()
        return self._header.plain

    def set_args(self, args: JsonMapping, *, final: bool = False) -> None:
        """New (partial or final) arguments; rendered at the next flush."""
        self._args = args
        if final and self.state == "streaming":
            self.state = "pending"
        self._dirty = True

    def set_running(self, args: JsonMapping | None = None) -> None:
        """The tool started executing."""
        if args is not None:
            self._args = args
        self.state = "running"
        self._started = time.monotonic()
        self._dirty = True

    def set_waiting(self, waiting: bool) -> None:
        """The call waits for the user's approval (its clock starts once it is answered)."""
        self._waiting = waiting
        if not waiting and self.state == "running":
            self._started = time.monotonic()
        self._dirty = True

    def set_partial(self, content: ResultContent, details: object = None) -> None:
        """Live output from the running tool (bash)."""
        self._output = result_text(content)
        self._details = details
        self._dirty = True

    def set_result(self, content: ResultContent, details: object, *, is_error: bool, render: bool = True) -> None:
        """The final result; ``render=False`` leaves it to the next :meth:`flush`."""
        self._output = result_text(content)
        self._details = details
        if self._started is not None:
            self._duration = time.monotonic() - self._started
        self.state = "error" if is_error else "done"
        if render:
            self._render_now()
        else:
            self._dirty = True

    def mark_not_run(self) -> None:
        """The call will not run (its message was aborted or cut off)."""
        if self.state in ("streaming", "pending"):
            self.state = "skipped"
            self._render_now()

    def flush(self) -> None:
        """Re-render if anything changed (and tick the clock of a running tool)."""
        if self._dirty or self.state == "running":
            self._render_now()

    # -- rendering ------------------------------------------------------------------------------

    def _render_now(self) -> None:
        # What changed shows at the next rendering: the parts are worked out then, once however
        # many updates came before it (a turn's call streams, waits, runs and ends in one frame).
        self._dirty = False
        self._stale = True
        self.changed()

    def _parts(self) -> None:
        """Work out the header, the arguments, the result and the status line, if stale."""
        if not self._stale:
            return
        self._stale = False
        glyph, style = _GLYPHS[self.state]
        title = header(self.tool_name, self._args, self._cwd)
        self._header = Content.assemble((glyph + " ", style), title)
        showing_result = self.state in ("running", "done", "error")
        show_args = self.state in ("streaming", "pending", "running", "skipped") or self.state == "error"
        self._args_view = args_body(self.tool_name, self._args) if show_args else None
        running = self.state == "running"
        self._status = None
        self._rendered = None
        if running and self._waiting:
            self._status = Content.styled("waiting for your approval…", "$text-warning")
        elif running and self._started is not None and not self._output:
            self._status = running_status(self.tool_name, self._details, time.monotonic() - self._started)
        if showing_result and not (running and not self._output):
            duration = self._duration
            if running and self._started is not None:
                duration = time.monotonic() - self._started
            self._rendered = result_body(
                self.tool_name,
                self._args,
                self._output,
                self._details,
                is_error=self.state == "error",
                running=running,
                duration=duration,
            )

    def render(self, ctx: RenderContext) -> list[Strip]:
        self._parts()
        lines = ctx.content(self._header)
        if self._args_view is not None and self._args_view.plain:
            lines += ctx.content(self._args_view, indent=2)
        rendered = self._rendered
        if rendered is not None and (rendered.preview or rendered.markdown):
            lines += output_lines(ctx, rendered, style="$text-error" if self.state == "error" else "")
        if self._status is not None:
            lines += ctx.content(self._status, indent=2)
        return lines

"""One tool call in the transcript: header, arguments as they stream, then its result."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from baton.tui.widgets.tool_render import args_body, header, result_body, result_text

ToolState = Literal["streaming", "pending", "running", "done", "error", "skipped"]

_GLYPHS: dict[str, tuple[str, str]] = {
    "streaming": ("◌", "$text-muted"),
    "pending": ("○", "$text-muted"),
    "running": ("◐", "$text-warning"),
    "done": ("✓", "$text-success"),
    "error": ("✗", "$text-error"),
    "skipped": ("–", "$text-muted"),
}


def _lines_fit(content: Content, width: int) -> bool:
    return all(cell_len(line) <= width for line in content.plain.split("\n"))


class Part(Static):
    """A line (or lines) of a tool box that remembers what it shows, so that :meth:`show` does
    only the work a change needs: nothing when unchanged, a repaint without a layout pass when
    the number of lines stays (no line wraps, before or after). Each layout pass re-arranges the
    whole screen."""

    def __init__(self, classes: str) -> None:
        super().__init__("", markup=False, classes=classes)
        self._shown: Content | None = None

    def show(self, content: Content) -> None:
        """Show ``content``."""
        old = self._shown
        if old is not None and old.plain == content.plain and old.spans == content.spans:
            return
        self._shown = content
        width = self.content_region.width
        layout = (
            old is None
            or not width
            or old.plain.count("\n") != content.plain.count("\n")
            or not _lines_fit(old, width)
            or not _lines_fit(content, width)
        )
        self.update(content, layout=layout)


class ToolCallView(Widget):
    """A tool call: ``✓ edit src/app.py`` then a diff, live bash output, a read summary...

    Collapsed past a few lines; the transcript's ``-expand-tools`` class (Ctrl+O) shows all.
    """

    SCOPED_CSS = False  # the rules refer to the transcript's classes

    DEFAULT_CSS = """
    ToolCallView { height: auto; margin: 1 0 0 0; }
    ToolCallView > Static { height: auto; padding: 0 0 0 2; }
    ToolCallView > .tool-header { padding: 0; }
    ToolCallView > .tool-preview, ToolCallView > .tool-full, ToolCallView > .tool-more,
    ToolCallView > .tool-status { display: none; }
    ToolCallView > .tool-more, ToolCallView > .tool-status { color: $text-muted; }
    ToolCallView.-has-output > .tool-preview { display: block; }
    ToolCallView.-collapsible.-more > .tool-more { display: block; }
    ToolCallView.-running > .tool-status { display: block; }
    .-expand-tools ToolCallView.-collapsible > .tool-preview { display: none; }
    .-expand-tools ToolCallView.-collapsible > .tool-full { display: block; }
    .-expand-tools ToolCallView.-collapsible > .tool-more { display: none; }
    ToolCallView.-error > .tool-preview, ToolCallView.-error > .tool-full { color: $text-error; }
    """

    def __init__(
        self,
        tool_call_id: str,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        cwd: Path | None = None,
        streaming: bool = False,
    ) -> None:
        super().__init__(classes="tool-call")
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self._args: Mapping[str, Any] = args or {}
        self._cwd = cwd
        self.state: ToolState = "streaming" if streaming else "pending"
        self._started: float | None = None
        self._duration: float | None = None
        self._output = ""
        self._details: Any = None
        self._dirty = True
        self._header = Part("tool-header")
        self._args_view = Part("tool-args")
        self._preview = Part("tool-preview")
        self._full = Part("tool-full")
        self._more = Part("tool-more")
        self._status = Part("tool-status")
        self._render_now()

    def compose(self) -> ComposeResult:
        yield self._header
        yield self._args_view
        yield self._preview
        yield self._full
        yield self._more
        yield self._status

    # -- updates from the transcript ----------------------------------------------------------

    @property
    def args(self) -> Mapping[str, Any]:
        """The call's arguments as last seen (partial while streaming)."""
        return self._args

    @property
    def output(self) -> str:
        """The result (or live output) text as last seen."""
        return self._output

    @property
    def header_text(self) -> str:
        """The header line as shown (status glyph, tool, arguments)."""
        return str(self._header.visual)

    def set_args(self, args: Mapping[str, Any], *, final: bool = False) -> None:
        """New (partial or final) arguments; rendered at the next flush."""
        self._args = args
        if final and self.state == "streaming":
            self.state = "pending"
        self._dirty = True

    def set_running(self, args: Mapping[str, Any] | None = None) -> None:
        """The tool started executing."""
        if args is not None:
            self._args = args
        self.state = "running"
        self._started = time.monotonic()
        self._dirty = True

    def set_partial(self, content: Any, details: Any = None) -> None:
        """Live output from the running tool (bash)."""
        self._output = result_text(content)
        self._details = details
        self._dirty = True

    def set_result(self, content: Any, details: Any, *, is_error: bool, render: bool = True) -> None:
        """The final result; ``render=False`` leaves it to the next :meth:`flush`."""
        self._output = result_text(content)
        self._details = details
        if self._started is not None:
            self._duration = time.monotonic() - self._started
        self.state = "error" if is_error else "done"
        self.set_class(is_error, "-error")
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
        self._dirty = False
        glyph, style = _GLYPHS[self.state]
        title = header(self.tool_name, self._args, self._cwd)
        self._header.show(Content.assemble((glyph + " ", style), title))

        showing_result = self.state in ("running", "done", "error")
        show_args = self.state in ("streaming", "pending", "running", "skipped") or self.state == "error"
        body = args_body(self.tool_name, self._args) if show_args else None
        if body is not None:
            self._args_view.show(body)
            self._args_view.display = True
        else:
            self._args_view.display = False

        running = self.state == "running"
        # The state classes change together, in one restyle of the box (each class change
        # re-matches the stylesheet against every widget in it).
        flags = {"-running": running and not self._output}
        if running and self._started is not None and not self._output:
            elapsed = time.monotonic() - self._started
            self._status.show(Content.styled(f"running… {elapsed:.1f}s", "$text-muted"))
        if not showing_result or (running and not self._output):
            flags.update({"-has-output": False, "-collapsible": False})
            self._set_flags(flags)
            return
        duration = self._duration
        if running and self._started is not None:
            duration = time.monotonic() - self._started
        rendered = result_body(
            self.tool_name,
            self._args,
            self._output,
            self._details,
            is_error=self.state == "error",
            running=running,
            duration=duration,
        )
        self._preview.show(rendered.preview)
        flags.update({"-has-output": bool(rendered.preview), "-collapsible": bool(rendered.hidden)})
        if rendered.hidden:
            self._full.show(rendered.full)
            if rendered.tail:
                hint = Content.styled(f"… {rendered.hidden} earlier lines (Ctrl+O to expand)", "$text-muted")
                self._preview.show(Content.assemble(hint, "\n", rendered.preview))
            else:
                more = rendered.hint or f"… {rendered.hidden} more lines (Ctrl+O to expand)"
                self._more.show(Content.styled(more, "$text-muted"))
        flags["-more"] = bool(rendered.hidden) and not rendered.tail
        self._set_flags(flags)

    def _set_flags(self, flags: Mapping[str, bool]) -> None:
        classes = set(self.classes)
        wanted = (classes | {name for name, on in flags.items() if on}) - {name for name, on in flags.items() if not on}
        if wanted != classes:
            self.set_classes(wanted)

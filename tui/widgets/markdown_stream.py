"""Assistant text as streaming Markdown that stays cheap however long the answer grows.

Deltas are buffered by :meth:`StreamingMarkdown.append` and written out by :meth:`flush`, which
the transcript calls at most ten times a second. Complete Markdown is appended to Textual's
``Markdown`` widget (``Markdown.append``, the incremental path ``MarkdownStream`` uses, which only
re-parses the last block); since the flush already batches at <= 10 Hz, the append runs directly
inside ``App.batch_update`` so that one flush costs one frame (going through ``MarkdownStream``'s
background task spreads each append over two or three frames and doubles the CPU per flush).

An open code fence is the expensive case (each append would re-parse and re-highlight the whole
fence), so while a fence is open its lines are shown as plain monospace text, in chunks of
``FENCE_CHUNK`` lines of which only the last changes, and handed to the Markdown widget once,
when the fence closes.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from baton.tui.render import StreamCleaner, clean

if TYPE_CHECKING:
    from textual.widgets import Markdown

FENCE_CHUNK = 40
"""Lines per plain-text widget of an open fence (only the last one is re-rendered per flush)."""
FENCE_INTERVAL = 0.2
"""Seconds between re-renders of an open fence (code arrives fast; 5 Hz reads smoothly)."""

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
# A partial line that may still turn into a fence opener: hold it until it is complete.
_MAYBE_FENCE = re.compile(r"^[ \t]*[`~]*$")


class _Fence:
    __slots__ = ("char", "info", "lines", "size")

    def __init__(self, marker: str, info: str, opener: str) -> None:
        self.char = marker[0]
        self.size = len(marker)
        self.info = info.strip()
        self.lines: list[str] = [opener]

    def closes(self, line: str) -> bool:
        body = line.strip()
        return len(body) >= self.size and body == self.char * len(body)


class StreamingMarkdown(Widget):
    """Markdown that grows while a model streams it, with open fences rendered cheaply."""

    DEFAULT_CSS = """
    StreamingMarkdown { height: auto; }
    StreamingMarkdown > Markdown { margin: 0; padding: 0 1 0 0; }
    StreamingMarkdown Markdown > .-last-block { margin-bottom: 0; }
    StreamingMarkdown Markdown > .-first-block { margin-top: 0; }
    StreamingMarkdown MarkdownFence > Label { padding: 0 1; }
    StreamingMarkdown > .open-fence {
        height: auto; margin: 1 0; padding: 0 1;
        color: $text; background: $boost;
    }
    StreamingMarkdown > .open-fence > Static { height: auto; }
    /* A quote in an answer must not look like a prompt the user sent (those have the accent bar). */
    StreamingMarkdown MarkdownBlockQuote {
        background: transparent; border-left: outer $foreground 25%; color: $text-muted; text-style: italic;
    }
    """

    def __init__(self, text: str = "", *, streaming: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self._streaming = streaming
        self._initial = "" if streaming else clean(text)
        self._text_parts: list[str] = [self._initial]
        self._cleaner = StreamCleaner()
        self._raw: list[str] = []
        self._line = ""
        self._line_written = 0
        self._fence: _Fence | None = None
        self._out: list[str] = []
        from textual.widgets import Markdown  # imported on first use: it costs ~35 ms at start-up

        from baton.tui.widgets.markdown_links import answer_markdown_parser

        self._markdown: Markdown = Markdown(
            self._initial or None, open_links=False, parser_factory=answer_markdown_parser
        )
        self._tail = Vertical(classes="open-fence")
        self._tail.display = False
        self._tail_chunks: list[Static] = []
        self._tail_texts: list[str] = []
        self._tail_shown_at = 0.0
        self._tail_pending = False
        if streaming and text:
            self.append(text)

    def compose(self) -> ComposeResult:
        yield self._markdown
        yield self._tail

    def on_markdown_table_of_contents_updated(self, event: Any) -> None:
        # Posted when the Markdown widget has (re)built its blocks.
        event.stop()
        self._mark_edges()

    def _mark_edges(self) -> None:
        # Trim the outer margins of the first and last blocks with classes, not :first-child /
        # :last-child rules: order rules make Textual restyle every block on each append.
        children = self._markdown.children
        if not children:
            return
        first, last = children[0], children[-1]
        for child in self._markdown.query_children(".-last-block, .-first-block"):
            if child is not last:
                child.remove_class("-last-block")
            if child is not first:
                child.remove_class("-first-block")
        first.add_class("-first-block")
        if not self._streaming:
            last.add_class("-last-block")

    @property
    def text(self) -> str:
        """The cleaned text received so far (including what is not flushed yet)."""
        pending = "".join(self._raw)
        return "".join(self._text_parts) + (clean(pending) if pending else "")

    @property
    def is_streaming(self) -> bool:
        """True until :meth:`finish` has run."""
        return self._streaming

    @property
    def has_pending(self) -> bool:
        """Whether :meth:`flush` has anything to do."""
        return bool(self._raw) or self._tail_pending

    def append(self, delta: str) -> None:
        """Buffer a streamed fragment; it appears at the next :meth:`flush`."""
        if delta:
            self._raw.append(delta)

    async def flush(self) -> None:
        """Route buffered text: Markdown outside open fences, plain text inside one."""
        if not self._raw:
            if self._tail_pending:
                self._show_fence()
            return
        raw = "".join(self._raw)
        self._raw.clear()
        self._feed(self._cleaner.feed(raw))
        if self._line and self._fence is None and not _MAYBE_FENCE.match(self._line):
            self._out.append(self._line[self._line_written :])
            self._line_written = len(self._line)
        await self._write_out()
        self._show_fence()

    async def finish(self) -> None:
        """Flush everything (an unclosed fence included) as Markdown and stop streaming."""
        if not self._streaming:
            return
        raw = "".join(self._raw)
        self._raw.clear()
        self._feed(self._cleaner.feed(raw) + self._cleaner.finish())
        if self._fence is not None:
            self._out.append("".join(self._fence.lines))
            self._fence = None
        if self._line:
            self._out.append(self._line[self._line_written :])
            self._line, self._line_written = "", 0
        await self._write_out()
        self._show_fence()
        self._streaming = False
        self._mark_edges()

    # -- internals -----------------------------------------------------------------------------

    def _feed(self, text: str) -> None:
        if not text:
            return
        self._text_parts.append(text)
        start = 0
        while True:
            newline = text.find("\n", start)
            if newline == -1:
                self._line += text[start:]
                return
            self._line += text[start : newline + 1]
            self._complete_line()
            start = newline + 1

    def _complete_line(self) -> None:
        line, written = self._line, self._line_written
        self._line, self._line_written = "", 0
        fence = self._fence
        if fence is None:
            match = _FENCE_OPEN.match(line.rstrip("\n")) if not written else None
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                self._fence = _Fence(match.group(1), match.group(2), line)
                return
            self._out.append(line[written:])
            return
        fence.lines.append(line)
        if fence.closes(line):
            self._out.append("".join(fence.lines))
            self._fence = None

    async def _write_out(self) -> None:
        if not self._out:
            return
        chunk = "".join(self._out)
        self._out.clear()
        with self.app.batch_update():
            await self._markdown.append(chunk)

    def _show_fence(self) -> None:
        fence = self._fence
        if fence is None:
            self._tail_pending = False
            if self._tail_chunks:
                self._tail.display = False
                self._tail.remove_children()
                self._tail_chunks.clear()
                self._tail_texts.clear()
            return
        now = time.monotonic()
        if self._tail_chunks and now - self._tail_shown_at < FENCE_INTERVAL:
            self._tail_pending = True
            return
        self._tail_pending = False
        self._tail_shown_at = now
        lines = fence.lines[1:]
        if self._line:
            lines = [*lines, self._line]
        count = max((len(lines) + FENCE_CHUNK - 1) // FENCE_CHUNK, 1)
        new = []
        while len(self._tail_chunks) < count:
            chunk = Static("", markup=False)
            self._tail_chunks.append(chunk)
            self._tail_texts.append("")
            new.append(chunk)
        if new:
            self._tail.mount_all(new)
        for index in range(count):
            text = "".join(lines[index * FENCE_CHUNK : (index + 1) * FENCE_CHUNK]).rstrip("\n")
            if text != self._tail_texts[index]:
                self._tail_texts[index] = text
                self._tail_chunks[index].update(Content(text))
        self._tail.display = True

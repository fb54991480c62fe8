"""Assistant text as Markdown, rendered straight to strips (no widget per message or per block).

The text streams in through :meth:`MarkdownText.append` and is rendered when the transcript asks
for strips (at most ten times a second). Finished blocks are rendered once: the text is cut at
each blank line outside a code fence into a stable head, kept as rendered chunks, and a tail
that is rendered again on each flush. While a fence is open its lines are shown as plain
monospace text (highlighting a fence on every flush would cost more the longer it grows); it is
highlighted once it closes.

Rendering uses Rich's Markdown renderer with a theme taken from the app's Textual theme, headings
left-aligned, block quotes muted and italic (a quote in an answer must not look like a prompt the
user sent), and the parser of :mod:`baton.tui.app.widgets.markdown_links`, so web links show their
address after their text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

from rich._loop import loop_first
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.markdown import Heading, ListItem, Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from rich.theme import Theme
from textual.strip import Strip

from baton.tui.app.render import StreamCleaner, clean

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


class _LeftHeading(Heading):
    """A heading aligned like the text around it (Rich centres them, in a box for ``h1``)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text
        text.justify = "left"
        yield text


class _NumberedItem(ListItem):
    """A list item whose number keeps its dot (``1. first``; Rich draws ``1 first``)."""

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        number_width = len(str(last_number)) + 3
        render_options = options.update(width=options.max_width - number_width)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        number_style = console.get_style("markdown.item.number", default="none")
        padding = Segment(" " * number_width, number_style)
        numeral = Segment(f"{number}.".rjust(number_width - 1) + " ", number_style)
        for first, line in loop_first(lines):
            yield numeral if first else padding
            yield from line
            yield Segment("\n")


class _AnswerMarkdown(Markdown):
    elements = {**Markdown.elements, "heading_open": _LeftHeading, "list_item_open": _NumberedItem}

    def __init__(self, text: str, code_theme: str) -> None:
        # Rich's __init__ builds a new markdown-it parser for every renderable (~2 ms); the
        # answer parser is built once and these are the attributes Rich's renderer reads.
        self.markup = text
        self.parsed = _parser().parse(text)
        self.code_theme = code_theme
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from baton.tui.app.widgets.markdown_links import answer_markdown_parser

    return answer_markdown_parser()


class MarkdownPainter:
    """Renders Markdown text to strips with a theme built from the app's colours."""

    def __init__(self, colors: Mapping[str, str], *, dark: bool) -> None:
        def color(name: str, default: str) -> str:
            return colors.get(name) or default

        accent = color("text-accent", "#ffa62b")
        primary = color("text-primary", "#0178d4")
        muted = color("text-muted", "#888888")
        boost = color("boost", "#333333" if dark else "#eeeeee")
        text = color("foreground", "#e0e0e0" if dark else "#202020")
        theme = Theme({
            "markdown.h1": f"bold {accent}",
            "markdown.h2": f"bold {accent}",
            "markdown.h3": f"bold {primary}",
            "markdown.h4": f"bold {primary}",
            "markdown.h5": f"italic {primary}",
            "markdown.h6": f"italic {muted}",
            "markdown.code": f"{accent} on {boost}",
            "markdown.code_block": f"on {boost}",
            "markdown.block_quote": f"italic {muted}",
            "markdown.hr": muted,
            "markdown.item.bullet": f"bold {accent}",
            "markdown.item.number": f"bold {accent}",
            "markdown.link": f"underline {primary}",
            "markdown.link_url": f"underline {muted}",
            "markdown.table.border": muted,
            "markdown.table.header": f"bold {text}",
            "markdown.s": "strike",
            "markdown.em": "italic",
            "markdown.strong": "bold",
            "markdown.paragraph": "",
            "markdown.text": "",
        }, inherit=True)
        self._console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor",
                                theme=theme, width=80, legacy_windows=False, markup=False, emoji=False,
                                highlight=False)
        self._code_theme = "monokai" if dark else "friendly"
        self._fence_style = Style.parse(f"{text} on {boost}")

    def markdown(self, text: str, width: int) -> list[Strip]:
        """``text`` (clean Markdown) as strips at most ``width`` cells wide."""
        if not text.strip():
            return []
        renderable = _AnswerMarkdown(text, self._code_theme)
        return self._lines(renderable, width)

    def plain_fence(self, lines: Iterable[str], width: int) -> list[Strip]:
        """The lines of a code fence still being written: plain, on the code background (each
        line wrapped on its own, so a line's strips do not depend on its neighbours)."""
        fill = Segment(" ", self._fence_style)
        out: list[Strip] = []
        for line in lines:
            body = Text(line.rstrip("\n") or " ", style=self._fence_style, no_wrap=False)
            out.extend(Strip([fill, *strip, fill]).extend_cell_length(width, self._fence_style)
                       for strip in self._lines(body, max(width - 2, 1)))
        return out

    def _lines(self, renderable: RenderableType, width: int) -> list[Strip]:
        console = self._console
        options = console.options.update(width=max(width, 1), max_width=max(width, 1), height=None)
        lines = console.render_lines(renderable, options, pad=False, new_lines=False)
        # Blank edges go: the transcript puts its own gaps between blocks (a code block's padding
        # lines have a background and stay).
        start, end = 0, len(lines)
        while start < end and _is_blank(lines[start]):
            start += 1
        while end > start and _is_blank(lines[end - 1]):
            end -= 1
        return [Strip(line) for line in lines[start:end]]


def _is_blank(line: list[Segment]) -> bool:
    return all(not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
               for segment in line)


class MarkdownText:
    """The text of one assistant block: buffered while it streams, rendered on demand."""

    def __init__(self, text: str = "", *, streaming: bool = False) -> None:
        self._cleaner = StreamCleaner()
        self._raw: list[str] = []
        self._text = "" if streaming else clean(text)
        self._streaming = streaming
        self._stable = 0
        """Length of the head of ``_text`` cut into rendered chunks (ends after a blank line)."""
        self._chunks: list[str] = []
        self._chunk_cache: dict[tuple[str, int, int], list[Strip]] = {}
        self._fence_cache: dict[tuple[str, int, int], list[Strip]] = {}
        self.version = 0
        self._rendered = False
        if streaming and text:
            self.append(text)

    @property
    def text(self) -> str:
        """The cleaned text received so far (including what is not flushed yet)."""
        pending = "".join(self._raw)
        return self._text + (clean(pending) if pending else "")

    @property
    def is_streaming(self) -> bool:
        """True until :meth:`finish` has run."""
        return self._streaming

    @property
    def has_pending(self) -> bool:
        """Whether :meth:`flush` has anything to show."""
        return bool(self._raw)

    def append(self, delta: str) -> None:
        """Buffer a streamed fragment; it shows after the next :meth:`flush`."""
        if delta:
            self._raw.append(delta)

    def flush(self) -> bool:
        """Take in what was buffered; True when the text changed."""
        if not self._raw:
            return False
        raw = "".join(self._raw)
        self._raw.clear()
        cleaned = self._cleaner.feed(raw)
        if not cleaned:
            return False
        self._text += cleaned
        self.version += 1
        self._rendered = False
        return True

    def finish(self) -> bool:
        """The block is complete: everything buffered is shown, an open fence as Markdown.
        False when the last streamed rendering already shows the finished text as it is."""
        if not self._streaming:
            return False
        raw = "".join(self._raw)
        self._raw.clear()
        rest = self._cleaner.feed(raw) + self._cleaner.finish()
        self._text += rest
        self._streaming = False
        self._chunk_cache.clear()
        self._fence_cache.clear()
        self.version += 1
        # Stable chunks and the tail render as the whole text does, except an open fence
        # (shown plain while streaming) or text the last rendering has not seen.
        return bool(rest) or _open_fence(self._text[self._stable :])[1] is not None or not self._rendered

    def render(self, painter: MarkdownPainter, width: int, theme_key: int) -> list[Strip]:
        """The text as strips (stable chunks come from the cache). A finished text is cut into
        the same chunks as a streamed one, so it looks the same live, after a resize and when a
        session is loaded (a chunk's blank edges, such as a table's padding rows, go)."""
        self._advance_stable()
        out: list[Strip] = []
        for chunk in self._chunks:
            key = (chunk, width, theme_key)
            strips = self._chunk_cache.get(key)
            if strips is None:
                strips = self._chunk_cache[key] = painter.markdown(chunk, width)
            if strips:
                if out:
                    out.append(Strip.blank(0))
                out.extend(strips)
        tail = self._text[self._stable :]
        fence_at, fence = _open_fence(tail) if self._streaming else (0, None)
        head = tail if fence is None else tail[:fence_at]
        rendered = painter.markdown(head, width)
        if rendered:
            if out:
                out.append(Strip.blank(0))
            out.extend(rendered)
        if fence is not None:
            if out:
                out.append(Strip.blank(0))
            out.extend(self._fence_lines(painter, fence, width, theme_key))
        self._rendered = True
        return out

    def _fence_lines(self, painter: MarkdownPainter, lines: list[str], width: int, theme_key: int) -> list[Strip]:
        # An open fence grows by a few lines a flush: each finished line is rendered once.
        out: list[Strip] = []
        for line in lines:
            if not line.endswith("\n"):  # the line still being written
                out.extend(painter.plain_fence([line], width))
                continue
            key = (line, width, theme_key)
            strips = self._fence_cache.get(key)
            if strips is None:
                strips = self._fence_cache[key] = painter.plain_fence([line], width)
            out.extend(strips)
        return out

    def _advance_stable(self) -> None:
        # Cut at every blank line outside a fence, so that the head is complete Markdown blocks
        # and the chunks do not depend on how the text arrived.
        text = self._text
        in_fence: str | None = None
        position = self._stable
        for line in text[self._stable :].splitlines(keepends=True):
            position += len(line)
            if not line.endswith("\n"):
                break
            if in_fence is not None:
                if _closes(in_fence, line):
                    in_fence = None
                continue
            in_fence = _opens_fence(line)
            if in_fence is not None:
                continue
            if not line.strip() and not _continues_list(text, position):
                chunk = text[self._stable : position]
                if chunk.strip():
                    self._chunks.append(chunk)
                self._stable = position


def _continues_list(text: str, position: int) -> bool:
    """Whether the text after a blank line may still belong to a list or indented block (a cut
    there would restart the list's numbering): unknown until the next line arrives."""
    rest = text[position:]
    if "\n" not in rest:
        return True
    following = rest.split("\n", 1)[0]
    return following.startswith((" ", "\t")) or bool(re.match(r"^\s*([-*+]|\d+[.)])\s", following))


def _opens_fence(line: str) -> str | None:
    """The marker (```` ``` ````, ``~~~``...) when ``line`` opens a code fence."""
    match = _FENCE_OPEN.match(line.rstrip("\n"))
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


def _closes(marker: str, line: str) -> bool:
    """Whether ``line`` closes the fence opened with ``marker``."""
    body = line.strip()
    return bool(body) and body == marker[0] * len(body) and len(body) >= len(marker)


def _open_fence(text: str) -> tuple[int, list[str] | None]:
    """Where an unclosed fence starts in ``text`` and its body lines (None when all are closed)."""
    fence: str | None = None
    start = 0
    body: list[str] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        if fence is None:
            marker = _opens_fence(line) if line.endswith("\n") else None
            if marker is not None:
                fence, start, body = marker, offset, []
        elif _closes(fence, line):
            fence = None
        else:
            body.append(line)
        offset += len(line)
    return (start, body) if fence is not None else (0, None)

"""What transcript entries render with: the context of one rendering pass, and the base of views.

Transcript entries are not widgets: each is a small view object that renders itself to strips for
a width, and caches them until it changes or the look does (width, theme, Ctrl+T / Ctrl+O). The
transcript widget shows the strips of its entries one after the other, so a finished message
costs a frame nothing beyond copying its visible lines (see ``transcript.py``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual

if TYPE_CHECKING:
    from textual.widget import Widget

    from baton.tui.app.widgets.markdown_text import MarkdownPainter
    from baton.tui.app.widgets.subagent_box import SubagentView


@dataclass
class RenderContext:
    """One look of the transcript: width, view flags and the widget that resolves theme colours."""

    widget: Widget
    width: int
    show_thinking: bool = False
    expand_tools: bool = False
    theme: int = 0
    """Bumped when the theme changes (cached renderings are then stale)."""
    _painter: MarkdownPainter | None = field(default=None, repr=False)
    load_subagent: Callable[[SubagentView], None] | None = field(default=None, repr=False)
    """Asks for a finished subagent's transcript to be read from its child file (in the background)."""

    @property
    def key(self) -> Hashable:
        """What a cached rendering depends on besides the view's own state."""
        return (self.width, self.show_thinking, self.expand_tools, self.theme)

    @property
    def painter(self) -> MarkdownPainter:
        """The Markdown renderer for the current theme."""
        if self._painter is None:
            from baton.tui.app.widgets.markdown_text import MarkdownPainter

            names = ("text-accent", "text-primary", "text-muted", "boost", "foreground")
            colors = {name: self.color(name) for name in names}
            self._painter = MarkdownPainter(colors, dark=self.widget.app.current_theme.dark)
        return self._painter

    def content(self, content: Content, *, indent: int = 0, style: str = "", width: int | None = None) -> list[Strip]:
        """``content`` wrapped to the width (less ``indent`` cells of left padding)."""
        if style:
            content = content.stylize_before(style)
        inner = max((self.width if width is None else width) - indent, 1)
        strips = Visual.to_strips(self.widget, content, inner, None, Style(), apply_selection=False)
        if indent:
            pad = Segment(" " * indent)
            strips = [Strip([pad, *strip], strip.cell_length + indent) for strip in strips]
        return strips

    def color(self, name: str, default: str = "#808080") -> str:
        """A theme colour (``boost``, ``text-muted``...) as an opaque hex, blended over the background."""
        from textual.color import Color

        variables = self.widget.app.get_css_variables()
        try:
            background = Color.parse(variables.get("background", "#000000"))
            value = variables.get(name, default)
            if value.startswith("auto"):  # contrast text: the foreground at that opacity
                alpha = float(value.split()[1].rstrip("%")) / 100 if " " in value else 1.0
                color = Color.parse(variables.get("foreground", "#e0e0e0")).with_alpha(alpha)
            else:
                color = Color.parse(value)
            return (background + color).hex
        except Exception:
            return default


class View:
    """An entry (or a part of one) that renders itself to strips and caches them."""

    margin_top = 1
    """Blank lines above it in the transcript (between entries)."""

    def __init__(self) -> None:
        self.version = 0
        self._owner: weakref.ref[View] | None = None
        self.on_change: Callable[[], None] | None = None
        """Told of every change of a view that is no part of another (the transcript notes which
        entries to lay out again, instead of asking every entry at every frame)."""
        self._cache_key: Hashable = None
        self._cache: list[Strip] = []

    @property
    def owner(self) -> View | None:
        """The view this one is a part of (its change is the owner's change too). Held weakly:
        a part pointing back at the message that holds it made a reference cycle of every reply,
        so a reply dropped from the transcript's window (with its strips, ~16 kB) stayed in
        memory until the collector's rare full pass."""
        return self._owner() if self._owner is not None else None

    @owner.setter
    def owner(self, view: View | None) -> None:
        self._owner = weakref.ref(view) if view is not None else None

    def changed(self) -> None:
        """The next :meth:`strips` renders again (the owner's too)."""
        self.version += 1
        owner = self.owner
        if owner is not None:
            owner.changed()
        elif self.on_change is not None:
            self.on_change()

    @property
    def current_version(self) -> Hashable:
        """Changes whenever what the view shows changes (views made of parts include theirs)."""
        return self.version

    def strips(self, ctx: RenderContext) -> list[Strip]:
        """The rendering for ``ctx`` (cached while neither the view nor the look changed)."""
        key = (ctx.key, self.current_version)
        if key != self._cache_key:
            self._cache = self.render(ctx)
            self._cache_key = key
        return self._cache

    def render(self, ctx: RenderContext) -> list[Strip]:
        """Render afresh (subclasses)."""
        raise NotImplementedError

    @property
    def plain(self) -> str:
        """The text shown, without styles (the last rendering; for tests and copying)."""
        return "\n".join(strip.text.rstrip() for strip in self._cache)


def stack(parts: list[list[Strip]], gap: int = 1) -> list[Strip]:
    """Non-empty renderings one after the other with ``gap`` blank lines between them."""
    out: list[Strip] = []
    for strips in parts:
        if not strips:
            continue
        if out:
            out.extend(Strip.blank(0) for _ in range(gap))
        out.extend(strips)
    return out

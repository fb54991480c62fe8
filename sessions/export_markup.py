"""Transcript text as safe HTML for the export page: escaped text, Markdown and highlighted code.

Every string first loses its terminal control sequences and every configured key (here, before any
markup: a key split across highlighting spans or emphasis would slip past a redaction of the finished
page). Markdown goes through markdown-it with raw HTML off, so ``<script>`` in an answer stays text;
links and images never become elements (a ``javascript:`` link, a remote image that phones home when
the page opens): a link shows its label and its address as text, an image its alt text and address.
Code is highlighted by Pygments into spans whose class names the page's stylesheet colours; Pygments
escapes every token, and the class names are its own.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from baton.providers.redact import redact
from baton.tools.sanitize import strip_control_sequences

HIGHLIGHT_LIMIT = 200_000
"""Characters of code beyond which it is shown plain (Pygments' time grows with the text)."""


def clean(text: str) -> str:
    """``text`` without terminal control sequences or configured keys: what a reader may see."""
    return redact(strip_control_sequences(text))


def esc(text: str) -> str:
    """:func:`clean` text, safe to put in HTML text or a quoted attribute."""
    return html.escape(clean(text), quote=True)


# ---------------------------------------------------------------------------------------------
# Code


@cache
def _formatter() -> HtmlFormatter[str]:
    return HtmlFormatter(nowrap=True)


@cache
def highlight_css() -> str:
    """The stylesheet rules that colour highlighted code inside an element of class ``hl``."""
    return "\n".join(_formatter().get_token_style_defs(".hl"))


def _lexer(language: str, filename: str) -> Lexer | None:
    try:
        if language:
            return get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
        if filename:
            return get_lexer_for_filename(PurePosixPath(filename).name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        pass
    return None


def code_html(code: str, language: str = "", filename: str = "") -> str:
    """:func:`clean` ``code`` as the inside of a ``<pre class="hl">``: highlighted spans when the
    language (a name, or else the file name's) is known, else escaped text."""
    text = clean(code)
    lexer = _lexer(language.strip(), filename)
    if lexer is None or len(text) > HIGHLIGHT_LIMIT:
        return html.escape(text, quote=False)
    return highlight(text, lexer, _formatter())


def code_block(code: str, language: str = "", filename: str = "") -> str:
    """A ``<pre>`` of highlighted code (:func:`code_html`)."""
    return f'<pre class="code hl"><code>{code_html(code, language, filename)}</code></pre>\n'


# ---------------------------------------------------------------------------------------------
# Markdown


def _fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    return code_block(token.content.removesuffix("\n"), language)


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    env.setdefault("links", []).append(str(tokens[idx].attrGet("href") or ""))
    return '<span class="link">'


def _link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    links: list[str] = env.get("links") or [""]
    href = links.pop()
    opened = next((t for t in reversed(tokens[:idx]) if t.type == "link_open"), None)
    if opened is not None and opened.markup == "autolink":
        return "</span>"  # its label is the address
    return f'</span> <span class="url">({html.escape(href, quote=True)})</span>'


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = html.escape(str(token.attrGet("src") or ""), quote=True)
    return f'<span class="meta">[image: {html.escape(alt, quote=True)} <span class="url">({src})</span>]</span>'


@cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    md.add_render_rule("image", _image)
    return md


def markdown_html(text: str) -> str:
    """:func:`clean` Markdown as HTML: raw HTML shown as text, links and images as text, code
    blocks highlighted."""
    return f'<div class="md">{_markdown().render(clean(text), {})}</div>'

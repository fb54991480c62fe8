"""A Markdown parser for model answers: links show where they go.

Terminal links are not always clickable, and a model's link text can say anything: after each
web link whose text is not already its address, the address is shown in brackets (a markdown-it
core rule adding a text token after ``link_close``).
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

_WEB = ("http://", "https://")


def _show_link_targets(state: StateCore) -> None:
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        href: str | None = None
        label: list[str] = []
        for token in block.children:
            children.append(token)
            if token.type == "link_open":
                value = token.attrGet("href")
                href = value if isinstance(value, str) and value.startswith(_WEB) else None
                label = []
            elif token.type in ("text", "code_inline") and href is not None:
                label.append(token.content)
            elif token.type == "link_close" and href is not None:
                if "".join(label).strip() not in (href, href.rstrip("/")):
                    note = Token("text", "", 0)
                    note.content = f" ({href})"
                    children.append(note)
                href = None
        block.children = children


def answer_markdown_parser() -> MarkdownIt:
    """Textual's "gfm-like" parser plus link targets shown after their text."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("show_link_targets", _show_link_targets)
    return parser

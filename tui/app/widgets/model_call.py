"""The parts of a tool box that stand for a call to a model (``ask_model``; the same family as a
subagent's ``task`` box): the wait ("consulting openai/gpt-5.1 … 12s"), the account once it
answered (model, tokens, cost) and the answer drawn as Markdown, collapsed like any tool output.

Everything shown comes from the tool's details or the model's answer, so it is cleaned and
never parsed as markup.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip

from baton.tools.details import ModelCallDetails
from baton.tui.app.render import clean, format_cost, format_duration, format_tokens, one_line
from baton.tui.app.widgets.paint import RenderContext


def waiting_status(doing: str, elapsed: float) -> Content:
    """``running… 1.2s`` / ``consulting openai/gpt-5.1 … 3.0s``: a running call's clock."""
    return Content.styled(f"{doing}… {elapsed:.1f}s", "$text-muted")


def consulting(model: str | None) -> str:
    """What a call waiting on ``model`` is doing (``running`` while the model is not known)."""
    return f"consulting {one_line(model, 80)} " if model else "running"


def usage_facts(details: ModelCallDetails, duration: float | None = None) -> Content:
    """``openai/gpt-5.1 · ↑1.2k ↓340 · 5.0k cache read · $0.0123 · 4.2s`` (``cost unknown`` for a
    model the catalog has no price for)."""
    facts: list[str] = []
    if details.model:
        facts.append(one_line(details.model, 80))
    if details.input or details.output:
        facts.append(f"↑{format_tokens(details.input)} ↓{format_tokens(details.output)}")
    if details.cache_read:
        facts.append(f"{format_tokens(details.cache_read)} cache read")
    if details.cost:
        facts.append(format_cost(details.cost))
    elif details.unpriced:
        facts.append("cost unknown")
    if duration is not None:
        facts.append(format_duration(duration))
    return Content.styled(" · ".join(facts), "$text-muted")


def answer_lines(ctx: RenderContext, text: str, *, indent: int, preview_lines: int) -> list[Strip]:
    """A model's answer as Markdown under a box's header: all of it with Ctrl+O, else its first
    ``preview_lines`` rendered lines and how many more there are."""
    strips = ctx.painter.markdown(clean(text), max(ctx.width - indent, 1))
    hidden = len(strips) - preview_lines
    if hidden > 0 and not ctx.expand_tools:
        strips = strips[:preview_lines]
    if indent:
        pad = Segment(" " * indent)
        strips = [Strip([pad, *strip], strip.cell_length + indent) for strip in strips]
    if hidden > 0 and not ctx.expand_tools:
        strips += ctx.content(Content.styled(f"… {hidden} more lines (Ctrl+O to expand)", "$text-muted"),
                              indent=indent)
    return strips


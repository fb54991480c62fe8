"""Safe rendering of untrusted text, and the small formatters the widgets share.

Every string that comes from a model, a tool or a file goes through :func:`clean` and is shown as
plain text (:class:`textual.content.Content` built from text, never parsed as markup): terminal
control sequences are stripped (``tools.strip_control_sequences``: escape sequences removed,
carriage-return overwrites resolved the way a terminal shows them, other controls dropped) and
tabs are expanded.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.content import Content

from baton.tools.sanitize import strip_control_sequences

# Belt and braces after strip_control_sequences: C0 controls except tab and newline, DEL, C1.
_STRAY_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_TAB_WIDTH = 4
# An escape sequence may be split across two streamed chunks: hold back a short unfinished tail.
_HOLD_BACK = 256


def clean(text: str) -> str:
    """``text`` with control sequences stripped, ``\\r`` overwrites resolved and tabs expanded."""
    if not text:
        return ""
    text = _STRAY_CONTROLS.sub("", strip_control_sequences(text))
    if "\t" in text:
        text = text.expandtabs(_TAB_WIDTH)
    return text


def safe(text: str, style: str = "") -> Content:
    """Untrusted ``text`` as a :class:`Content` (cleaned; never interpreted as markup)."""
    cleaned = clean(text)
    return Content.styled(cleaned, style) if style else Content(cleaned)


class StreamCleaner:
    """Cleans streamed text chunk by chunk, holding back an escape sequence cut in two.

    ``feed`` returns the cleaned text that is safe to show now; ``finish`` returns the rest.
    """

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, chunk: str) -> str:
        """Clean ``chunk`` (prefixed by any held-back text); may hold back an unfinished tail."""
        text = self._held + chunk
        self._held = ""
        cut = _unfinished_tail(text)
        if cut is not None:
            text, self._held = text[:cut], text[cut:]
        return clean(text)

    def finish(self) -> str:
        """Clean and return whatever is still held back."""
        text, self._held = self._held, ""
        return clean(text)


def _unfinished_tail(text: str) -> int | None:
    """Index where a possibly unfinished escape sequence (or a lone ``\\r``) starts, if any."""
    start = max(len(text) - _HOLD_BACK, 0)
    esc = max(text.rfind("\x1b", start), text.rfind("\x9b", start), text.rfind("\x9d", start))
    if esc != -1 and "\n" not in text[esc:]:
        return esc
    if text.endswith("\r"):
        return len(text) - 1
    return None


# ---------------------------------------------------------------------------------------------
# Formatters


def short_path(path: str | os.PathLike[str], cwd: Path | None = None) -> str:
    """``path`` relative to ``cwd`` when inside it, else with ``~`` for the home directory."""
    text = str(path)
    if cwd is not None:
        try:
            rel = Path(text).relative_to(cwd)
        except ValueError:
            pass
        else:
            return str(rel) if str(rel) != "." else "."
    home = str(Path.home())
    if home and home != "/" and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text


def format_tokens(count: int) -> str:
    """A token count the way a footer shows it: ``950``, ``12.3k``, ``1.2M``."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}M"


def format_cost(dollars: float) -> str:
    """A cost in dollars with sensible precision."""
    if dollars == 0:
        return "$0.00"
    if dollars < 0.01:
        return f"${dollars:.4f}"
    return f"${dollars:.2f}" if dollars < 100 else f"${dollars:.0f}"


def format_duration(seconds: float) -> str:
    """``35ms``, ``4.2s``, ``12s``, ``3m05s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def format_bytes(size: int) -> str:
    """``512 B``, ``12.7 kB``, ``3.1 MB`` (decimal units)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def fit_cells(text: str, width: int) -> str:
    """The first line of cleaned ``text`` cut (with an ellipsis) and padded to exactly ``width``
    terminal cells, so that columns line up with wide characters (CJK, emoji) in them."""
    from rich.cells import cell_len, set_cell_size

    line = clean(text).strip().split("\n", 1)[0]
    if cell_len(line) > width:
        line = set_cell_size(line, max(width - 1, 0)).rstrip() + "…"
    return set_cell_size(line, width)


def one_line(text: str, width: int = 80) -> str:
    """The first line of cleaned ``text``, cut to ``width`` characters with an ellipsis."""
    line = clean(text).strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"

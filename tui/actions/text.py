"""Small helpers for the plain text of reports and errors (the front ends clean and style it)."""

from __future__ import annotations

import os
from pathlib import Path


def shorten(text: str, width: int = 80) -> str:
    """The first line of ``text``, cut to ``width`` characters with an ellipsis."""
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def home_relative(path: str | os.PathLike[str]) -> str:
    """``path`` with ``~`` for the home directory."""
    text = str(path)
    home = str(Path.home())
    if home and home != "/" and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home):]
    return text

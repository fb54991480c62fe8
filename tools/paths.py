"""Resolve the paths a model writes into absolute paths.

Relative paths are taken against the tool's working directory, ``~`` and ``~/...`` expand to the
home directory, a leading ``@`` (how users and models cite files) is dropped, and the Unicode
spaces models like to emit (no-break space and friends) become plain spaces.
"""

from __future__ import annotations

import os
import re
import unicodedata

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NBSP = "\u202f"


def resolve_path(path: str, cwd: str) -> str:
    """The absolute, normalised form of ``path`` (see the module docstring)."""
    cleaned = _UNICODE_SPACES.sub(" ", path.strip())
    if cleaned.startswith("@"):
        cleaned = cleaned[1:]
    if cleaned == "~" or cleaned.startswith("~/"):
        cleaned = os.path.expanduser("~") + cleaned[1:]
    elif cleaned.startswith("~"):
        cleaned = os.path.expanduser(cleaned)
    if not cleaned:
        cleaned = "."
    return os.path.normpath(os.path.join(cwd, cleaned))


def resolve_existing_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_path`, but when that file does not exist, try the spellings a file
    manager may have used instead: macOS screenshot names (a narrow no-break space before
    ``AM``/``PM``) and the NFC/NFD Unicode forms. Returns the first existing candidate, else the
    plain resolution."""
    resolved = resolve_path(path, cwd)
    if os.path.lexists(resolved):
        return resolved
    candidates = [
        re.sub(r" (AM|PM)\.", _NARROW_NBSP + r"\1.", resolved),
        unicodedata.normalize("NFC", resolved),
        unicodedata.normalize("NFD", resolved),
    ]
    for candidate in candidates:
        if candidate != resolved and os.path.lexists(candidate):
            return candidate
    return resolved


def display_path(absolute: str, cwd: str) -> str:
    """``absolute`` relative to ``cwd`` when it lies inside it, else as is (for messages)."""
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:
        return absolute
    return absolute if rel.startswith("..") else rel

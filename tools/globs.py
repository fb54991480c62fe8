"""Glob patterns as regular expressions, with gitignore's ``**`` rules.

``*`` matches within one path segment, ``?`` one character other than ``/``, ``[...]`` a character
class (``[!...]`` negated), ``\\x`` a literal ``x``. ``**`` as a whole segment matches any number of
segments: ``**/x`` matches ``x`` at any depth, ``a/**`` everything inside ``a``, ``a/**/b`` zero
or more directories between. ``{a,b}`` alternatives are supported (as ripgrep and fd do).
"""

from __future__ import annotations

import re
from functools import lru_cache

_CLASS_SPECIAL = re.compile(r"[\\\[\]&~|^]")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    depth = 0  # inside {...}
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            piece, i = _star(pattern, i)
        elif ch == "[":
            piece, i = _bracket(pattern, i)
        elif ch == "\\" and i + 1 < len(pattern):
            piece, i = re.escape(pattern[i + 1]), i + 2
        else:
            piece, depth = _plain(ch, depth)
            i += 1
        out.append(piece)
    out.extend(")" * depth)
    return "".join(out)


def _star(pattern: str, i: int) -> tuple[str, int]:
    """The regex of the ``*`` or ``**`` at ``i``, and where the pattern goes on."""
    if not pattern.startswith("**", i):
        return "[^/]*", i + 1
    n = len(pattern)
    at_start = i == 0 or pattern[i - 1] == "/"
    j = i
    while j < n and pattern[j] == "*":
        j += 1
    if at_start and (j == n or pattern[j] == "/"):  # a whole ``**`` segment
        return (".*", j) if j == n else ("(?:.*/)?", j + 1)
    return "[^/]*", j


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The character class ``[...]`` at ``i`` (a ``[`` that never closes is literal)."""
    n = len(pattern)
    end = i + 1
    if end < n and pattern[end] in "!^":
        end += 1
    if end < n and pattern[end] == "]":
        end += 1
    while end < n and pattern[end] != "]":
        end += 1
    if end >= n:
        return re.escape("["), i + 1
    body = pattern[i + 1 : end]
    negate = body[:1] in ("!", "^")
    body = _CLASS_SPECIAL.sub(r"\\\g<0>", body[1:] if negate else body)
    return "[" + ("^" if negate else "") + body + "]", end + 1


def _plain(ch: str, depth: int) -> tuple[str, int]:
    """The regex of one other character, and the ``{...}`` depth after it."""
    if ch == "?":
        return "[^/]", depth
    if ch == "{":
        return "(?:", depth + 1
    if ch == "}" and depth:
        return ")", depth - 1
    if ch == "," and depth:
        return "|", depth
    return re.escape(ch), depth


@lru_cache(maxsize=512)
def glob_regex(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """A compiled regex matching whole paths (``/``-separated) against ``pattern``."""
    return re.compile(rf"(?s:{_translate(pattern)})\Z", re.IGNORECASE if ignore_case else 0)


class PathGlob:
    """A glob for file searches: without a ``/`` it matches the file name at any depth
    (``*.py``); with one it matches the path relative to the search root (``src/**/*.ts``).
    A leading ``!`` negates it."""

    def __init__(self, pattern: str) -> None:
        self.negated = pattern.startswith("!")
        body = pattern[1:] if self.negated else pattern
        body = body[2:] if body.startswith("./") else body
        self.by_name = "/" not in body.rstrip("/")
        self.regex = glob_regex(body.lstrip("/") if not self.by_name else body.rstrip("/"))

    def matches(self, rel_path: str) -> bool:
        """Whether ``rel_path`` (relative, ``/``-separated) matches (negation applied)."""
        subject = rel_path.rsplit("/", 1)[-1] if self.by_name else rel_path
        return bool(self.regex.match(subject)) != self.negated

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
    n = len(pattern)
    depth = 0  # inside {...}
    while i < n:
        ch = pattern[i]
        if ch == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i
                while j < n and pattern[j] == "*":
                    j += 1
                at_end = j == n or pattern[j] == "/"
                if at_start and at_end:
                    if j == n:
                        out.append(".*")
                        i = j
                    else:
                        out.append("(?:.*/)?")
                        i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = i + 1
            if end < n and pattern[end] in "!^":
                end += 1
            if end < n and pattern[end] == "]":
                end += 1
            while end < n and pattern[end] != "]":
                end += 1
            if end >= n:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = _CLASS_SPECIAL.sub(r"\\\g<0>", body[1:] if negate else body)
                out.append("[" + ("^" if negate else "") + body + "]")
                i = end
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    out.extend(")" * depth)
    return "".join(out)


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

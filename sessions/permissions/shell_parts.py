"""Split a shell command into the simple commands it runs, for rule matching.

``a && b``, ``a || b``, ``a; b``, ``a | b``, ``a & b`` and newlines separate commands; the inside
of ``$(...)``, ``<(...)``, ``>(...)`` and backticks is a command of its own (and leaves a
placeholder in the command around it). Quotes are honoured: nothing inside single quotes splits,
and inside double quotes only substitutions do. This is not a shell parser; it only has to err on
the side of more parts (an allow rule then has to match each of them), never fewer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SUBST = "$(…)"
"""What a substitution leaves in the command around it."""

_SEPARATORS = ("&&", "||", ";", "|", "&", "\n")
_SPECIAL = re.compile(r"[\\'\"$<>`(){}&|;\n]")
_DQ_SPECIAL = re.compile(r'[\\"$<>`]')


@dataclass(frozen=True, slots=True)
class CommandParts:
    """The simple commands of a shell command line, and whether any writes to a file."""

    parts: tuple[str, ...]
    redirects: bool
    """Some part sends output to a file (``>``, ``>>``): an allow rule must say so itself."""


_CACHE_LIMIT = 4096
"""Commands up to this many characters are remembered (the policy splits each one several times)."""


def split_command(command: str) -> CommandParts:
    """The simple commands in ``command`` (whitespace-normalised, empty ones dropped)."""
    return _split_cached(command) if len(command) <= _CACHE_LIMIT else _split_command(command)


@lru_cache(maxsize=512)
def _split_cached(command: str) -> CommandParts:
    return _split_command(command)


def _split_command(command: str) -> CommandParts:
    parts: list[str] = []
    redirects = _split(command, parts)
    cleaned = tuple(p for p in (" ".join(part.split()) for part in parts) if p)
    return CommandParts(cleaned, redirects)


def _split(command: str, out: list[str]) -> bool:
    """Append the commands of ``command`` to ``out``; True when one redirects output to a file."""
    current: list[str] = []
    redirects = False
    i = 0
    n = len(command)
    quote: str | None = None
    while i < n:
        if quote == "'":
            end = command.find("'", i)
            end = n - 1 if end < 0 else end
            current.append(command[i : end + 1])
            quote = None
            i = end + 1
            continue
        jump = (_DQ_SPECIAL if quote == '"' else _SPECIAL).search(command, i)
        if jump is None:
            current.append(command[i:])
            break
        if jump.start() > i:
            current.append(command[i : jump.start()])
            i = jump.start()
        ch = command[i]
        if ch == "\\" and i + 1 < n:
            current.append(command[i : i + 2])
            i += 2
            continue
        if ch in "$<>" and command.startswith("(", i + 1):
            end = _matching_paren(command, i + 2)
            redirects |= _split(command[i + 2 : end], out)
            current.append(SUBST)
            i = end + 1
            continue
        if ch == "`":
            end = command.find("`", i + 1)
            end = n if end < 0 else end
            redirects |= _split(command[i + 1 : end], out)
            current.append(SUBST)
            i = end + 1
            continue
        if quote == '"':
            current.append(ch)
            if ch == '"':
                quote = None
            i += 1
            continue
        if ch in "'\"":
            quote = ch
            current.append(ch)
            i += 1
            continue
        if ch == "(" or ch == ")" or ch == "{" or ch == "}":
            # Subshells and groups: their commands are parts like any other.
            out.append("".join(current))
            current = []
            i += 1
            continue
        sep = next((s for s in _SEPARATORS if command.startswith(s, i)), None)
        if sep is not None and not (sep == "&" and _is_fd_redirect(command, i)):
            out.append("".join(current))
            current = []
            i += len(sep)
            continue
        if ch == ">" and not command.startswith(">&", i) and not _is_devnull(command, i):
            redirects = True
        current.append(ch)
        i += 1
    out.append("".join(current))
    return redirects


def _matching_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing a group opened just before ``start`` (or the end of text)."""
    depth = 1
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"':
                i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _is_fd_redirect(text: str, i: int) -> bool:
    """``2>&1`` / ``>&2`` / ``&>``: an ``&`` that belongs to a redirection, not a separator."""
    return (i > 0 and text[i - 1] in "<>") or text.startswith("&>", i)


def _is_devnull(text: str, i: int) -> bool:
    rest = text[i:].lstrip(">").lstrip()
    return rest.startswith("/dev/null")

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
    return _Splitter(command, out).run()


class _Splitter:
    """One pass over a command line: text up to the next special character is copied, each
    special character (quote, escape, substitution, group, separator, redirection) handled."""

    def __init__(self, command: str, out: list[str]) -> None:
        self.command = command
        self.out = out
        self.current: list[str] = []
        self.redirects = False
        self.i = 0
        self.quote: str | None = None

    def run(self) -> bool:
        command, n = self.command, len(self.command)
        while self.i < n:
            if self.quote == "'":
                end = command.find("'", self.i)
                self._take((n - 1 if end < 0 else end) + 1 - self.i)
                self.quote = None
                continue
            jump = (_DQ_SPECIAL if self.quote == '"' else _SPECIAL).search(command, self.i)
            if jump is None:
                self._take(n - self.i)
                break
            if jump.start() > self.i:
                self._take(jump.start() - self.i)
            self._special(command[self.i])
        self.out.append("".join(self.current))
        return self.redirects

    def _special(self, ch: str) -> None:
        command, i = self.command, self.i
        if ch == "\\" and i + 1 < len(command):
            self._take(2)
        elif ch in "$<>" and command.startswith("(", i + 1):
            self._substitution(i + 2, _matching_paren(command, i + 2))
        elif ch == "`":
            end = command.find("`", i + 1)
            self._substitution(i + 1, len(command) if end < 0 else end)
        elif self.quote == '"':
            self.quote = None if ch == '"' else self.quote
            self._take(1)
        elif ch in "'\"":
            self.quote = ch
            self._take(1)
        elif ch in "(){}":  # subshells and groups: their commands are parts like any other
            self._cut(1)
        else:
            self._separator_or_text(ch)

    def _separator_or_text(self, ch: str) -> None:
        command, i = self.command, self.i
        sep = next((s for s in _SEPARATORS if command.startswith(s, i)), None)
        if sep is not None and not (sep == "&" and _is_fd_redirect(command, i)):
            self._cut(len(sep))
            return
        if ch == ">" and not command.startswith(">&", i) and not _is_devnull(command, i):
            self.redirects = True
        self._take(1)

    def _take(self, count: int) -> None:
        """Copy the next ``count`` characters into the current command."""
        self.current.append(self.command[self.i : self.i + count])
        self.i += count

    def _cut(self, width: int) -> None:
        """End the current command at a separator ``width`` characters wide."""
        self.out.append("".join(self.current))
        self.current = []
        self.i += width

    def _substitution(self, start: int, end: int) -> None:
        """``$(...)``, ``<(...)``, ``>(...)`` or a backquoted command: its commands are parts too."""
        self.redirects |= _split(self.command[start:end], self.out)
        self.current.append(SUBST)
        self.i = end + 1


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

"""Lone UTF-16 surrogates: join the pairs a stream split, replace the rest.

Python strings can hold surrogate code points that UTF-8 cannot encode: JSON escapes such as
``"\\ud83d"`` decode to one, and a provider may send an emoji's two halves in two deltas (valid
JSON each). Left alone, the first UTF-8 encode (the session file, the next request) raises.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH_FIRST, _HIGH_LAST = 0xD800, 0xDBFF


def has_surrogates(text: str) -> bool:
    """True when ``text`` holds any surrogate code point (paired or not)."""
    return _SURROGATE.search(text) is not None


def join_surrogates(text: str) -> str:
    """``text`` with each high+low surrogate pair joined into its character and every lone
    surrogate replaced by U+FFFD; text without surrogates comes back as is."""
    if not has_surrogates(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateCarry:
    """Joins surrogate pairs across the deltas of one stream.

    :meth:`feed` returns the delta ready to append: a trailing high surrogate is held back until
    the next delta (whose leading low surrogate completes it); :meth:`flush` returns what is
    still held (as U+FFFD) when the block ends."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        """The part of ``held + delta`` that is complete, pairs joined."""
        if not self._held and delta.isascii():  # the common case, decided without a regex
            return delta
        text = self._held + delta
        self._held = ""
        if not text or not has_surrogates(text):
            return text
        if _HIGH_FIRST <= ord(text[-1]) <= _HIGH_LAST:
            self._held, text = text[-1], text[:-1]
        return join_surrogates(text)

    def flush(self) -> str:
        """Whatever is held back (a high surrogate no low one followed), as U+FFFD."""
        held, self._held = self._held, ""
        return join_surrogates(held)

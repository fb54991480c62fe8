"""Finding secret values in text, in the forms a command turns them into.

A key printed by a command rarely stays as it was: ``base64`` wraps it at 76 columns inside a
longer stream, ``xxd -p`` and ``od`` print it in hex, ``curl`` URL-encodes it, ``tr`` changes its
case, ``fold`` breaks it over lines. :func:`secret_forms` lists the strings one value becomes
(itself, URL-encoded, hex, base64 in each of the three alignments a value can have inside a
longer base64 stream, in the standard and the URL-safe alphabets); :class:`SecretMatcher` finds
any of them in a text, whatever their letter case and wherever line breaks were put inside them.

The matcher is built once per set of values and is made for the common case, a text that holds
none of them: one pass lower-cases the text and drops its line breaks, then each form is looked
for with ``str.__contains__`` (C speed, and faster the longer the form). Only a form found there
is matched exactly, by a regular expression that allows line breaks between any two characters,
on the original text, so the spans replaced are exactly where the value was.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import quote

_BREAKS = "[\r\n]*"
_MIN_PREFIX = 6
"""A streamed text ending in this many characters of a form holds them back until it goes on."""


def _base64_cores(data: bytes) -> list[str]:
    """The base64 characters fixed by ``data`` alone when it starts 0, 1 or 2 bytes into a stream
    (the characters that also hold bits of the neighbouring bytes are left out)."""
    cores: list[str] = []
    for offset in (0, 1, 2):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = -(-8 * offset // 6)  # the first character whose six bits are all the value's
        last = 8 * (offset + len(data)) // 6  # one past the last such character
        core = encoded[first:last]
        if core:
            cores.append(core)
    return cores


def secret_forms(value: str) -> list[str]:
    """The strings ``value`` may appear as in a command's output, without duplicates:
    itself, URL-encoded, hex, and the base64 cores (standard and URL-safe)."""
    data = value.encode("utf-8")
    forms = [value, quote(value, safe=""), data.hex()]
    for core in _base64_cores(data):
        forms.append(core)
        forms.append(core.replace("+", "-").replace("/", "_"))
    return list(dict.fromkeys(forms))


def _fold(text: str) -> str:
    """The text the quick check searches: lower case, line breaks removed."""
    if "\n" in text:
        text = text.replace("\n", "")
    if "\r" in text:
        text = text.replace("\r", "")
    return text.lower()


class SecretMatcher:
    """Finds and replaces every form (:func:`secret_forms`) of a fixed set of values."""

    __slots__ = ("_longest", "_needles", "_patterns", "_prefixes", "replacement")

    def __init__(self, values: Iterable[str], replacement: str = "[redacted]") -> None:
        needles: dict[str, None] = {}
        for value in values:
            for form in secret_forms(value):
                needles[form.lower()] = None
        # Longest first: where two forms overlap, the longer one decides the span.
        self._needles = tuple(sorted(needles, key=len, reverse=True))
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._prefixes: frozenset[str] | None = None
        self._longest = max((len(n) for n in self._needles), default=0)
        self.replacement = replacement

    def __bool__(self) -> bool:
        return bool(self._needles)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the values are in ``text``: sorted, non-overlapping ``(start, end)`` pairs."""
        if not self._needles or len(text) < len(self._needles[-1]):
            return []
        folded = _fold(text)
        found = [needle for needle in self._needles if needle in folded]
        if not found:
            return []
        spans: list[tuple[int, int]] = []
        for needle in found:
            spans.extend(m.span() for m in self._pattern(needle).finditer(text))
        return _merge(spans)

    def redact(self, text: str) -> str:
        """``text`` with every form of every value replaced."""
        spans = self.spans(text)
        return _replace(text, spans, self.replacement) if spans else text

    def redact_partial(self, text: str) -> str:
        """:meth:`redact` for a text that is still growing (streamed output): a tail that may be
        the beginning of a value is held back until the rest of it shows."""
        text = self.redact(text)
        cut = self._open_tail(text)
        return text if cut is None else text[:cut]

    def split_open(self, text: str) -> tuple[str, str]:
        """``text`` as (what can be redacted now, a tail that may begin a value): for a stream
        redacted piece by piece, the tail waits for the next piece."""
        cut = self._open_tail(text)
        return (text, "") if cut is None else (text[:cut], text[cut:])

    def _pattern(self, needle: str) -> re.Pattern[str]:
        pattern = self._patterns.get(needle)
        if pattern is None:
            source = _BREAKS.join(re.escape(char) for char in needle)
            pattern = self._patterns[needle] = re.compile(source, re.IGNORECASE | re.ASCII)
        return pattern

    def _open_tail(self, text: str) -> int | None:
        """Where the tail of ``text`` that begins some form starts, or ``None``."""
        if not self._needles:
            return None
        if self._prefixes is None:
            self._prefixes = frozenset(
                needle[:size] for needle in self._needles for size in range(_MIN_PREFIX, len(needle))
            )
        start = max(0, len(text) - 2 * self._longest)  # line breaks may double a form's length
        positions = [i for i in range(start, len(text)) if text[i] not in "\r\n"]
        folded = "".join(text[i] for i in positions).lower()
        for j in range(max(0, len(folded) - self._longest), len(folded) - _MIN_PREFIX + 1):
            if folded[j:] in self._prefixes:
                return positions[j]
        return None


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _replace(text: str, spans: list[tuple[int, int]], replacement: str) -> str:
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(replacement)
        at = end
    parts.append(text[at:])
    return "".join(parts)

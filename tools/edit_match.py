"""Find-and-replace for the edit tool: exact match first, then a forgiving one.

Content is handled with LF line endings (callers convert CRLF in and out) and without a BOM.

The forgiving match compares texts after :func:`normalize_for_fuzzy_match` (Unicode NFKC, trailing
whitespace stripped per line, smart quotes to ASCII quotes, Unicode dashes to ``-``, special
spaces to a plain space). When any edit needs it, every edit is located in that normalised view,
and the result is written back so that only the lines an edit touches change: every other line
keeps its original bytes.

All edits are matched against the original content (not one after another); each must match
exactly once and edits must not overlap. Errors are :class:`EditMatchError` with the message the
model reads.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from baton.providers.errors import ToolError

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


class EditMatchError(ToolError, ValueError):
    """An edit could not be applied; the message says why and how to fix the call."""


@dataclass(slots=True, frozen=True)
class Edit:
    """One replacement: ``old_text`` (must be unique in the file) becomes ``new_text``."""

    old_text: str
    new_text: str


@dataclass(slots=True)
class AppliedEdits:
    """The content before and after (both LF, no BOM) and whether the forgiving match was used.

    ``replacements`` lists the changed spans as ``(start, end, text)`` in ``base_content``'s
    offsets, in order and disjoint: applying them to ``base_content`` gives ``new_content``, and
    callers use them to splice the original bytes so nothing outside a span changes."""

    base_content: str
    new_content: str
    used_fuzzy_match: bool
    replacements: list[tuple[int, int, str]]


@dataclass(slots=True)
class _Match:
    edit_index: int
    start: int
    length: int
    new_text: str


def detect_line_ending(content: str) -> str:
    """The style of the first line break: ``"\\r\\n"``, ``"\\n"``, or ``"\\r"`` (old Mac files)."""
    lf = content.find("\n")
    if lf < 0:
        return "\r" if "\r" in content else "\n"
    return "\r\n" if lf > 0 and content[lf - 1] == "\r" else "\n"


def normalize_to_lf(text: str) -> str:
    """CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def lf_offset_mapper(text: str) -> Callable[[int], int]:
    """Map an offset in ``normalize_to_lf(text)`` back to the same place in ``text``.

    Only a CRLF pair changes length (two characters become one); a lone CR maps one to one. An
    offset at a normalised line break lands on its CR, the one after it past the LF."""
    folded = [match.start() - index for index, match in enumerate(re.finditer("\r\n", text))]
    return lambda offset: offset + bisect.bisect_left(folded, offset)


def restore_line_endings(text: str, ending: str) -> str:
    """LF text back to ``ending``."""
    return text if ending == "\n" else text.replace("\n", ending)


def strip_bom(content: str) -> tuple[str, str]:
    """``(bom, text)``: the UTF-8 BOM (or ``""``) and the text without it."""
    return ("\ufeff", content[1:]) if content.startswith("\ufeff") else ("", content)


def normalize_for_fuzzy_match(text: str) -> str:
    """The forgiving view of ``text`` used when the exact text is not found."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


def _count(haystack: str, needle: str) -> int:
    return haystack.count(needle) if needle else 0


def apply_edits(content: str, edits: list[Edit], path: str) -> AppliedEdits:
    """Apply ``edits`` to LF ``content`` (see the module docstring). Raises EditMatchError."""
    if not edits:
        raise EditMatchError("Edit tool input is invalid. edits must contain at least one replacement.")
    total = len(edits)
    normalized = [Edit(normalize_to_lf(e.old_text), normalize_to_lf(e.new_text)) for e in edits]
    for index, edit in enumerate(normalized):
        if not edit.old_text:
            where = "oldText" if total == 1 else f"edits[{index}].oldText"
            raise EditMatchError(f"{where} must not be empty in {path}.")

    use_fuzzy = any(edit.old_text not in content for edit in normalized)
    if use_fuzzy:
        base = normalize_for_fuzzy_match(content)
        needles = [normalize_for_fuzzy_match(edit.old_text) for edit in normalized]
    else:
        base = content
        needles = [edit.old_text for edit in normalized]

    matches: list[_Match] = []
    for index, (edit, needle) in enumerate(zip(normalized, needles, strict=True)):
        start = base.find(needle) if needle else -1
        if start < 0:
            raise EditMatchError(_not_found(path, index, total, content, edit.old_text))
        occurrences = _count(base, needle)
        if occurrences > 1:
            raise EditMatchError(_duplicate(path, index, total, occurrences))
        matches.append(_Match(index, start, len(needle), edit.new_text))

    matches.sort(key=lambda m: m.start)
    for previous, current in itertools.pairwise(matches):
        if previous.start + previous.length > current.start:
            raise EditMatchError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )

    if use_fuzzy:
        replacements = _replacements_preserving_lines(content, base, matches)
    else:
        replacements = [(m.start, m.start + m.length, m.new_text) for m in matches]
    new_content = splice(content, replacements)
    if new_content == content:
        if total == 1:
            raise EditMatchError(
                f"No changes made to {path}. The replacement produced identical content. This might "
                "indicate an issue with special characters or the text not existing as expected."
            )
        raise EditMatchError(f"No changes made to {path}. The replacements produced identical content.")
    return AppliedEdits(content, new_content, use_fuzzy, replacements)


def splice(text: str, replacements: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` span (ordered, disjoint) replaced by ``new``."""
    pieces: list[str] = []
    cursor = 0
    for start, end, new in replacements:
        pieces.append(text[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _apply(text: str, matches: list[_Match], offset: int) -> str:
    pieces: list[str] = []
    cursor = 0
    for match in matches:
        start = match.start - offset
        pieces.append(text[cursor:start])
        pieces.append(match.new_text)
        cursor = start + match.length
    pieces.append(text[cursor:])
    return "".join(pieces)


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line including its newline."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        spans.append((start, end))
        start = end
    return spans


def _replacements_preserving_lines(
    original: str, base: str, matches: list[_Match]
) -> list[tuple[int, int, str]]:
    """Spans of ``original`` to replace for ``matches`` (offsets in the normalised ``base``): the
    lines they touch come from ``base`` with the replacements; every other line stays as is."""
    original_spans = _line_spans(original)
    base_spans = _line_spans(base)
    if len(original_spans) != len(base_spans):
        return [(0, len(original), _apply(base, matches, 0))]
    starts = [span[0] for span in base_spans]

    def line_of(offset: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    groups: list[tuple[int, int, list[_Match]]] = []
    for match in matches:
        first = line_of(match.start)
        last = line_of(max(match.start, match.start + match.length - 1)) + 1
        if groups and first < groups[-1][1]:
            start, end, members = groups[-1]
            groups[-1] = (start, max(end, last), [*members, match])
        else:
            groups.append((first, last, [match]))

    out: list[tuple[int, int, str]] = []
    for first, last, members in groups:
        region_start = base_spans[first][0]
        region_end = base_spans[last - 1][1]
        new = _apply(base[region_start:region_end], members, region_start)
        out.append((original_spans[first][0], original_spans[last - 1][1], new))
    return out


def _not_found(path: str, index: int, total: int, content: str, old_text: str) -> str:
    head = f"Could not find the exact text in {path}." if total == 1 else f"Could not find edits[{index}] in {path}."
    hint = _closest_context(content, old_text)
    return f"{head} The old text must match exactly including all whitespace and newlines.\n{hint}"


def _duplicate(path: str, index: int, total: int, occurrences: int) -> str:
    if total == 1:
        return (
            f"Found {occurrences} occurrences of the text in {path}. The text must be unique. "
            "Please provide more context to make it unique."
        )
    return (
        f"Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be unique. "
        "Please provide more context to make it unique."
    )


def _closest_context(content: str, old_text: str) -> str:
    """A few numbered lines around where the edit was probably meant to go."""
    lines = content.split("\n")
    if not content:
        return "File is empty."
    old_lines = old_text.split("\n")
    first = next((line.strip() for line in old_lines if line.strip()), "")
    if first:
        for length in range(min(len(first), 60), 9, -10):
            needle = first[:length].strip()
            index = next((i for i, line in enumerate(lines) if needle and needle in line), -1)
            if index >= 0:
                start = max(0, index - 2)
                end = min(len(lines), index + len(old_lines) + 3)
                snippet = "\n".join(f"  {start + i + 1}: {line}" for i, line in enumerate(lines[start:end]))
                return f"Closest match is around line {index + 1}:\n{snippet}"
    preview = "\n".join(f"  {i + 1}: {line}" for i, line in enumerate(lines[:5]))
    return f"File starts with:\n{preview}"

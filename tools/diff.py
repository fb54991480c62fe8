"""Line diffs for the edit tool's details.

:func:`display_diff` is pi's display format, which the UI renders: one line per diff line with the
line number (new-file numbers for ``+``, old-file numbers for ``-`` and context), a few context
lines around each change and `` ...`` where unchanged lines are skipped::

    - 3 old line
    + 3 new line
      4 context

:func:`unified_patch` is a standard unified diff (``---``/``+++``/``@@`` hunks) for exports and
tools that apply patches. Both diff only the region between the common prefix and suffix, so a
one-line edit in a large file costs little.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(slots=True)
class DisplayDiff:
    """A rendered diff and the first changed line (1-based, in the new file; None if equal)."""

    diff: str
    first_changed_line: int | None
    added: int
    removed: int


def _split(text: str) -> list[str]:
    if not text:
        return []  # no lines (a new file), not one empty line
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


Opcode = tuple[str, int, int, int, int]


def _opcodes(old: list[str], new: list[str]) -> list[Opcode]:
    """difflib-style opcodes; only the region between the common prefix and suffix is matched."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    ops: list[Opcode] = []
    if prefix:
        ops.append(("equal", 0, prefix, 0, prefix))
    matcher = difflib.SequenceMatcher(None, old[prefix : len(old) - suffix], new[prefix : len(new) - suffix],
                                      autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        ops.append((tag, i1 + prefix, i2 + prefix, j1 + prefix, j2 + prefix))
    if suffix:
        ops.append(("equal", len(old) - suffix, len(old), len(new) - suffix, len(new)))
    return ops


def _parts(old: list[str], new: list[str]) -> list[tuple[str, list[str]]]:
    """The diff as runs of ``("equal"|"delete"|"insert", lines)``, deletions before insertions."""
    parts: list[tuple[str, list[str]]] = []

    def add(kind: str, lines: list[str]) -> None:
        if not lines:
            return
        if parts and parts[-1][0] == kind:
            parts[-1][1].extend(lines)
        else:
            parts.append((kind, list(lines)))

    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag == "equal":
            add("equal", old[i1:i2])
        else:
            add("delete", old[i1:i2])
            add("insert", new[j1:j2])
    return parts


class _Grouper(difflib.SequenceMatcher):
    """A SequenceMatcher whose opcodes are given (to reuse difflib's hunk grouping)."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._given = opcodes

    def get_opcodes(self) -> list[Opcode]:  # type: ignore[override]
        return self._given


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"


@dataclass(slots=True)
class _Window:
    """The part of two texts that differs, widened to whole lines plus up to ``context`` equal
    lines on each side; ``head``/``tail`` count the identical lines left out before and after."""

    old: str
    new: str
    head: int
    tail: int


_BLOCK = 1 << 16


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    start = 0
    while start < limit:
        stop = min(limit, start + _BLOCK)
        if a[start:stop] != b[start:stop]:
            lo, hi = start, stop
            while lo < hi:  # first mismatch in [lo, hi)
                mid = (lo + hi) // 2
                if a[start : mid + 1] == b[start : mid + 1]:
                    lo = mid + 1
                else:
                    hi = mid
            return lo
        start = stop
    return limit


def _common_suffix(a: str, b: str, limit: int) -> int:
    size = 0
    while size < limit:
        step = min(limit - size, _BLOCK)
        if a[len(a) - size - step : len(a) - size] != b[len(b) - size - step : len(b) - size]:
            lo, hi = 0, step  # length of the common suffix inside this block
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if a[len(a) - size - mid : len(a) - size] == b[len(b) - size - mid : len(b) - size]:
                    lo = mid
                else:
                    hi = mid - 1
            return size + lo
        size += step
    return limit


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _window(old_text: str, new_text: str, context: int) -> _Window:
    prefix = _common_prefix(old_text, new_text)
    prefix = old_text.rfind("\n", 0, prefix) + 1  # back to a line start
    suffix = _common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - prefix)
    cut = len(old_text) - suffix
    if suffix and cut > 0 and old_text[cut - 1] != "\n":  # forward to a line start
        newline = old_text.find("\n", cut)
        cut = len(old_text) if newline < 0 else newline + 1
    suffix = len(old_text) - cut
    start = prefix
    for _ in range(context):  # widen by up to ``context`` lines before ...
        if start == 0:
            break
        start = old_text.rfind("\n", 0, start - 1) + 1
    end = cut
    for _ in range(context):  # ... and after
        if end >= len(old_text):
            break
        newline = old_text.find("\n", end)
        end = len(old_text) if newline < 0 else newline + 1
    head = old_text.count("\n", 0, start)
    tail = _line_count(old_text[end:])
    return _Window(old_text[start:end], new_text[start : len(new_text) - (len(old_text) - end)], head, tail)


def display_diff(old_text: str, new_text: str, context_lines: int = 4) -> DisplayDiff:
    """pi's line-numbered display diff of two texts (see the module docstring)."""
    if old_text == new_text:
        return DisplayDiff("", None, 0, 0)
    window = _window(old_text, new_text, context_lines)
    parts = _parts(_split(window.old), _split(window.new))
    width = len(str(max(old_text.count("\n"), new_text.count("\n")) + 1))
    writer = _DisplayWriter(width, context_lines)
    if parts and parts[0][0] != "equal":
        writer.skip(window.head)
    for index, (kind, lines) in enumerate(parts):
        if kind == "equal":
            writer.equal(lines, window, before=index > 0, after=index < len(parts) - 1)
        else:
            writer.changed(kind == "insert", lines)
    if parts and parts[-1][0] != "equal":
        writer.skip(window.tail)
    return DisplayDiff("\n".join(writer.out), writer.first_changed, writer.added, writer.removed)


class _DisplayWriter:
    """The lines of a display diff, numbered as they are written."""

    def __init__(self, width: int, context_lines: int) -> None:
        self.width = width
        self.context_lines = context_lines
        self.out: list[str] = []
        self.old_no = self.new_no = 1
        self.first_changed: int | None = None
        self.added = self.removed = 0

    def context(self, lines: list[str]) -> None:
        for line in lines:
            self.out.append(f" {str(self.old_no).rjust(self.width)} {line}")
            self.old_no += 1
            self.new_no += 1

    def skip(self, count: int) -> None:
        if count > 0:
            self.out.append(f" {' ' * self.width} ...")
            self.old_no += count
            self.new_no += count

    def changed(self, inserted: bool, lines: list[str]) -> None:
        """Lines added (``inserted``) or removed."""
        if self.first_changed is None:
            self.first_changed = self.new_no
        for line in lines:
            if inserted:
                self.out.append(f"+{str(self.new_no).rjust(self.width)} {line}")
                self.new_no += 1
            else:
                self.out.append(f"-{str(self.old_no).rjust(self.width)} {line}")
                self.old_no += 1
        if inserted:
            self.added += len(lines)
        else:
            self.removed += len(lines)

    def equal(self, lines: list[str], window: _Window, *, before: bool, after: bool) -> None:
        """Unchanged lines: context next to the changes around them, the rest skipped."""
        context_lines = self.context_lines
        if before and after:
            if len(lines) <= 2 * context_lines:
                self.context(lines)
            else:
                self.context(lines[:context_lines])
                self.skip(len(lines) - 2 * context_lines)
                self.context(lines[-context_lines:])
        elif before:
            shown = lines[:context_lines]
            self.context(shown)
            self.skip(len(lines) - len(shown) + window.tail)
        elif after:
            shown = lines[-context_lines:] if context_lines and len(lines) > context_lines else lines
            shown = shown if context_lines else []
            self.skip(window.head + len(lines) - len(shown))
            self.context(shown)


def unified_patch(path: str, old_text: str, new_text: str, context_lines: int = 4) -> str:
    """A standard unified diff of ``path`` (``a/``-less headers, ``context_lines`` of context)."""
    if old_text == new_text:
        return ""
    window = _window(old_text, new_text, context_lines)
    old = _split_keepends(window.old)
    new = _split_keepends(window.new)
    head, tail = window.head, window.tail
    ops = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in _opcodes(old, new)]
    if head:
        ops.insert(0, ("equal", 0, head, 0, head))
    if tail:
        ops.append(("equal", ops[-1][2], ops[-1][2] + tail, ops[-1][4], ops[-1][4] + tail))
    out = [f"--- {path}\n", f"+++ {path}\n"]
    for group in _Grouper(_merge_equal(ops)).get_grouped_opcodes(context_lines):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_patch_line(" ", line) for line in old[i1 - head : i2 - head])
                continue
            out.extend(_patch_line("-", line) for line in old[i1 - head : i2 - head])
            out.extend(_patch_line("+", line) for line in new[j1 - head : j2 - head])
    return "".join(out)


def _merge_equal(ops: list[Opcode]) -> list[Opcode]:
    merged: list[Opcode] = []
    for op in ops:
        if merged and op[0] == "equal" and merged[-1][0] == "equal":
            previous = merged[-1]
            merged[-1] = ("equal", previous[1], op[2], previous[3], op[4])
        else:
            merged.append(op)
    return merged


def _patch_line(mark: str, line: str) -> str:
    if line.endswith("\n"):
        return mark + line
    return f"{mark}{line}\n\\ No newline at end of file\n"


def _split_keepends(text: str) -> list[str]:
    """Split on ``\n`` only (``str.splitlines`` would also split on form feeds and U+2028)."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines

"""The Python grep fallback's search, run as a separate process so an abort can kill it.

A regex with nested repetition (``(a+)+$`` on ``aaaa…!``) can take exponential time inside
``re``, which no thread can interrupt; a child process can be killed at once. This file uses the
standard library only and runs as a script (``python -I -S grep_search.py``) so that the child
starts in tens of milliseconds instead of importing baton.

Protocol: stdin is one JSON object ``{pattern, flags, limit, paths}``; stdout is one JSON object
``{matches: [[path_index, line], ...], more: bool}`` — matches in path order, at most ``limit``.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys

BINARY_SNIFF = 8192
WHOLE_READ_LIMIT = 16 * 1024 * 1024
_NO_PRECHECK = re.compile(r"\\[AZzb]|\(\?<?[=!]")


def search_file(path: str, regex: re.Pattern[str], precheck: re.Pattern[str] | None) -> list[int]:
    """1-based numbers of the lines of ``path`` that ``regex`` matches (binary files, FIFOs,
    devices and a symlink swapped in for the listed file: none)."""
    try:
        # O_NONBLOCK: a FIFO must not block the open; fstat then refuses anything but a file
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return []
        size = info.st_size
        with os.fdopen(fd, "rb") as handle:
            if size <= WHOLE_READ_LIMIT:
                data = handle.read()
                if b"\x00" in data[:BINARY_SNIFF]:
                    return []
                text = data.decode("utf-8", "replace")
                if precheck is not None and not precheck.search(text):
                    return []
                lines = text.split("\n")
                if text.endswith("\n"):
                    lines.pop()
                return [i + 1 for i, line in enumerate(lines) if regex.search(line.removesuffix("\r"))]
            if b"\x00" in handle.read(BINARY_SNIFF):
                return []
            handle.seek(0)
            return [
                i + 1
                for i, raw in enumerate(handle)
                if regex.search(raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace"))
            ]
    except OSError:
        return []


def search(pattern: str, flags: int, limit: int, paths: list[str]) -> tuple[list[tuple[int, int]], bool]:
    """Matches as ``(path index, line)`` in path order, up to ``limit``, and whether more exist."""
    regex = re.compile(pattern, flags)
    precheck = None if _NO_PRECHECK.search(pattern) else re.compile(pattern, flags | re.MULTILINE)
    matches: list[tuple[int, int]] = []
    for index, path in enumerate(paths):
        for line in search_file(path, regex, precheck):
            if len(matches) >= limit:
                return matches, True
            matches.append((index, line))
    return matches, False


def main() -> int:
    """Run one search request from stdin (see the module docstring)."""
    request = json.load(sys.stdin)
    matches, more = search(request["pattern"], request["flags"], request["limit"], request["paths"])
    json.dump({"matches": matches, "more": more}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

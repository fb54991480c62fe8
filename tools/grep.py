"""The ``grep`` tool: search file contents for a regex (or literal) pattern.

Uses ripgrep when it is on PATH, else a Python search (in a child process an abort can kill:
:mod:`tools.grep_search`) with the same defaults: hidden files
searched, ``.git`` skipped, ``.gitignore`` respected (see :mod:`tools.walk`), binary files (a NUL in
the first 8 KB) skipped, symlinks not followed. Output lines are ``path:line: text`` for matches
and ``path-line- text`` for context lines (``--`` between separate context groups), paths
relative to the searched directory. At most ``limit`` matches (default 100) and 50 KB; lines
longer than 500 characters are cut.

``details``: ``{pattern, path, matches, files, limit, limitReached, truncated, linesTruncated,
engine}`` (``engine``: ``"ripgrep" | "python"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.anchored import anchor, open_existing
from baton.tools.globs import PathGlob
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins
from baton.tools.search_common import (
    byte_limit_notice,
    cap_output,
    effective_limit,
    open_root,
    search_root,
    search_title,
    with_notices,
)
from baton.tools.truncate import DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line
from baton.tools.walk import walk

DEFAULT_LIMIT = 100
PYTHON_SEARCH_BUDGET = 120.0
"""Seconds a search may take before it is stopped (the Python fallback, and ripgrep, which waits
forever on a FIFO named ``.gitignore`` in the tree)."""
RIPGREP_MEMORY = 2 * 1024 * 1024 * 1024
"""ripgrep's heap cap: a ``.gitignore`` symlinked to ``/dev/zero`` makes it read without end."""
_SEARCH_SCRIPT = str(Path(__file__).with_name("grep_search.py"))


class GrepParams(ToolParams):
    """Arguments of ``grep``."""

    pattern: str = Field(description="Search pattern (regex or literal string)")
    path: str | None = Field(default=None, description="Directory or file to search (default: current directory)")
    glob: str | None = Field(
        default=None, description="Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"
    )
    ignore_case: bool | None = Field(
        default=None, alias="ignoreCase", description="Case-insensitive search (default: false)"
    )
    literal: bool | None = Field(
        default=None, description="Treat pattern as literal string instead of regex (default: false)"
    )
    context: int | None = Field(
        default=None, description="Number of lines to show before and after each match (default: 0)"
    )
    limit: int | None = Field(default=None, description="Maximum number of matches to return (default: 100)")


@dataclass(slots=True, frozen=True)
class GrepMatch:
    """A matching line: absolute file path and 1-based line number."""

    path: str
    line: int


class GrepTool(AgentTool[GrepParams, JsonObject]):
    """Search file contents (see the module docstring). ``use_ripgrep``: None = when on PATH."""

    name = "grep"
    prompt_summary = "Search file contents for patterns (respects .gitignore)"
    label = "grep"
    kind = "search"
    path_parameter = PathParameter("path", "folder")
    read_only = True
    claude_code_name = "Grep"
    description = (
        "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
        f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
        f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
    )
    parameters = GrepParams

    def __init__(self, cwd: str, use_ripgrep: bool | None = None) -> None:
        self.cwd = cwd
        self.use_ripgrep = use_ripgrep
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``grep TODO in src``."""
        return search_title(cls, args)

    async def run(
        self, tool_call_id: str, params: GrepParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Search (see the module docstring)."""
        args: GrepParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        root = search_root(self.pins, self, tool_call_id, args.path, self.cwd)
        is_dir = os.path.isdir(root)
        limit = effective_limit(args.limit, DEFAULT_LIMIT)
        context = max(0, args.context or 0)
        rg = shutil.which("rg") if self.use_ripgrep is not False else None
        # the folder searched (the root, or a file's folder) is held open and searched through its
        # handle: a folder swapped for a symlink after the check cannot redirect the search
        dir_fd = open_root(root if is_dir else os.path.dirname(root), args.path)
        try:
            if rg is not None:
                engine = "ripgrep"
                matches, more = await _ripgrep(rg, args, root, dir_fd, is_dir, limit, signal)
            else:
                engine = "python"
                regex = _compile(args)
                glob = PathGlob(args.glob) if args.glob and is_dir else None
                matches, more = await _python_search(root, dir_fd, is_dir, regex, glob, limit, signal)
        finally:
            os.close(dir_fd)
        if signal.is_set():
            raise ToolError("Operation aborted")
        details: JsonObject = {
            "pattern": args.pattern,
            "path": args.path or ".",
            "matches": len(matches),
            "files": len({m.path for m in matches}),
            "limit": limit,
            "limitReached": more,
            "truncated": False,
            "linesTruncated": False,
            "engine": engine,
        }
        if not matches:
            return AgentToolResult.text("No matches found", details)
        lines, lines_truncated = _format(matches, root, is_dir, context)
        truncation = cap_output(lines)
        notices: list[str] = []
        if more:
            notices.append(f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern")
        if truncation.truncated:
            notices.append(byte_limit_notice())
        if lines_truncated:
            notices.append(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines")
        details.update(truncated=truncation.truncated, linesTruncated=lines_truncated)
        return AgentToolResult.text(with_notices(truncation.content, notices), details)


def _compile(args: GrepParams) -> re.Pattern[str]:
    source = re.escape(args.pattern) if args.literal else args.pattern
    try:
        return re.compile(source, re.IGNORECASE if args.ignore_case else 0)
    except re.error as exc:
        raise ToolError(
            f"Invalid regex pattern {args.pattern!r}: {exc}. Use literal=true to search for the text as is."
        ) from None


def _list_files(
    root: str, root_fd: int, is_dir: bool, glob: PathGlob | None, signal: asyncio.Event
) -> list[str]:
    """The files to search, in walk order (the walk stops early on abort)."""
    if not is_dir:
        return [root]
    return [
        entry.path
        for entry in walk(root, should_stop=signal.is_set, root_fd=root_fd)
        if not entry.is_dir and not entry.is_symlink and (glob is None or glob.matches(entry.rel_path))
    ]


async def _python_search(
    root: str,
    root_fd: int,
    is_dir: bool,
    regex: re.Pattern[str],
    glob: PathGlob | None,
    limit: int,
    signal: asyncio.Event,
) -> tuple[list[GrepMatch], bool]:
    """Matches in file order, up to ``limit``, and whether more exist.

    The regex runs in a child process (see :mod:`tools.grep_search`): an abort kills it at once,
    and a search past :data:`PYTHON_SEARCH_BUDGET` seconds is stopped with an error."""
    paths = await asyncio.to_thread(_list_files, root, root_fd, is_dir, glob, signal)
    if signal.is_set() or not paths:
        return [], False
    request = json.dumps({"pattern": regex.pattern, "flags": int(regex.flags), "limit": limit, "paths": paths})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", _SEARCH_SCRIPT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    talk = asyncio.ensure_future(proc.communicate(request.encode("utf-8", "surrogatepass")))
    aborted = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({talk, aborted}, timeout=PYTHON_SEARCH_BUDGET, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
        if not talk.done():
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(BaseException):
                await talk
    if talk not in done:
        if signal.is_set():
            return [], False
        raise ToolError(
            f"The search took longer than {PYTHON_SEARCH_BUDGET:.0f} s and was stopped. A pattern with nested "
            "repetition such as (a+)+ can take exponential time; simplify it (or install ripgrep)."
        )
    out, err = talk.result()
    if proc.returncode != 0:
        raise ToolError(f"grep failed: {err.decode('utf-8', 'replace').strip()[-500:]}")
    result = json.loads(out)
    return [GrepMatch(paths[index], line) for index, line in result["matches"]], bool(result["more"])


async def _ripgrep(
    rg: str, args: GrepParams, root: str, dir_fd: int, is_dir: bool, limit: int, signal: asyncio.Event
) -> tuple[list[GrepMatch], bool]:
    # Only the path and line number of each match are read from ripgrep (the lines shown come
    # from the file itself), so ``--max-columns 1`` replaces every line's text with a short
    # marker: the output stays small however long the matched lines are (minified files).
    argv = [rg, "--line-number", "--with-filename", "--null", "--no-heading", "--color=never",
            "--max-columns", "1", "--hidden", "--no-require-git", "--glob", "!.git"]
    if args.ignore_case:
        argv.append("--ignore-case")
    if args.literal:
        argv.append("--fixed-strings")
    if args.glob:
        argv += ["--glob", args.glob]
    # ripgrep starts in the held folder (the child's chdir goes through the handle) and searches
    # "." (or the file's name), so the checked folder is the one searched even if swapped since
    base = root if is_dir else os.path.dirname(root)
    argv += ["-e", args.pattern, "--", "." if is_dir else "./" + os.path.basename(root)]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=f"/proc/self/fd/{dir_fd}" if os.path.isdir("/proc/self/fd") else base,
    )
    _cap_heap(proc.pid)
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    matches: list[GrepMatch] = []

    async def collect() -> bool:
        assert proc.stdout is not None
        while True:
            match = await _read_rg_match(proc.stdout, base)
            if match is None:
                return False
            if len(matches) >= limit:
                return True
            matches.append(match)

    reading = asyncio.ensure_future(collect())
    aborted = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({reading, aborted}, timeout=PYTHON_SEARCH_BUDGET,
                                     return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
        reading.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        await proc.wait()
    stderr = (await stderr_task).decode("utf-8", "replace").strip()
    if signal.is_set():
        return matches, False
    if reading not in done:
        raise ToolError(
            f"The search took longer than {PYTHON_SEARCH_BUDGET:.0f} s and was stopped (ripgrep waits forever "
            "on a FIFO named .gitignore or .ignore in the tree); search a narrower path."
        )
    more = reading.result()
    lost = proc.returncode == _STATUS_LOST and not stderr
    if not matches and proc.returncode not in (0, 1) and not lost and not more:
        raise ToolError(f"ripgrep failed: {stderr or f'exit code {proc.returncode}'}")
    return matches, more


_STATUS_LOST = 255
"""What asyncio reports when another waiter collected the exit status first (ripgrep itself exits
0, 1 or 2): the output was read to its end, so it stands; a real failure says so on stderr."""


def _cap_heap(pid: int) -> None:
    """At most :data:`RIPGREP_MEMORY` of heap for ripgrep (set from outside right after it
    started: a ``preexec_fn`` is not safe in a process with threads; a limit below what it
    already uses only stops it from growing further)."""
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is not None:
        with contextlib.suppress(ValueError, OSError):
            prlimit(pid, resource.RLIMIT_DATA, (RIPGREP_MEMORY, RIPGREP_MEMORY))


async def _read_rg_match(stream: asyncio.StreamReader, base: str) -> GrepMatch | None:
    """The next ``path NUL line:marker`` record of ripgrep's output (``None`` at the end)."""
    while True:
        try:
            raw_path = await stream.readuntil(b"\0")
            rest = await stream.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError as exc:  # not ripgrep's format: skip what is buffered
            await stream.readexactly(exc.consumed)
            continue
        number = rest.split(b":", 1)[0]
        if number.isdigit():
            return GrepMatch(os.path.normpath(os.path.join(base, os.fsdecode(raw_path[:-1]))), int(number))


def _format(matches: list[GrepMatch], root: str, is_dir: bool, context: int) -> tuple[list[str], bool]:
    """Output lines for the matches (grouped per file, context merged) and whether any was cut."""
    out: list[str] = []
    cut = False
    by_file: dict[str, list[int]] = {}
    for match in matches:
        by_file.setdefault(match.path, []).append(match.line)
    for path, numbers in by_file.items():
        shown = _display(path, root, is_dir)
        lines = _file_lines(path)
        if not lines:
            out.extend(f"{shown}:{n}: (unable to read file)" for n in numbers)
            continue
        hits = set(numbers)
        ranges: list[list[int]] = []
        for number in sorted(hits):
            start, end = max(1, number - context), min(len(lines), number + context)
            if ranges and start <= ranges[-1][1] + 1:
                ranges[-1][1] = max(ranges[-1][1], end)
            else:
                ranges.append([start, end])
        for index, (start, end) in enumerate(ranges):
            if index and context:
                out.append("--")
            for current in range(start, end + 1):
                text, was_cut = truncate_line(lines[current - 1])
                cut = cut or was_cut
                sep = ":" if current in hits else "-"
                out.append(f"{shown}{sep}{current}{sep} {text}")
    return out, cut


def _display(path: str, root: str, is_dir: bool) -> str:
    if is_dir:
        rel = os.path.relpath(path, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return os.path.basename(path)


def _file_lines(path: str) -> list[str]:
    """The lines of the file shown for a match, read through folder handles without following a
    symlink (a matched path swapped for a link since shows nothing rather than another file)."""
    try:
        with anchor(path) as place:
            fd, _ = open_existing(place)
        with os.fdopen(fd, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return []
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    return lines

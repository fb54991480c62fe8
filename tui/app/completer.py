"""What the editor suggests: ``/`` commands and their arguments, ``@`` project files."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from baton.tui.app.files import fuzzy_filter, list_project_files
from baton.tui.app.widgets.completion import Completion

_COMMAND_TOKEN = re.compile(r"^/([\w:.-]*)$")
_COMMAND_ARGS = re.compile(r"^/([\w-]+) (\S*)$")
_AT_TOKEN = re.compile(r"(?:^|\s)@(\S*)$")
FILE_INDEX_TTL = 30.0


class FileIndex:
    """The project's files, listed in a background thread and refreshed when stale."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._files: list[str] | None = None
        self._loaded_at = 0.0
        self._loading = False
        self._lock = threading.Lock()

    def files(self, on_ready: Callable[[], None] | None = None) -> list[str] | None:
        """The cached list (None until first loaded); starts a refresh when stale."""
        stale = time.monotonic() - self._loaded_at > FILE_INDEX_TTL
        if (self._files is None or stale) and not self._loading:
            self._loading = True
            threading.Thread(target=self._load, args=(on_ready,), daemon=True, name="baton-files").start()
        return self._files

    def load_now(self) -> list[str]:
        """List synchronously (tests, and callers that can wait)."""
        self._load(None)
        return self._files or []

    def _load(self, on_ready: Callable[[], None] | None) -> None:
        try:
            files = list_project_files(self.cwd)
        except OSError:
            files = []
        with self._lock:
            first = self._files is None
            self._files = files
            self._loaded_at = time.monotonic()
            self._loading = False
        if first and on_ready is not None:
            on_ready()


class Completer:
    """Suggestions for the text before the cursor.

    ``commands`` is ``(name, description)`` pairs; ``arguments`` maps a command name to a
    function giving ``(value, description)`` pairs for its argument."""

    def __init__(
        self,
        cwd: Path,
        commands: Sequence[tuple[str, str]],
        arguments: dict[str, Callable[[], Sequence[tuple[str, str]]]] | None = None,
        file_index: FileIndex | None = None,
    ) -> None:
        self.commands = list(commands)
        self.arguments = arguments or {}
        self.index = file_index or FileIndex(cwd)
        self.on_files_ready: Callable[[], None] | None = None

    def complete(self, line_before_cursor: str, *, first_line: bool) -> tuple[int, list[Completion]] | None:
        """``(start column, suggestions)`` for the cursor's line, or None for no popup."""
        if first_line:
            match = _COMMAND_TOKEN.match(line_before_cursor)
            if match:
                return 0, self._commands(match.group(1))
            match = _COMMAND_ARGS.match(line_before_cursor)
            if match and match.group(1) in self.arguments:
                values = self.arguments[match.group(1)]()
                query = match.group(2)
                by_value = dict(values)
                ranked = fuzzy_filter(query, [v for v, _ in values], limit=30) if query else [v for v, _ in values]
                start = len(line_before_cursor) - len(query)
                return start, [Completion(v, v, by_value.get(v, "")) for v in ranked[:30]]
        match = _AT_TOKEN.search(line_before_cursor)
        if match:
            query = match.group(1)
            files = self.index.files(self.on_files_ready)
            if files is None:
                return None
            start = len(line_before_cursor) - len(query) - 1
            ranked = fuzzy_filter(query, files, limit=30)
            return start, [Completion("@" + _quote(path), path) for path in ranked]
        return None

    def _commands(self, prefix: str) -> list[Completion]:
        names = [name for name, _ in self.commands]
        descriptions = dict(self.commands)
        starts = [n for n in names if n.startswith(prefix)]
        rest = [n for n in fuzzy_filter(prefix, names) if n not in starts] if prefix else []
        return [Completion(f"/{n}", f"/{n}", descriptions[n]) for n in starts + rest]


def _quote(path: str) -> str:
    return f'"{path}"' if " " in path else path

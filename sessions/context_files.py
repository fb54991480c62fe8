"""Project instructions the system prompt carries: ``AGENTS.md`` / ``CLAUDE.md`` files and the
``SYSTEM.md`` / ``APPEND_SYSTEM.md`` overrides.

Context files are read from ``$BATON_HOME``, then every ancestor of the working directory from
the root down, then the working directory itself; in each place ``AGENTS.md`` wins over
``CLAUDE.md``. ``.baton/SYSTEM.md`` in the working directory (else ``$BATON_HOME/SYSTEM.md``)
replaces the default prompt; ``APPEND_SYSTEM.md`` in the same places is appended to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton.providers.paths import baton_home

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
PROJECT_CONFIG_DIR = ".baton"
MAX_CONTEXT_FILE_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class ContextFile:
    """One loaded instruction file."""

    path: Path
    content: str


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            data = handle.read(MAX_CONTEXT_FILE_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_CONTEXT_FILE_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_CONTEXT_FILE_BYTES:
        text += f"\n\n[... truncated: {path} is larger than {MAX_CONTEXT_FILE_BYTES // 1024} KB]"
    return text


def _context_file_in(directory: Path) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        content = _read(directory / name)
        if content is not None:
            return ContextFile(directory / name, content)
    return None


def load_context_files(cwd: Path, home: Path | None = None) -> list[ContextFile]:
    """``AGENTS.md`` (or ``CLAUDE.md``) from ``$BATON_HOME``, each ancestor of ``cwd`` (root
    first) and ``cwd`` itself, each file once."""
    found: list[ContextFile] = []
    seen: set[Path] = set()

    def add(item: ContextFile | None) -> None:
        if item is None:
            return
        key = item.path.resolve()
        if key not in seen:
            seen.add(key)
            found.append(item)

    add(_context_file_in(home or baton_home()))
    start = cwd.resolve()
    for directory in [*reversed(start.parents), start]:
        add(_context_file_in(directory))
    return found


def _first_existing(cwd: Path, name: str, home: Path | None) -> str | None:
    for candidate in (cwd / PROJECT_CONFIG_DIR / name, (home or baton_home()) / name):
        content = _read(candidate)
        if content is not None:
            return content
    return None


def load_system_md(cwd: Path, home: Path | None = None) -> str | None:
    """The text of ``.baton/SYSTEM.md`` (else ``$BATON_HOME/SYSTEM.md``), if there is one."""
    return _first_existing(cwd, "SYSTEM.md", home)


def load_append_system_md(cwd: Path, home: Path | None = None) -> str | None:
    """The text of ``.baton/APPEND_SYSTEM.md`` (else ``$BATON_HOME/APPEND_SYSTEM.md``)."""
    return _first_existing(cwd, "APPEND_SYSTEM.md", home)

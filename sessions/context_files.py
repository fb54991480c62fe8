"""Project instructions the system prompt carries: ``AGENTS.md`` / ``CLAUDE.md`` files and the
``SYSTEM.md`` / ``APPEND_SYSTEM.md`` overrides.

Context files are read from ``$BATON_HOME`` and ``~/.claude/CLAUDE.md`` (the user's), then every
ancestor of the working directory from the root down, then the working directory itself; in each
place ``AGENTS.md``, then Claude Code's ``CLAUDE.md`` and ``.claude/CLAUDE.md`` beside it (a file
read once: a symlink to another, or the same text, is not repeated). ``.baton/SYSTEM.md`` in the
working directory (else ``$BATON_HOME/SYSTEM.md``)
replaces the default prompt; ``APPEND_SYSTEM.md`` in the same places is appended to it.

They go to the provider in the system prompt, so a project's file follows the read policy of
:mod:`baton.tools.project_files`: a symlink leading out of the project (``AGENTS.md`` ->
``~/.ssh/id_rsa``) or into ``$BATON_HOME`` is not read, nor is a FIFO or device; each such file
is one warning. A file larger than :data:`MAX_CONTEXT_FILE_BYTES` is cut there, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton.providers.bounded_read import FileRefusedError, format_cap
from baton.providers.paths import baton_home
from baton.tools.project_files import ProjectFiles

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md")
PROJECT_CONFIG_DIR = ".baton"
MAX_CONTEXT_FILE_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class ContextFile:
    """One loaded instruction file."""

    path: Path
    content: str


def _read(path: Path, files: ProjectFiles, warnings: list[str] | None) -> str | None:
    """The text of ``path`` (None when absent, a folder, or refused: then one warning)."""
    if path.is_dir():
        return None
    try:
        data = files.read(path, MAX_CONTEXT_FILE_BYTES + 1, truncate=True)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if warnings is not None:
            why = str(exc) if isinstance(exc, FileRefusedError) else f"cannot be read ({exc.strerror or exc})"
            warnings.append(f"{path} ignored: {why}")
        return None
    text = data[:MAX_CONTEXT_FILE_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_CONTEXT_FILE_BYTES:
        text += f"\n\n[... truncated: {path} is larger than {format_cap(MAX_CONTEXT_FILE_BYTES)}]"
    return text


def _context_files_in(directory: Path, files: ProjectFiles, warnings: list[str] | None,
                      names: tuple[str, ...] = CONTEXT_FILE_NAMES) -> list[ContextFile]:
    out: list[ContextFile] = []
    for name in names:
        content = _read(directory / name, files, warnings)
        if content is not None:
            out.append(ContextFile(directory / name, content))
    return out


def load_context_files(cwd: Path, home: Path | None = None, warnings: list[str] | None = None) -> list[ContextFile]:
    """``AGENTS.md`` and ``CLAUDE.md`` from ``$BATON_HOME`` and ``~/.claude``, each ancestor of
    ``cwd`` (root first) and ``cwd`` itself, each file once; a refused file adds one line to
    ``warnings``."""
    files = ProjectFiles.for_dir(cwd, baton_dir=home)
    found: list[ContextFile] = []
    seen: set[Path] = set()
    texts: set[str] = set()

    def add(items: list[ContextFile]) -> None:
        for item in items:
            key = item.path.resolve()
            if key not in seen and item.content not in texts:
                seen.add(key)
                texts.add(item.content)
                found.append(item)

    add(_context_files_in(home or baton_home(), files, warnings, ("AGENTS.md", "CLAUDE.md")))
    add(_context_files_in(Path.home() / ".claude", files, warnings, ("CLAUDE.md",)))
    start = cwd.resolve()
    for directory in [*reversed(start.parents), start]:
        add(_context_files_in(directory, files, warnings))
    return found


def _first_existing(cwd: Path, name: str, home: Path | None, warnings: list[str] | None) -> str | None:
    files = ProjectFiles.for_dir(cwd, baton_dir=home)
    for candidate in (cwd / PROJECT_CONFIG_DIR / name, (home or baton_home()) / name):
        content = _read(candidate, files, warnings)
        if content is not None:
            return content
    return None


def load_system_md(cwd: Path, home: Path | None = None, warnings: list[str] | None = None) -> str | None:
    """The text of ``.baton/SYSTEM.md`` (else ``$BATON_HOME/SYSTEM.md``), if there is one."""
    return _first_existing(cwd, "SYSTEM.md", home, warnings)


def load_append_system_md(cwd: Path, home: Path | None = None, warnings: list[str] | None = None) -> str | None:
    """The text of ``.baton/APPEND_SYSTEM.md`` (else ``$BATON_HOME/APPEND_SYSTEM.md``)."""
    return _first_existing(cwd, "APPEND_SYSTEM.md", home, warnings)

"""``# text`` at the start of a prompt: a line added to a memory file (Claude Code's quick memory).

The user picks the file: the project's ``AGENTS.md`` (or its ``CLAUDE.md`` when that is what the
project keeps), or their own ``$BATON_HOME/AGENTS.md`` (or ``~/.claude/CLAUDE.md`` when they keep
one). The line is appended as ``- text``. A project's file is written only where it lies: never
through a symlink (``O_NOFOLLOW``, through the handle of its folder), only a regular file with one
link — a repository's ``AGENTS.md`` pointing at ``~/.bashrc`` is refused, not appended to.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from baton.providers.paths import baton_home
from baton.tools.anchored import open_dir

MEMORY_PREFIX = "#"


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A file a memory line may go to."""

    label: str
    """``project AGENTS.md``, ``your AGENTS.md``..."""
    path: Path
    project: bool


class MemoryFileError(OSError):
    """The line could not be added (the file is a symlink, not a regular file, ...)."""


def memory_text(prompt: str) -> str | None:
    """The line a ``# text`` prompt adds (``None``: not a memory prompt; ``## heading`` Markdown
    and a bare ``#`` are prompts)."""
    stripped = prompt.strip()
    if not stripped.startswith(MEMORY_PREFIX) or stripped.startswith("##") or "\n" in stripped:
        return None
    text = stripped[len(MEMORY_PREFIX):].strip()
    return text or None


def memory_files(cwd: Path) -> list[MemoryFile]:
    """The files a memory line may go to, the project's first."""
    out = [MemoryFile("project AGENTS.md", cwd / "AGENTS.md", True)]
    if (cwd / "CLAUDE.md").is_file() and not (cwd / "CLAUDE.md").is_symlink():
        out.append(MemoryFile("project CLAUDE.md", cwd / "CLAUDE.md", True))
    out.append(MemoryFile("your AGENTS.md", baton_home() / "AGENTS.md", False))
    claude = Path.home() / ".claude" / "CLAUDE.md"
    if claude.is_file():
        out.append(MemoryFile("your CLAUDE.md", claude, False))
    return out


def append_memory(target: MemoryFile, text: str) -> None:
    """Append ``- text`` to ``target`` (creating it); raises :class:`MemoryFileError`."""
    line = "- " + " ".join(text.split()) + "\n"
    # the user's own file is theirs wherever it points; a project's is written only where it lies
    path = os.path.realpath(target.path) if not target.project else os.path.abspath(target.path)
    folder, name = os.path.split(path)
    try:
        if not target.project:
            os.makedirs(folder, exist_ok=True)
        fd_dir = open_dir(os.path.realpath(folder))
    except OSError as exc:
        raise MemoryFileError(errno.EPERM, f"cannot write {target.path}: {exc.strerror or exc}") from exc
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, 0o644, dir_fd=fd_dir)
        except OSError as exc:
            why = "it is a symlink" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
            raise MemoryFileError(exc.errno or errno.EPERM, f"cannot write {target.path}: {why}") from exc
        try:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode) or (target.project and status.st_nlink != 1):
                raise MemoryFileError(errno.EPERM, f"cannot write {target.path}: not a plain file")
            ends_open = status.st_size > 0 and os.pread(fd, 1, status.st_size - 1) != b"\n"
            os.write(fd, (("\n" if ends_open else "") + line).encode("utf-8"))
        finally:
            os.close(fd)
    finally:
        os.close(fd_dir)

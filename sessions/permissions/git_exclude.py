"""Keeping a personal file out of git: a line in the repository's ``.git/info/exclude``.

The repository is data: its ``.git`` may be a symlink, ``info`` or ``exclude`` a symlink, a FIFO
or a hard link to a file elsewhere. So the walk goes through folder handles from the work tree,
never follows a symlink (``O_NOFOLLOW``), appends only to a regular file with one link, and does
nothing (returns ``False``) when anything is not as expected: the exclude line is a convenience,
never worth writing somewhere else. A ``.git`` file (a linked worktree or a submodule) is left
alone too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from baton.tools.anchored import open_dir, open_step
from baton.tools.project_files import project_root

MAX_EXCLUDE_BYTES = 1024 * 1024


def exclude_from_git(path: str, project_dir: str) -> bool:
    """Add ``path`` (a file of the project in ``project_dir``) to its git repository's
    ``.git/info/exclude`` unless it is there already. Returns whether the file now lists it."""
    root = project_root(project_dir)
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative.startswith("..") or not os.path.lexists(os.path.join(root, ".git")):
        return False
    line = "/" + relative.replace(os.sep, "/")
    try:
        top = open_dir(os.path.realpath(root))
    except OSError:
        return False
    try:
        return _append_line(top, line)
    except OSError:
        return False
    finally:
        os.close(top)


def _append_line(top: int, line: str) -> bool:
    git = open_step(top, ".git")  # a symlink or a .git file raises: left alone
    try:
        try:
            info = open_step(git, "info")
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir("info", 0o755, dir_fd=git)
            info = open_step(git, "info")
        try:
            return _append_to(info, line)
        finally:
            os.close(info)
    finally:
        os.close(git)


def _append_to(folder: int, line: str) -> bool:
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open("exclude", flags, 0o644, dir_fd=folder)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_nlink != 1 or status.st_size > MAX_EXCLUDE_BYTES:
            raise OSError(errno.EPERM, "not a plain exclude file")
        text = os.read(fd, MAX_EXCLUDE_BYTES).decode("utf-8", "replace") if status.st_size else ""
        if line in (entry.strip() for entry in text.splitlines()):
            return True
        prefix = "" if not text or text.endswith("\n") else "\n"
        os.write(fd, f"{prefix}{line}\n".encode())
        return True
    finally:
        os.close(fd)

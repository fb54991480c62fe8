"""Walk a directory tree the way ripgrep and fd do by default (minus their binaries).

Hidden files are included, ``.git`` is skipped, ``.gitignore`` files are respected (those inside
the tree and, within a git repository, those above the root), symlinked directories are not
followed. Entries come in a stable order: sorted by name, each directory's contents right after
it.

The walk goes through folder handles: each subfolder is opened relative to its parent's handle
without following a symlink (:mod:`tools.anchored`), so a folder swapped for a symlink while the
walk runs is skipped, never followed out of the tree. A caller that checked the root passes its
handle (``root_fd``), so the root itself cannot be swapped either.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from baton.tools.anchored import open_step
from baton.tools.gitignore import IgnoreFile, is_ignored, load_ignore_file, parent_ignore_files

ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(slots=True, frozen=True)
class WalkEntry:
    """One entry: path relative to the root (``/``-separated), absolute path, kind."""

    rel_path: str
    path: str
    is_dir: bool
    is_symlink: bool


def walk(
    root: str,
    respect_gitignore: bool = True,
    should_stop: Callable[[], bool] | None = None,
    *,
    root_fd: int | None = None,
) -> Iterator[WalkEntry]:
    """Yield the entries under ``root`` (not ``root`` itself); see the module docstring.
    ``root_fd``: an open handle on ``root`` to walk from (it stays the caller's to close)."""
    base_files = parent_ignore_files(root) if respect_gitignore else []
    if root_fd is not None:
        yield from _walk_dir(root_fd, root, "", base_files, respect_gitignore, should_stop)
        return
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        yield from _walk_dir(fd, root, "", base_files, respect_gitignore, should_stop)
    finally:
        os.close(fd)


def _walk_dir(
    dir_fd: int,
    directory: str,
    rel_dir: str,
    inherited: list[IgnoreFile],
    respect_gitignore: bool,
    should_stop: Callable[[], bool] | None,
) -> Iterator[WalkEntry]:
    if should_stop is not None and should_stop():
        return
    files = inherited
    if respect_gitignore:
        own = load_ignore_file(".gitignore", base=rel_dir, dir_fd=dir_fd)
        if own is not None:
            files = [*inherited, own]
    try:
        with os.scandir(dir_fd) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in ALWAYS_SKIPPED:
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        path = os.path.join(directory, entry.name)
        try:
            is_symlink = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if files and is_ignored(files, rel, is_dir):
            continue
        yield WalkEntry(rel, path, is_dir, is_symlink)
        if is_dir:
            try:
                child = open_step(dir_fd, entry.name)
            except OSError:  # gone, unreadable, or swapped for a symlink since it was listed
                continue
            try:
                yield from _walk_dir(child, path, rel, files, respect_gitignore, should_stop)
            finally:
                with contextlib.suppress(OSError):
                    os.close(child)

"""Walk a directory tree the way ripgrep and fd do by default (minus their binaries).

Hidden files are included, ``.git`` is skipped, ``.gitignore`` files are respected (those inside
the tree and, within a git repository, those above the root), symlinked directories are not
followed. Entries come in a stable order: sorted by name, each directory's contents right after
it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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
    root: str, respect_gitignore: bool = True, should_stop: Callable[[], bool] | None = None
) -> Iterator[WalkEntry]:
    """Yield the entries under ``root`` (not ``root`` itself); see the module docstring."""
    base_files = parent_ignore_files(root) if respect_gitignore else []
    yield from _walk_dir(root, "", base_files, respect_gitignore, should_stop)


def _walk_dir(
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
        own = load_ignore_file(os.path.join(directory, ".gitignore"), base=rel_dir)
        if own is not None:
            files = [*inherited, own]
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in ALWAYS_SKIPPED:
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            is_symlink = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if files and is_ignored(files, rel, is_dir):
            continue
        yield WalkEntry(rel, entry.path, is_dir, is_symlink)
        if is_dir:
            yield from _walk_dir(entry.path, rel, files, respect_gitignore, should_stop)

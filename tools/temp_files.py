"""Full-output files of commands: kept under ``$BATON_HOME/tmp/``, removed when baton ends.

A command that prints more than the model is shown spills its whole output to a file whose path
the model gets (:mod:`tools.output_buffer`). Those files live in ``$BATON_HOME/tmp/`` (private,
mode 0700), are removed when the session ends (:func:`remove_own_files`), and leftovers of a
baton that could not clean up (SIGKILL, a crash) are removed at the next start once they are a
day old (:func:`remove_stale_files`), as are the ``/tmp/baton-bash-*.log`` files older versions
left behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from pathlib import Path

from baton.providers.paths import baton_home

STALE_SECONDS = 24 * 3600
"""Leftovers older than this are removed at start-up."""
_LEGACY_PREFIX = "baton-bash-"

_own: set[str] = set()
_lock = threading.Lock()


def temp_dir() -> Path:
    """``$BATON_HOME/tmp`` (created, private to the user)."""
    path = baton_home() / "tmp"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def new_temp_file(prefix: str, suffix: str = ".log") -> tuple[int, str]:
    """A new file in :func:`temp_dir` opened for writing: ``(fd, path)``; removed at exit."""
    try:
        directory: str | None = str(temp_dir())
    except OSError:  # an unwritable home: the system temp directory still works
        directory = None
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    with _lock:
        _own.add(path)
    return fd, path


def own_files() -> list[str]:
    """The files this process created that are still to be removed."""
    with _lock:
        return sorted(_own)


def remove_own_files() -> None:
    """Remove every file :func:`new_temp_file` created (the session has ended)."""
    with _lock:
        paths = list(_own)
        _own.clear()
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def remove_stale_files(max_age: float = STALE_SECONDS) -> int:
    """Remove files older than ``max_age`` seconds in :func:`temp_dir`, and old
    ``baton-bash-*.log`` files of this user in the system temp directory; returns how many."""
    cutoff = time.time() - max_age
    removed = 0
    candidates: list[Path] = []
    with contextlib.suppress(OSError):
        candidates += [p for p in temp_dir().iterdir()]
    with contextlib.suppress(OSError):
        candidates += list(Path(tempfile.gettempdir()).glob(f"{_LEGACY_PREFIX}*.log"))
    uid = os.getuid() if hasattr(os, "getuid") else None
    for path in candidates:
        try:
            info = path.lstat()
            if not path.is_file() or path.is_symlink() or info.st_mtime >= cutoff:
                continue
            if uid is not None and info.st_uid != uid:
                continue
            path.unlink()
            removed += 1
        except OSError:
            continue
    return removed

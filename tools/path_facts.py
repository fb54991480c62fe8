"""Questions about the file system, asked once and asked again to see whether anything changed.

The sandbox's bwrap arguments are worked out before every sandboxed command from what the file
system looks like (which protected paths exist, where the workspace really is, which hidden
places exist...), because a hostile command can change any of that between two commands: create
``.git``, swap a folder for a symlink, write a ``gitdir:`` pointer. Working them out costs far more
than the few system calls behind them (``os.path.realpath``, lists, strings).

:class:`RecordedFacts` answers the same questions as :class:`PathFacts` and keeps every question
with its answer. The arguments are a function of those answers (and of the sandbox's own settings
and environment, which the caller compares itself), so when :meth:`RecordedFacts.unchanged` asks
every question again and gets the same answers, working the arguments out again would give the
same arguments: by induction, it would ask the same first question, get the same answer, take the
same path, and so on. No timestamp, inode number or cache of a folder's listing is trusted; each
answer is read from the file system again. Answers are only what the computation uses: the file
type bits of ``lstat``/``stat`` (not timestamps, so unrelated writes never invalidate), a resolved
path, the start of a small file, a folder's list of subfolders.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Callable

GIT_POINTER_LIMIT = 4096
"""How much of a ``.git`` file or ``commondir`` is read (a ``gitdir:`` line)."""
GITMODULES_LIMIT = 65536
SUBFOLDER_LIMIT = 512
"""At most this many entries of a folder are looked at for subfolders."""


class PathFacts:
    """Answers read straight from the file system (nothing is kept)."""

    def lstat_mode(self, path: str) -> int | None:
        """The file type bits of ``path`` itself (a symlink is not followed); None when it does not exist."""
        return _lstat_type(path)

    def stat_mode(self, path: str) -> int | None:
        """The file type bits of what ``path`` leads to (symlinks followed); None when nothing is there."""
        return _stat_type(path)

    def lexists(self, path: str) -> bool:
        """Whether ``path`` exists (a dangling symlink does)."""
        return self.lstat_mode(path) is not None

    def is_dir(self, path: str) -> bool:
        """Whether ``path`` leads to a folder (symlinks followed)."""
        mode = self.stat_mode(path)
        return mode is not None and stat.S_ISDIR(mode)

    def realpath(self, path: str) -> str:
        """``os.path.realpath(path)``."""
        return os.path.realpath(path)

    def pointer_text(self, path: str) -> str | None:
        """The start of a regular file (a ``.git`` file, ``commondir``), see :func:`small_text`."""
        return _pointer_text(path)

    def gitmodules_text(self, path: str) -> str | None:
        """The start of a ``.gitmodules`` file, see :func:`small_text`."""
        return _gitmodules_text(path)

    def subfolders(self, base: str) -> tuple[str, ...]:
        """The folders directly in ``base`` (not hidden ones, among its first
        :data:`SUBFOLDER_LIMIT` entries; a symlink is not a folder here)."""
        return _subfolders(base)


class RecordedFacts(PathFacts):
    """:class:`PathFacts` that keeps every question and its answer (see the module docstring)."""

    def __init__(self) -> None:
        self._answers: dict[tuple[Callable[[str], object], str], object] = {}

    def unchanged(self) -> bool:
        """Whether every question asked so far gets the same answer now."""
        for (question, path), answer in self._answers.items():
            if question is _lstat_type and answer is not None:
                # It was there: lstat it at once (access() first only saves time on a missing path).
                try:
                    now: object = stat.S_IFMT(os.lstat(path).st_mode)
                except (OSError, ValueError):
                    return False
            else:
                now = question(path)
            if now != answer:
                return False
        return True

    def __len__(self) -> int:
        return len(self._answers)

    def _ask(self, question: Callable[[str], object], path: str) -> object:
        key = (question, path)
        if key in self._answers:
            return self._answers[key]
        answer = self._answers[key] = question(path)
        return answer

    def lstat_mode(self, path: str) -> int | None:
        answer = self._ask(_lstat_type, path)
        assert answer is None or isinstance(answer, int)
        return answer

    def stat_mode(self, path: str) -> int | None:
        answer = self._ask(_stat_type, path)
        assert answer is None or isinstance(answer, int)
        return answer

    def realpath(self, path: str) -> str:
        answer = self._ask(os.path.realpath, path)
        assert isinstance(answer, str)
        return answer

    def pointer_text(self, path: str) -> str | None:
        answer = self._ask(_pointer_text, path)
        assert answer is None or isinstance(answer, str)
        return answer

    def gitmodules_text(self, path: str) -> str | None:
        answer = self._ask(_gitmodules_text, path)
        assert answer is None or isinstance(answer, str)
        return answer

    def subfolders(self, base: str) -> tuple[str, ...]:
        answer = self._ask(_subfolders, base)
        assert isinstance(answer, tuple)
        return answer


def _lstat_type(path: str) -> int | None:
    try:
        # access() answers "not there" without an exception (most questions get that answer)
        if not os.access(path, os.F_OK, follow_symlinks=False):
            return None
        return stat.S_IFMT(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return None


def _stat_type(path: str) -> int | None:
    try:
        if not os.access(path, os.F_OK):
            return None
        return stat.S_IFMT(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def _pointer_text(path: str) -> str | None:
    return small_text(path, GIT_POINTER_LIMIT)


def _gitmodules_text(path: str) -> str | None:
    return small_text(path, GITMODULES_LIMIT)


def _subfolders(base: str) -> tuple[str, ...]:
    out: list[str] = []
    try:
        with os.scandir(base) as entries:
            for entry in itertools.islice(entries, SUBFOLDER_LIMIT):
                if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                    out.append(entry.path)
    except OSError:
        return ()
    return tuple(out)


def small_text(path: str, limit: int = GIT_POINTER_LIMIT) -> str | None:
    """The start of a regular file (never following a symlink, never blocking on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)

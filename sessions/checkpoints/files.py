"""Writing a restore into the workspace without following a link out of it.

Every path is walked from a handle on the workspace, one directory at a time, with
``O_NOFOLLOW``: a folder the model swapped for a symlink (before the rewind or while it runs) is
a dead end, never a way to ``~/.ssh``. Files are written next to their final name and renamed
into place in the same directory handle; permission bits are set on the open file.

Only plain relative paths are accepted (:func:`safe_relative`): no ``..``, no absolute paths, no
``.git`` component, nothing empty.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

BATON_SETTINGS = re.compile(r"\.(?:baton|claude)/settings[^/]*\.json")
"""Baton's own settings files (workspace-relative): never snapshotted, never restored."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PROC_FD = hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


def safe_relative(path: str) -> bool:
    """Whether ``path`` is a plain workspace-relative path a restore may touch."""
    if not path or "\0" in path or path.startswith("/"):
        return False
    parts = path.split("/")
    return all(part not in ("", ".", "..") for part in parts) and parts[0] != ".git"


class WorkspaceFiles:
    """File operations below ``root``, every one relative to a checked directory handle."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @contextlib.contextmanager
    def parent(self, path: str, *, create: bool = False) -> Iterator[tuple[int, str] | None]:
        """``(directory handle, name)`` for ``path``, or ``None`` when a folder on the way is
        missing (and ``create`` is false), a symlink, or not a folder."""
        if not safe_relative(path):
            yield None
            return
        *folders, name = path.split("/")
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for folder in folders:
                try:
                    inner = os.open(folder, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        yield None
                        return
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(folder, 0o777, dir_fd=fd)
                    try:
                        inner = os.open(folder, _DIR_FLAGS, dir_fd=fd)
                    except OSError:
                        yield None
                        return
                except OSError:  # a symlink (ELOOP), a file (ENOTDIR), unreadable
                    yield None
                    return
                os.close(fd)
                fd = inner
            yield fd, name
        finally:
            os.close(fd)

    def lstat(self, path: str) -> os.stat_result | None:
        """``path`` itself (not followed), or ``None`` when it is not there — or not really
        there: a folder on the way is a symlink."""
        with self.parent(path) as where:
            if where is None:
                return None
            fd, name = where
            try:
                return os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                return None

    def kind(self, path: str) -> int | None:
        """``st_mode`` of ``path`` itself (see :meth:`lstat`)."""
        st = self.lstat(path)
        return st.st_mode if st is not None else None

    def write(self, path: str, data: bytes, bits: int, *, link: bool = False) -> bool:
        """Put ``data`` (a symlink's target when ``link``) at ``path`` with permission ``bits``;
        ``False`` when it cannot be placed (a folder on the way is a symlink, or a non-empty
        folder stands where the file goes)."""
        with self.parent(path, create=True) as where:
            if where is None:
                return False
            fd, name = where
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.rmdir(name, dir_fd=fd)  # an empty folder took its place: the file wins
            except FileNotFoundError:
                pass
            except OSError:
                return False  # a folder with content: leave it
            tmp = f".{name}.baton-restore"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
            if link:
                os.symlink(os.fsdecode(data), tmp, dir_fd=fd)
            else:
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                              dir_fd=fd)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(out, view):]
                    os.fchmod(out, bits & 0o777)
                finally:
                    os.close(out)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            return True

    def chmod(self, path: str, bits: int) -> None:
        """Set a regular file's permission bits (a symlink or anything else is left alone)."""
        with self.parent(path) as where:
            if where is None:
                return
            fd, name = where
            if not _PROC_FD:  # no handle to change a file by: check, then change by name
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.chmod(name, bits & 0o777, dir_fd=fd)
                return
            try:
                handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError:
                return
            try:
                if stat.S_ISREG(os.fstat(handle).st_mode):
                    os.chmod(f"/proc/self/fd/{handle}", bits & 0o777)
            except OSError:
                pass
            finally:
                os.close(handle)

    def remove(self, path: str) -> bool:
        """Delete the file or symlink at ``path`` (never a folder); whether it was removed."""
        with self.parent(path) as where:
            if where is None:
                return False
            fd, name = where
            try:
                os.unlink(name, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.EISDIR, errno.EPERM, errno.ENOTDIR):
                    raise
                return False
            return True

    def remove_empty_dir(self, path: str) -> bool:
        """Remove the folder ``path`` if it is empty; whether it was removed."""
        with self.parent(path) as where:
            if where is None:
                return False
            fd, name = where
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                return False
            return True

    def make_dir(self, path: str, bits: int) -> None:
        """Create the folder ``path`` (and missing parents) with permission ``bits``."""
        with self.parent(path, create=True) as where:
            if where is None:
                return
            fd, name = where
            try:
                os.mkdir(name, 0o700, dir_fd=fd)
            except OSError:
                return  # already there (or cannot be): leave it as it is
            handle = os.open(name, _DIR_FLAGS, dir_fd=fd)
            try:
                os.fchmod(handle, bits & 0o777)
            finally:
                os.close(handle)

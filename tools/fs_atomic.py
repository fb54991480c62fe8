"""Atomic file replacement: a crash or a full disk never leaves half a file behind.

The new bytes go to a temporary file in the target's own directory (so the rename cannot cross
file systems), are flushed and fsynced, get the old file's permission bits (or the umask default
for a new file) and, when running as root, its owner; then ``os.replace`` swaps them in. A symlink
is followed: its target is replaced and the link stays a link.

A file with several hard links keeps its inode: the temporary file is written and synced first
(so a full disk fails before the original is touched), then the bytes are written into the
original in place, and the temporary file is removed. Anything but a regular file (a FIFO, a
device, a socket) is refused with :class:`NotRegularFileError` — replacing it would destroy it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile


class NotRegularFileError(OSError):
    """The target exists but is not a regular file (FIFO, device, socket)."""


def atomic_write(path: str, data: bytes) -> bool:
    """Replace (or create) ``path`` with ``data`` atomically. Returns True when the file was new.

    The parent directory must exist. Raises ``IsADirectoryError`` when ``path`` is a directory and
    :class:`NotRegularFileError` when it is any other non-regular file."""
    target = os.path.realpath(path)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise IsADirectoryError(f"Is a directory: {path}")
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise NotRegularFileError(f"Not a regular file: {path}")
    directory = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            if old is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
                if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (0, 0):
                    with contextlib.suppress(OSError):
                        os.fchown(handle.fileno(), old.st_uid, old.st_gid)
            else:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
        if old is not None and old.st_nlink > 1 and _write_in_place(target, old, data):
            os.unlink(tmp)
            return False
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)
    return old is None


def _write_in_place(target: str, old: os.stat_result, data: bytes) -> bool:
    """Overwrite the hard-linked ``target`` through its own inode; False when that inode changed
    (the caller then replaces the file instead). An error midway propagates; the synced temporary
    copy then still replaces the torn file, so the content is whole either way."""
    fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino) or not stat.S_ISREG(now.st_mode):
            return False
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        except OSError:
            return False
        return True
    finally:
        os.close(fd)


def _umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _fsync_dir(directory: str) -> None:
    """Persist the rename itself (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

"""Open exactly the path that was checked: folder handles, no symlink followed on the way.

The file tools run outside the sandbox, and a sandboxed command can swap a folder for a symlink
at any moment. A path resolved once for the permission check and again by ``open`` can lead two
different places. So the tools take the *real* path the check approved (every symlink already
resolved) and walk it component by component from ``/``: each folder is opened relative to the
handle of its parent with ``O_NOFOLLOW | O_DIRECTORY``; a component that has become a symlink (or
anything but a folder) stops the walk with :class:`PathChangedError`. Files are then opened,
created, renamed and folders made *through the handle of the folder they live in*
(``openat``/``mkdirat``/``renameat``), so nothing after the walk resolves a path again.

A file with more than one hard link is replaced (a new inode under the same name), never written
through: its other links may lie outside the workspace. The caller says so in its result.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from baton.providers.bounded_read import NotRegularFileError, describe_kind

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS = getattr(os, "O_PATH", 0)


class PathChangedError(OSError):
    """A component of a checked path is no longer what the check saw (now a symlink, or not a
    folder): nothing was opened or written."""


@dataclass(frozen=True, slots=True)
class FileWrite:
    """What :func:`replace_file` did."""

    created: bool
    """The name did not exist before."""
    unlinked_links: int
    """The old file had this many hard links (more than 1): it was replaced, so the other links
    keep the old content. 0 otherwise."""


def open_step(parent: int, name: str) -> int:
    """``name`` inside the folder ``parent`` as a folder handle, refusing symlinks."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except PermissionError:
        if not _PATH_FLAGS:
            raise
        # a folder one may pass through but not list (mode --x) leads on, as it does for open()
        return os.open(name, _PATH_FLAGS | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        try:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            raise exc from None
        if stat.S_ISLNK(info.st_mode):
            raise PathChangedError(errno.ELOOP, f"{name} is a symlink now, not the folder that was checked") from None
        raise NotADirectoryError(errno.ENOTDIR, f"{name} is {describe_kind(info.st_mode)}, not a folder") from None


def _components(real_dir: str) -> list[str]:
    if not os.path.isabs(real_dir):
        raise ValueError(f"not an absolute path: {real_dir}")
    return [part for part in os.path.normpath(real_dir).split("/") if part]


def open_dir(real_dir: str, *, create: bool = False, mode: int = 0o777) -> int:
    """A handle on the folder ``real_dir`` (absolute, symlinks already resolved), walked from
    ``/`` without following a symlink. With ``create``, missing folders are made (``mode``, less
    the umask) through their parent's handle. Raises :class:`PathChangedError`,
    ``FileNotFoundError`` (a folder is missing and ``create`` is off) and other ``OSError``s."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for name in _components(real_dir):
            try:
                step = open_step(fd, name)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: opened (and checked) below
                    os.mkdir(name, mode, dir_fd=fd)
                step = open_step(fd, name)
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


@dataclass(frozen=True, slots=True)
class Anchor:
    """A file's name inside an open handle on its folder (see :func:`anchor`)."""

    dir_fd: int
    name: str
    path: str
    """The real path, for messages and locks."""


@contextlib.contextmanager
def anchor(real: str, *, create_dirs: bool = False) -> Iterator[Anchor]:
    """Hold the folder of the real path ``real`` open (see :func:`open_dir`) for the block."""
    parent, name = os.path.split(os.path.normpath(real))
    if not name:
        raise IsADirectoryError(f"Is a directory: {real}")
    fd = open_dir(parent or "/", create=create_dirs)
    try:
        yield Anchor(fd, name, real)
    finally:
        os.close(fd)


def lstat_in(place: Anchor) -> os.stat_result | None:
    """The entry's own status (a symlink is not followed), or None when it does not exist."""
    try:
        return os.stat(place.name, dir_fd=place.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_existing(place: Anchor) -> tuple[int, os.stat_result]:
    """A read-only descriptor on the existing regular file (never through a symlink, never
    blocking on a FIFO) and its status. Raises ``FileNotFoundError``, ``IsADirectoryError``,
    :class:`PathChangedError` (a symlink is there now), :class:`NotRegularFileError`."""
    try:
        fd = os.open(place.name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=place.dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathChangedError(exc.errno, f"{place.name} is a symlink now") from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"Is a directory: {place.path}")
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(f"{describe_kind(info.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_existing(place: Anchor) -> tuple[bytes, os.stat_result]:
    """The whole content of the existing regular file and its status (see :func:`open_existing`)."""
    fd, info = open_existing(place)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), info


def replace_file(place: Anchor, data: bytes, *, expect: os.stat_result | None = None) -> FileWrite:
    """Put ``data`` under the name atomically: a temporary file made in the same folder handle,
    written and synced, given the old file's permission bits (the umask's for a new one) and,
    for root, its owner, then renamed over the name and the folder synced.

    ``expect``: the status of the file the caller read; when the name now holds another file
    (changed on disk meanwhile) :class:`PathChangedError` is raised and nothing is written.
    Raises ``IsADirectoryError``, :class:`NotRegularFileError` and :class:`PathChangedError`
    (a symlink is there now) before anything is written."""
    old = _current(place)
    if expect is not None and (old is None or (old.st_dev, old.st_ino) != (expect.st_dev, expect.st_ino)):
        raise PathChangedError(0, f"{place.path} changed on disk while it was being edited")
    tmp = f".{place.name.encode()[:120].decode(errors='ignore')}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=place.dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (0, 0):
                    with contextlib.suppress(OSError):
                        os.fchown(fd, old.st_uid, old.st_gid)
            else:
                os.fchmod(fd, 0o666 & ~current_umask())
        finally:
            os.close(fd)
        now = _current(place)
        if old is not None and (now is None or (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino)):
            raise PathChangedError(0, f"{place.path} changed on disk while it was being written")
        os.rename(tmp, place.name, src_dir_fd=place.dir_fd, dst_dir_fd=place.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=place.dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(place.dir_fd)
    links = old.st_nlink if old is not None and old.st_nlink > 1 else 0
    return FileWrite(created=old is None, unlinked_links=links)


def links_note(links: int) -> str:
    """What the model reads when a hard-linked file was replaced rather than written through."""
    others = links - 1
    keep = "its other link keeps" if others == 1 else f"its {others} other links keep"
    return f"(the file had {links} hard links: it was replaced, not written through, so {keep} the old content)"


def _current(place: Anchor) -> os.stat_result | None:
    """What the name holds now: a regular file's status or None; anything else refuses."""
    info = lstat_in(place)
    if info is None or stat.S_ISREG(info.st_mode):
        return info
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(f"Is a directory: {place.path}")
    if stat.S_ISLNK(info.st_mode):
        raise PathChangedError(errno.ELOOP, f"{place.path} is a symlink now")
    raise NotRegularFileError(f"{describe_kind(info.st_mode)}, not a regular file")


def current_umask() -> int:
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

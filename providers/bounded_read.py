"""Reading a file baton did not write: a regular file, and at most so many bytes.

A configuration or instruction file can be a symlink to ``/dev/zero`` (reading never ends, then
memory runs out), to ``/dev/stdin`` or a FIFO (opening or reading waits forever), or just huge.
Every such file is opened without blocking (``O_NONBLOCK``: a FIFO without a writer opens at
once), checked on the open descriptor to be a regular file (the check and the read see the same
file, whatever is swapped in between), and read up to a cap per kind of file:

=============================================  ==========================  ====================
kind                                           cap                         over the cap
=============================================  ==========================  ====================
JSON configuration (settings, models.json,     :data:`MAX_CONFIG_BYTES`    refused
``.mcp.json``, trusted projects)               (1 MiB)
context files, ``SYSTEM.md``, skills, prompt   each module's own cap       truncated or refused
templates                                      (256 KiB)                   (see the module)
=============================================  ==========================  ====================

Failures are :class:`FileRefusedError` (an ``OSError``, so callers that already turn an unreadable
file into one warning need nothing new) with a message that names the file and what is wrong.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_CONFIG_BYTES = 1024 * 1024
"""Cap for JSON configuration files (settings, models.json, MCP server lists, trust records)."""

StrPath = str | Path


class FileRefusedError(OSError):
    """The file is not read: not a regular file, or larger than allowed."""


class NotRegularFileError(FileRefusedError):
    """A device, FIFO, socket or directory where a regular file was expected."""


class FileTooLargeError(FileRefusedError):
    """The file holds more bytes than the cap for its kind."""


def describe_kind(mode: int) -> str:
    """``a directory``, ``a FIFO``, ``a character device``... for a message."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular(path: StrPath, *, dir_fd: int | None = None, follow: bool = True) -> int:
    """An open, read-only descriptor on ``path``, which must be a regular file.

    ``follow=False`` refuses a symlink in the last component (``O_NOFOLLOW``); ``dir_fd``
    resolves a relative ``path`` from that directory. Raises ``FileNotFoundError`` and the other
    ``OSError``s of ``open``, and :class:`NotRegularFileError`."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(f"{describe_kind(mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes from ``fd`` (one more than allowed tells "too large")."""
    chunks: list[bytes] = []
    left = limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(
    path: StrPath, limit: int, *, dir_fd: int | None = None, follow: bool = True, truncate: bool = False
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Over the cap: :class:`FileTooLargeError`, or with ``truncate`` the first ``limit`` bytes.
    Raises ``FileNotFoundError`` (and other ``OSError``s) as ``open`` would."""
    fd = open_regular(path, dir_fd=dir_fd, follow=follow)
    try:
        data = read_fd(fd, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        if truncate:
            return data[:limit]
        raise FileTooLargeError(f"larger than {format_cap(limit)}")
    return data


def read_regular_text(path: StrPath, limit: int = MAX_CONFIG_BYTES, *, follow: bool = True) -> str:
    """:func:`read_regular` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_regular(path, limit, follow=follow).decode("utf-8")


def format_cap(limit: int) -> str:
    """``1 MB``, ``256 KB``, ``100 bytes``."""
    if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MB"
    if limit >= 1024 and limit % 1024 == 0:
        return f"{limit // 1024} KB"
    return f"{limit} bytes"

"""Atomic file replacement: a crash or a full disk never leaves half a file behind.

The new bytes go to a temporary file in the target's own folder (so the rename cannot cross file
systems), are flushed and fsynced, get the old file's permission bits (or the umask default for a
new file) and, when running as root, its owner; then a rename swaps them in and the folder is
synced. A symlink is followed: its target is replaced and the link stays a link. The folder is
reached through handles without following symlinks after that resolution
(:mod:`tools.anchored`), so the write lands where the path pointed when it was resolved.

A file with several hard links is replaced, not written through (its other links keep the old
content). Anything but a regular file (a FIFO, a device, a socket) is refused with
:class:`NotRegularFileError` — replacing it would destroy it.
"""

from __future__ import annotations

import os

from baton.providers.bounded_read import NotRegularFileError
from baton.tools.anchored import anchor, replace_file
from baton.tools.paths import fast_realpath

__all__ = ["NotRegularFileError", "atomic_write"]


def atomic_write(path: str, data: bytes) -> bool:
    """Replace (or create) ``path`` with ``data`` atomically. Returns True when the file was new.

    The parent directory must exist. Raises ``IsADirectoryError`` when ``path`` is a directory and
    :class:`NotRegularFileError` when it is any other non-regular file."""
    with anchor(fast_realpath(os.path.abspath(path))) as place:
        return replace_file(place, data).created

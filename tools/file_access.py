"""Where read, edit and write get and put file text: the disk, or a host that knows better.

An editor hosting baton (ACP's ``fs/read_text_file`` / ``fs/write_text_file``) holds unsaved
buffers: reading through it shows the model what the user sees, and writing through it lets the
editor track the change. A tool with ``file_access`` set asks it first; ``None`` from
:meth:`FileAccess.read_text` (or ``False`` from :meth:`FileAccess.write_text`) means "not mine,
use the disk". Binary files and images always come from the disk.
"""

from __future__ import annotations

import os
from typing import Protocol

from baton.providers.bounded_read import NotRegularFileError, open_regular


class FileAccess(Protocol):
    """A pluggable file-text backend for the file tools (absolute paths)."""

    async def read_text(self, path: str) -> str | None:
        """The file's text, or ``None`` to read it from the disk."""
        ...

    async def write_text(self, path: str, content: str) -> bool:
        """Write the whole text; ``False`` to write it to the disk instead."""
        ...


SNIFF_BYTES = 8192


def is_text_file(path: str, sniff: int = SNIFF_BYTES) -> bool:
    """True unless the file on disk is an image or has a NUL byte early on (binary). A FIFO or
    device is never opened for reading (it could block or never end): False."""
    try:
        fd = open_regular(path)
    except NotRegularFileError:
        return False
    except OSError:
        return True  # missing or unreadable here: the host may still have it
    try:
        head = os.read(fd, sniff)
    except OSError:
        return True
    finally:
        os.close(fd)
    return is_text_data(head)


def is_text_data(data: bytes, sniff: int = SNIFF_BYTES) -> bool:
    """True unless ``data`` starts like an image or has a NUL byte early on (binary)."""
    from baton.tools.images import detect_image_mime

    head = data[:sniff]
    return detect_image_mime(head) is None and b"\x00" not in head

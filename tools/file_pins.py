"""Pinning the content of files a trusted command runs.

When the user trusts a project, what they trusted includes the workspace files its hooks and MCP
servers run (``./scripts/lint.sh``, ``python tools/server.py``): the model can rewrite those, and
they run outside the sandbox. A :class:`FilePin` remembers one such file's digest at trust time (or
that it did not exist); :func:`changed_files` says which pinned files differ now, right before the
command starts, so a rewritten script never runs on the strength of an old answer.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

ABSENT = "absent"
"""The digest of a file that does not exist (a pinned script may not appear later either)."""
NOT_REGULAR = "not-a-regular-file"
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FilePin:
    """One file and its digest when it was trusted."""

    path: str
    """Absolute path (as the command names it, symlinks not resolved)."""
    shown: str
    """The path as the user reads it (relative to the project)."""
    digest: str


def file_digest(path: str) -> str:
    """``sha256:<hex>`` of the file's bytes, :data:`ABSENT` when there is none, or
    :data:`NOT_REGULAR` for a directory, device or pipe (never read: ``/dev/zero`` would not end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ABSENT
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return NOT_REGULAR
        digest = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
        return f"sha256:{digest.hexdigest()}"
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    finally:
        os.close(fd)


def changed_files(pins: Iterable[FilePin]) -> list[str]:
    """The ``shown`` names of the pinned files whose content is no longer what was trusted."""
    return [pin.shown for pin in pins if file_digest(pin.path) != pin.digest]

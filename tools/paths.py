"""Resolve the paths a model writes into absolute paths, and into the real paths tools open.

Relative paths are taken against the tool's working directory, ``~`` and ``~/...`` expand to the
home directory, a leading ``@`` (how users and models cite files) is dropped, and the Unicode
spaces models like to emit (no-break space and friends) become plain spaces.

:func:`tool_real_path` is the one resolution both the permission check and the file tool use: the
check judges that real path, and the tool opens that same path through folder handles
(:mod:`tools.anchored`), so the two can never disagree about where a call goes.
"""

from __future__ import annotations

import os
import re
import unicodedata

_PROC_FD = os.path.isdir("/proc/self/fd") and hasattr(os, "O_PATH")

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NBSP = "\u202f"


def resolve_path(path: str, cwd: str) -> str:
    """The absolute, normalised form of ``path`` (see the module docstring)."""
    cleaned = _UNICODE_SPACES.sub(" ", path.strip())
    if cleaned.startswith("@"):
        cleaned = cleaned[1:]
    if cleaned == "~" or cleaned.startswith("~/"):
        cleaned = os.path.expanduser("~") + cleaned[1:]
    elif cleaned.startswith("~"):
        cleaned = os.path.expanduser(cleaned)
    if not cleaned:
        cleaned = "."
    return os.path.normpath(os.path.join(cwd, cleaned))


def resolve_existing_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_path`, but when that file does not exist, try the spellings a file
    manager may have used instead: macOS screenshot names (a narrow no-break space before
    ``AM``/``PM``) and the NFC/NFD Unicode forms. Returns the first existing candidate, else the
    plain resolution."""
    resolved = resolve_path(path, cwd)
    if os.path.lexists(resolved):
        return resolved
    candidates = [
        re.sub(r" (AM|PM)\.", _NARROW_NBSP + r"\1.", resolved),
        unicodedata.normalize("NFC", resolved),
        unicodedata.normalize("NFD", resolved),
    ]
    for candidate in candidates:
        if candidate != resolved and os.path.lexists(candidate):
            return candidate
    return resolved


def display_path(absolute: str, cwd: str) -> str:
    """``absolute`` relative to ``cwd`` when it lies inside it, else as is (for messages)."""
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:
        return absolute
    return absolute if rel.startswith("..") else rel


def tool_real_path(path: str, cwd: str, *, must_exist: bool = False) -> str:
    """The real path (every symlink resolved; for a file that does not exist yet, through its
    nearest existing ancestor) a tool opens for its ``path`` argument; ``must_exist``: the
    argument names a file that must exist, so the other spellings of its name are tried
    (:func:`resolve_existing_path`)."""
    resolved = resolve_existing_path(path, cwd) if must_exist else resolve_path(path, cwd)
    return fast_realpath(resolved)


def fast_realpath(path: str) -> str:
    """``os.path.realpath`` of an absolute, normalised ``path``; on Linux the kernel resolves
    the existing part (one ``open(O_PATH)`` instead of an ``lstat`` per component)."""
    if not _PROC_FD:
        return os.path.realpath(path)
    tail: list[str] = []
    current = path
    while True:
        try:
            fd = os.open(current, os.O_PATH)
        except FileNotFoundError:
            if os.path.lexists(current):  # a dangling symlink: where it points decides
                return os.path.realpath(path)
            parent, name = os.path.split(current)
            if parent == current:
                return os.path.realpath(path)
            tail.append(name)
            current = parent
            continue
        except OSError:
            return os.path.realpath(path)
        try:
            resolved = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return os.path.realpath(path)
        finally:
            os.close(fd)
        if not resolved.startswith("/"):  # e.g. "anon_inode:..."; never for a real path
            return os.path.realpath(path)
        return os.path.join(resolved, *reversed(tail)) if tail else resolved

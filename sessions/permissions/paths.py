"""Where a tool call's path really points, and which places are always protected.

A path is resolved as the tools resolve it (relative to the working directory, ``~`` expanded,
a leading ``@`` dropped), then through every symlink — for a file that does not exist yet, through
its nearest existing ancestor — so ``../``, absolute paths and symlinks pointing out of the
workspace are all seen for what they are.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from baton.providers.paths import baton_home
from baton.tools.paths import resolve_path

PROTECTED_NAMES = (".baton", ".git", ".claude", ".mcp.json")
"""Relative to the workspace: writing here could grant the model more permissions, or run its code
outside the sandbox (a git hook, ``core.fsmonitor``); the sandbox keeps them read-only, and one
that a sandboxed command creates is reported."""
MENTIONED_NAMES = (".baton", ".git/hooks", ".git/config", ".claude", ".mcp.json")
"""What a shell command naming asks first (``.git`` alone would match ``.gitignore``)."""


_PROC_FD = os.path.isdir("/proc/self/fd") and hasattr(os, "O_PATH")


def real_path(path: str, cwd: str) -> str:
    """The absolute path ``path`` (as a tool received it) really designates."""
    return fast_realpath(resolve_path(path, cwd))


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


def is_within(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both absolute and normalised)."""
    if root == "/":
        return path.startswith("/")
    return path == root or (path.startswith(root) and path[len(root) : len(root) + 1] == "/")


def temp_roots() -> list[str]:
    """The system temp dir and ``$TMPDIR`` (real paths, without duplicates)."""
    roots = [os.path.realpath(tempfile.gettempdir())]
    env = os.environ.get("TMPDIR")
    if env:
        roots.append(os.path.realpath(env))
    return list(dict.fromkeys(roots))


@dataclass(frozen=True, slots=True)
class Workspace:
    """The project directory the tools work in, and the places nobody may change unasked."""

    root: str
    """The real path of the working directory."""
    given: str
    """The working directory as the session has it (may differ when it is reached via a symlink)."""
    protected: tuple[str, ...]
    read_roots: tuple[str, ...]

    @classmethod
    def for_dir(cls, cwd: str, home: str | None = None) -> Workspace:
        """The workspace rooted at ``cwd`` (``home``: ``$BATON_HOME``, protected too)."""
        root = os.path.realpath(cwd)
        protected = [os.path.join(root, name) for name in PROTECTED_NAMES]
        protected.append(os.path.realpath(home or str(baton_home())))
        return cls(root, os.path.abspath(cwd), tuple(protected), (root, *temp_roots()))

    def resolve(self, path: str) -> str:
        """The real absolute path of a tool's ``path`` argument."""
        return real_path(path, self.given)

    def contains(self, real: str) -> bool:
        """Whether the real path lies in the workspace."""
        return is_within(real, self.root)

    def readable(self, real: str) -> bool:
        """Whether reads of the real path run unasked (workspace and temp dirs)."""
        return any(is_within(real, root) for root in self.read_roots)

    def protected_match(self, real: str) -> str | None:
        """The protected place the real path falls in, if any."""
        return next((p for p in self.protected if is_within(real, p)), None)

    def mentions_protected(self, command: str) -> str | None:
        """A protected place a shell command names (its text, or ``$BATON_HOME``), if any.

        Only a hint — a shell can spell a path many ways; in ``auto`` the sandbox keeps these
        read-only whatever the spelling."""
        for name in MENTIONED_NAMES:
            if name in command:
                return name
        home = self.protected[-1]
        if "BATON_HOME" in command or (home and home in command):
            return "$BATON_HOME"
        return None

    def display(self, real: str) -> str:
        """``real`` relative to the workspace when inside it, else absolute."""
        if real.startswith(self.root.rstrip("/") + "/"):
            return real[len(self.root.rstrip("/")) + 1 :]
        return real

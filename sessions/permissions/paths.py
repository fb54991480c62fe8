"""Where a tool call's path really points, and which places are always protected.

A path is resolved as the tools resolve it (relative to the working directory, ``~`` expanded,
a leading ``@`` dropped), then through every symlink — for a file that does not exist yet, through
its nearest existing ancestor — so ``../``, absolute paths and symlinks pointing out of the
workspace are all seen for what they are.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace

from baton.providers.paths import baton_home
from baton.tools.paths import fast_realpath as fast_realpath  # re-exported: it lives with the tools
from baton.tools.paths import tool_real_path

PROTECTED_NAMES = (".baton", ".git", ".claude", ".mcp.json")
"""Relative to the workspace: writing here could grant the model more permissions, or run its code
outside the sandbox (a git hook, ``core.fsmonitor``); the sandbox keeps them read-only, and one
that a sandboxed command creates is reported."""
MENTIONED_NAMES = (".baton", ".git/hooks", ".git/config", ".claude", ".mcp.json")
"""What a shell command naming asks first (``.git`` alone would match ``.gitignore``)."""


def real_path(path: str, cwd: str, *, must_exist: bool = False) -> str:
    """The absolute path a tool's ``path`` argument really designates: the path the tool will
    open (see :func:`baton.tools.paths.tool_real_path`; ``must_exist`` as the tool's path
    parameter says)."""
    return tool_real_path(path, cwd, must_exist=must_exist)


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

    def protecting(self, paths: list[str]) -> Workspace:
        """This workspace with ``paths`` protected too (kept before ``$BATON_HOME``, which stays last)."""
        extra = tuple(p for p in paths if p not in self.protected)
        return replace(self, protected=(*self.protected[:-1], *extra, self.protected[-1]))

    def resolve(self, path: str, *, must_exist: bool = False) -> str:
        """The real absolute path of a tool's ``path`` argument (what the tool will open)."""
        return real_path(path, self.given, must_exist=must_exist)

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

"""The bash sandbox (Linux: bubblewrap, the engine Codex uses).

A sandboxed command sees the whole file system read-only except the workspace (and its real path
when it is reached through a symlink), the system temp dir and ``$TMPDIR``; inside the workspace,
``.baton/``, ``.git/hooks`` and ``.git/config`` stay read-only. It gets a private ``/dev`` and
``/proc``, no network unless allowed, no capabilities (even when baton runs as root), and dies
with baton. The command still leads its own
process group (bwrap does, for a fresh sandbox; the command itself, in the session's long-lived
one from :mod:`baton.tools.sandbox_host`), so timeout and abort work as without the sandbox.

:func:`probe` checks once whether bwrap can start here (it needs user namespaces, or root);
:func:`looks_like_denial` recognises output that suggests the sandbox got in the way.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache

READ_ONLY_INSIDE = (".baton", ".git/hooks", ".git/config", ".mcp.json")
"""Inside the writable workspace, these stay read-only."""

_DENIAL = re.compile(
    r"Read-only file system|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"Connection refused|Couldn't connect to server|"
    r"\[Errno 101\]|\[Errno 30\]",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether the sandbox can be used, and if not, why (one line for the user)."""

    available: bool
    reason: str = ""
    bwrap: str | None = None


@dataclass
class Sandbox:
    """How to wrap commands for one workspace."""

    workspace: str
    network: bool = False
    extra_writable: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)
    """More places kept read-only even when they lie in a writable root (e.g. ``$BATON_HOME``)."""
    bwrap: str = "bwrap"

    def writable_roots(self) -> list[str]:
        """The workspace (given and real path), the temp dirs and any extra ones (existing only)."""
        roots = [self.workspace, os.path.realpath(self.workspace), tempfile.gettempdir()]
        tmpdir = os.environ.get("TMPDIR")
        if tmpdir:
            roots.append(tmpdir)
        roots.extend(self.extra_writable)
        out: list[str] = []
        for root in roots:
            absolute = os.path.abspath(root)
            if os.path.isdir(absolute) and absolute not in out:
                out.append(absolute)
        return out

    def argv(self, command_argv: list[str], cwd: str | None = None) -> list[str]:
        """``bwrap ... -- command_argv``, starting in ``cwd`` (default: the workspace)."""
        return [*self.bwrap_args(), "--chdir", cwd or self.workspace, "--", *command_argv]

    def bwrap_args(self) -> list[str]:
        """bwrap and its options (what the file system looks like now decides the read-only
        binds: only paths that exist can be bound), without a working directory or command."""
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        roots = self.writable_roots()
        for root in roots:
            args += ["--bind", root, root]
        for base in dict.fromkeys((self.workspace, os.path.realpath(self.workspace))):
            for name in READ_ONLY_INSIDE:
                inner = os.path.join(base, name)
                if os.path.lexists(inner):
                    args += ["--ro-bind", inner, inner]
        for extra in dict.fromkeys(self.read_only):
            if os.path.exists(extra) and any(extra == r or extra.startswith(r.rstrip("/") + "/") for r in roots):
                args += ["--ro-bind", extra, extra]
        if not self.network:
            args.append("--unshare-net")
        if os.geteuid() == 0:
            # bwrap run by root keeps root's capabilities: the command could remount / read-write
            # or read any process's memory. Unprivileged bwrap gives none outside its namespace.
            args += ["--cap-drop", "ALL"]
        args.append("--die-with-parent")
        return args


def bound_paths_identity(bwrap_args: list[str]) -> tuple[tuple[str, int, int], ...]:
    """Device and inode of every path ``bwrap_args`` binds: a long-lived sandbox still shows
    what was there when it started, so a path replaced since (``.git`` recreated) needs a new one."""
    identity: list[tuple[str, int, int]] = []
    for flag, source in itertools.pairwise(bwrap_args):
        if flag in ("--bind", "--ro-bind"):
            try:
                info = os.lstat(source)
            except OSError:
                identity.append((source, -1, -1))
            else:
                identity.append((source, info.st_dev, info.st_ino))
    return tuple(identity)


def find_bwrap() -> str | None:
    """The bwrap executable, if installed."""
    return shutil.which("bwrap")


@lru_cache(maxsize=1)
def probe() -> SandboxStatus:
    """Whether bubblewrap works here (cached for the process)."""
    if not os.path.isdir("/proc") or os.uname().sysname != "Linux":
        return SandboxStatus(False, "the sandbox needs Linux (bubblewrap)")
    path = find_bwrap()
    if path is None:
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed")
    test = Sandbox(tempfile.gettempdir(), bwrap=path).argv(["/bin/sh", "-c", "true"])
    try:
        done = subprocess.run(test, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"bwrap failed to start ({exc})")
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxStatus(False, f"bwrap failed to start ({detail[-1] if detail else done.returncode})")
    return SandboxStatus(True, "", path)


def looks_like_denial(output: str) -> bool:
    """Whether a failed command's output suggests the sandbox blocked it."""
    return _DENIAL.search(output) is not None

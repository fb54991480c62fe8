"""Running the ``git`` executable against a shadow repository, never the user's.

Nothing the workspace (or the model working in it) could write is read: every call gets an
environment of its own with the caller's ``GIT_*`` variables dropped (a ``GIT_DIR`` inherited from
a hook must not redirect us into the user's repository, ``GIT_CONFIG_PARAMETERS`` must not add
settings), the system and global configuration ignored, ``GIT_DIR``, ``GIT_WORK_TREE`` and
``GIT_INDEX_FILE`` pointing at the shadow repository in ``$BATON_HOME`` and the workspace, and
command-line settings (the strongest) that switch off every way git runs a program or rewrites
bytes: hooks (``core.hooksPath=/dev/null``), ``core.fsmonitor``, the global attributes and
excludes files. Attribute filter drivers cannot run either: none is configured anywhere git
looks, and the shadow's ``info/attributes`` unsets ``filter`` for every path.

Revisions are checked before they reach git (:func:`object_id`: full hex object ids only) and
follow ``--end-of-options``, so a value read from a session file can never become an option
such as ``--output=FILE``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TypeGuard

from baton.sessions.checkpoints.errors import CheckpointError

END = "--end-of-options"
"""Put before revisions: what follows is never an option."""

_IDENTITY = {
    "GIT_AUTHOR_NAME": "baton",
    "GIT_AUTHOR_EMAIL": "checkpoints@baton.invalid",
    "GIT_COMMITTER_NAME": "baton",
    "GIT_COMMITTER_EMAIL": "checkpoints@baton.invalid",
}
SAFE_SETTINGS = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.attributesFile", os.devnull),
    ("core.excludesFile", os.devnull),
    ("core.trustctime", "true"),
    ("core.checkStat", "default"),
)
"""``-c`` settings of every call: they override any configuration file."""
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

invocations = 0
"""How many git processes this process has started (for tests and benchmarks)."""


def find_git() -> str | None:
    """The path of the ``git`` executable, or ``None`` when there is none."""
    return shutil.which("git")


def is_object_id(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a full hex object id (SHA-1 or SHA-256), the only revisions baton
    ever hands to git."""
    return isinstance(value, str) and _OBJECT_ID.fullmatch(value) is not None


def object_id(value: object) -> str:
    """``value`` when it is a full hex object id, else :class:`CheckpointError`."""
    if not is_object_id(value):
        raise CheckpointError(f"Not a checkpoint id: {str(value)[:80]!r}")
    return value


def git_environment(git_dir: Path, work_tree: Path) -> dict[str, str]:
    """The environment of every git call (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(_IDENTITY)
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(git_dir / "index"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


class Git:
    """Runs git with ``GIT_DIR=git_dir`` and ``GIT_WORK_TREE=work_tree``."""

    def __init__(self, executable: str, git_dir: Path, work_tree: Path) -> None:
        self.executable = executable
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.env = git_environment(git_dir, work_tree)
        self.keep_fds: tuple[int, ...] = ()
        """Descriptors every git child inherits: the store passes its lock, so a git process
        orphaned by a killed baton keeps the workspace locked until it has finished."""

    def argv(self, *args: str) -> list[str]:
        """The command line of ``git args`` with the safe settings in front."""
        settings = [part for key, value in SAFE_SETTINGS for part in ("-c", f"{key}={value}")]
        return [self.executable, *settings, *args]

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
        unset: tuple[str, ...] = (),
    ) -> bytes:
        """Run ``git args`` in the work tree; returns stdout. Raises :class:`CheckpointError`
        (with git's message) when it fails and ``check`` is true."""
        return self.call(*args, stdin=stdin, env=env, check=check, unset=unset)[1]

    def call(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = False,
        unset: tuple[str, ...] = (),
    ) -> tuple[int, bytes]:
        """Like :meth:`run`, returning the exit status too (``check`` is off by default)."""
        global invocations
        invocations += 1
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        for name in unset:
            full_env.pop(name, None)
        try:
            proc = subprocess.run(
                self.argv(*args),
                input=stdin,
                capture_output=True,
                cwd=self.work_tree,
                env=full_env,
                check=False,
                pass_fds=self.keep_fds,
            )
        except OSError as exc:
            raise CheckpointError(f"Could not run git: {exc}") from exc
        if check and proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip() or f"exit status {proc.returncode}"
            raise CheckpointError(f"git {args[0]} failed: {message}")
        return proc.returncode, proc.stdout


def nul_join(paths: list[str]) -> bytes:
    """Paths as git's ``-z --stdin`` expects them."""
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def nul_split(data: bytes) -> list[str]:
    """Split git's ``-z`` output into strings."""
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]

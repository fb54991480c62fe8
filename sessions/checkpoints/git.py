"""Running the ``git`` executable against a shadow repository, never the user's.

Every call gets an environment of its own: the caller's ``GIT_*`` variables are dropped (a
``GIT_DIR`` or ``GIT_INDEX_FILE`` inherited from a hook must not redirect us into the user's
repository), the system and global configuration are ignored (no fsmonitor hooks, clean/smudge
filters or ``autocrlf`` from the user's setup can run or change bytes), and ``GIT_DIR``,
``GIT_WORK_TREE`` and ``GIT_INDEX_FILE`` point at the shadow repository and the workspace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from baton.sessions.checkpoints.errors import CheckpointError

_IDENTITY = {
    "GIT_AUTHOR_NAME": "baton",
    "GIT_AUTHOR_EMAIL": "checkpoints@baton.invalid",
    "GIT_COMMITTER_NAME": "baton",
    "GIT_COMMITTER_EMAIL": "checkpoints@baton.invalid",
}

invocations = 0
"""How many git processes this process has started (for tests and benchmarks)."""


def find_git() -> str | None:
    """The path of the ``git`` executable, or ``None`` when there is none."""
    return shutil.which("git")


class Git:
    """Runs git with ``GIT_DIR=git_dir`` and ``GIT_WORK_TREE=work_tree``."""

    def __init__(self, executable: str, git_dir: Path, work_tree: Path) -> None:
        self.executable = executable
        self.git_dir = git_dir
        self.work_tree = work_tree
        base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        base.update(_IDENTITY)
        base.update(
            GIT_DIR=str(git_dir),
            GIT_WORK_TREE=str(work_tree),
            GIT_INDEX_FILE=str(git_dir / "index"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
        )
        self.env = base
        self.keep_fds: tuple[int, ...] = ()
        """Descriptors every git child inherits: the store passes its lock, so a git process
        orphaned by a killed baton keeps the workspace locked until it has finished."""

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
        global invocations
        invocations += 1
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        for name in unset:
            full_env.pop(name, None)
        try:
            proc = subprocess.run(
                [self.executable, *args],
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
        return proc.stdout


def nul_join(paths: list[str]) -> bytes:
    """Paths as git's ``-z --stdin`` expects them."""
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def nul_split(data: bytes) -> list[str]:
    """Split git's ``-z`` output into strings."""
    return [p.decode("utf-8", "surrogateescape") for p in data.split(b"\0") if p]

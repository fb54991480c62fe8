"""Shell processes: which shell, and how to stop a command with everything it started.

Commands run in their own session (``start_new_session=True``), so the shell is the leader of a
new process group and every child and background job it spawns joins that group. Stopping a
command means signalling the whole group: SIGTERM first, SIGKILL for whatever is still alive after
a short grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Awaitable
from typing import Protocol

from baton.providers.errors import BatonError
from baton.tools.proc_table import process_table

KILL_GRACE_SECONDS = 0.5
"""How long the group gets to exit after SIGTERM before SIGKILL."""


def shell_command(command: str) -> list[str]:
    """argv running ``command``: bash when installed, else ``sh``."""
    shell = shutil.which("bash") or ("/bin/bash" if os.path.exists("/bin/bash") else None)
    if shell is None:
        shell = shutil.which("sh") or "/bin/sh"
    return [shell, "-c", command]


class StartedCommand(Protocol):
    """What the bash tool needs of a started command (``asyncio.subprocess.Process`` has it, and
    so does a command a sandbox host started)."""

    @property
    def pid(self) -> int | None:
        """The command's process group (the pid of its leader, as this process sees it); None when
        the command ended before its group could be learned (nothing is left to signal)."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status once known (negative: killed by that signal)."""
        ...

    async def wait(self) -> int | None:
        """Wait for the command to end; its exit status (None: it cannot be known)."""
        ...


class CommandLaunchError(BatonError):
    """A launcher could not tell whether it started the command; the message says what the
    model should know (bash answers the call with it)."""


class CommandLauncher(Protocol):
    """How bash starts one call's shell, with stdout and stderr on ``output_fd`` and in a process
    group of its own (the permission policy starts sandboxed calls inside the sandbox this way).
    ``background=True`` (only passed for a background command) says the command will outlive
    the call."""

    def __call__(self, argv: list[str], tool_call_id: str, cwd: str, env: dict[str, str], output_fd: int,
                 /, *, background: bool = ...) -> Awaitable[StartedCommand]:
        """The started command."""
        ...


async def start_command(argv: list[str], cwd: str, env: dict[str, str], output_fd: int) -> StartedCommand:
    """Start ``argv`` directly: stdin from ``/dev/null``, stdout and stderr on ``output_fd``,
    leading a new process group."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=output_fd,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is left in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg also succeeds for zombies waiting to be reaped; look closer where /proc exists.
    rows = process_table()
    if rows is None:
        return True
    return any(row.pgid == pgid and row.state not in (b"Z", b"X") for row in rows)


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to process group ``pgid`` (ignoring a group that is already gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_group(pgid: int, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the group, wait up to ``grace`` seconds for it to go, then SIGKILL the rest."""
    signal_group(pgid, signal.SIGTERM)
    # Stopped processes only act on SIGTERM once continued.
    signal_group(pgid, signal.SIGCONT)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        if not group_alive(pgid):
            return
        await asyncio.sleep(0.02)
    signal_group(pgid, signal.SIGKILL)
    deadline = loop.time() + 2.0
    while loop.time() < deadline and group_alive(pgid):
        await asyncio.sleep(0.02)

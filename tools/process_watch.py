"""Noticing a command that can never finish because a process of it is stopped.

A command runs in its own session without job control, so nothing will ever send SIGCONT to a
process stopped by SIGSTOP, SIGTSTP, SIGTTIN or SIGTTOU (``kill -STOP $$``): waiting for it would
only end at the timeout. :func:`watch_stopped` polls the state of the command's process group in
``/proc`` and returns once some process has stayed stopped for a grace period.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from baton.tools.proc_table import process_table

POLL_SECONDS = 0.25
STOPPED_GRACE_SECONDS = 1.0
"""How long a process must stay stopped before the command counts as stuck (a brief stop that
the command itself continues is not reported)."""


@dataclass(frozen=True, slots=True)
class StoppedProcess:
    """A process of the group found stopped: its pid and command name."""

    pid: int
    name: str


def stopped_in_group(pgid: int) -> list[StoppedProcess]:
    """Processes of group ``pgid`` in the stopped state (``T``; ``t`` is a debugger's stop and is
    left alone). Empty where ``/proc`` is missing."""
    return [StoppedProcess(row.pid, row.name) for row in process_table() or []
            if row.state == b"T" and row.pgid == pgid]


async def watch_stopped(
    pgid: int, *, poll: float = POLL_SECONDS, grace: float = STOPPED_GRACE_SECONDS
) -> StoppedProcess:
    """Return the first process of group ``pgid`` seen stopped for ``grace`` seconds in a row,
    looking every ``poll`` seconds from ``poll`` seconds on (never returns while nothing is
    stopped: cancel it when the command ends)."""
    loop = asyncio.get_running_loop()
    first_seen: dict[int, float] = {}
    while True:
        # Sleep first: most commands end within one poll, and they should never pay for a scan of
        # the process table (a stop is still reported ``poll`` + ``grace`` seconds after it).
        await asyncio.sleep(poll)
        now = loop.time()
        current = {p.pid: p for p in stopped_in_group(pgid)}
        first_seen = {pid: first_seen.get(pid, now) for pid in current}
        for pid, since in first_seen.items():
            if now - since >= grace:
                return current[pid]

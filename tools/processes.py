"""Every process baton starts, so that any exit can end them all.

Commands run in process groups of their own (see :mod:`tools.shell`). A command's background
jobs (``cmd &``, ``nohup cmd &``) stay in its group after the shell exits, so the group stays
registered here until it is empty; :func:`kill_all` ends every registered group when baton exits,
however it exits (normal end, Ctrl+C, SIGTERM, SIGHUP).

A process that leaves its group (``setsid cmd``) escapes that net. On Linux, baton makes itself
a *child subreaper* (:func:`become_subreaper`): an orphan anywhere below baton is re-parented to
baton instead of init, so it stays a descendant, and :func:`kill_all` also ends every descendant
it finds in ``/proc``. (A cgroup would catch double-forks too, but needs a delegated cgroup tree,
which an ordinary terminal session does not have.)

Register with :func:`register_group` (bash tool, ``!cmd``, MCP servers, hooks); code that runs a
command synchronously to completion (``apiKey: "!command"``) kills its own group in a
``finally`` and needs no registration.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import time

from baton.tools.proc_table import process_table

logger = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
KILL_GRACE_SECONDS = 0.5
"""How long processes get to exit after SIGTERM before SIGKILL."""

_groups: set[int] = set()
_lock = threading.Lock()
_subreaper = False
_atexit_installed = False


def register_group(pgid: int) -> None:
    """Remember process group ``pgid`` (a command started with ``start_new_session=True``)."""
    global _atexit_installed
    with _lock:
        _prune()
        _groups.add(pgid)
        if not _atexit_installed:
            _atexit_installed = True
            atexit.register(kill_all)


def registered_groups() -> list[int]:
    """The process groups still registered (dead ones are forgotten on the next registration)."""
    with _lock:
        return sorted(_groups)


def become_subreaper() -> bool:
    """Make this process the reaper of orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``);
    returns whether that is in effect. Safe to call more than once."""
    global _subreaper
    if not _subreaper:
        _subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)
    return _subreaper


def keep_memory_private() -> bool:
    """Keep other processes of this user, the commands the agent runs among them, out of this
    process's memory and environment, where the API keys are (Linux ``PR_SET_DUMPABLE`` 0:
    ``/proc/<pid>/environ``, ``mem`` and ``fd`` become root's, and ptrace needs root). A
    sandboxed command sees every pid in ``/proc`` and could otherwise read the keys baton
    scrubbed from its environment. Also means no core dump; ``BATON_ALLOW_PTRACE=1`` leaves the
    process open to a same-user profiler or debugger. Returns whether the protection is on."""
    if os.environ.get("BATON_ALLOW_PTRACE") == "1":
        return False
    return _prctl(PR_SET_DUMPABLE, 0)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def signal_all(sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` (and SIGCONT, so stopped processes act on it) to every registered group and
    every descendant, at once and without waiting; safe inside a signal handler's callback."""
    _send(*_targets(), sig)


def kill_all(grace: float = KILL_GRACE_SECONDS) -> None:
    """End every registered process group and every descendant process: SIGTERM, then SIGKILL
    for what is still alive after ``grace`` seconds; reaps re-parented orphans."""
    pids, groups = _targets()
    if _any_alive(pids, groups):  # the usual exit has nothing left to end: one scan of /proc
        _send(pids, groups, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            pids, groups = _targets()
            if not _any_alive(pids, groups):
                break
            time.sleep(0.02)
        pids, groups = _targets()
        for pgid in groups:
            _killpg(pgid, signal.SIGKILL)
        for pid in pids:
            _kill(pid, signal.SIGKILL)
    _reap()
    with _lock:
        _prune()


def descendants(root: int | None = None) -> list[int]:
    """Live (non-zombie) processes below ``root`` (default: this process), from ``/proc``;
    empty where there is no ``/proc``."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    for pid, ppid, _pgid, state in _proc_table():
        if state not in (b"Z", b"X"):
            children.setdefault(ppid, []).append(pid)
    out: list[int] = []
    stack = list(children.get(root, ()))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


# ---------------------------------------------------------------------------------------------


def _targets() -> tuple[list[int], list[int]]:
    with _lock:
        groups = sorted(_groups)
    return descendants(), groups


def _send(pids: list[int], groups: list[int], sig: int) -> None:
    for pgid in groups:
        _killpg(pgid, sig)
        _killpg(pgid, signal.SIGCONT)
    for pid in pids:
        _kill(pid, sig)
        _kill(pid, signal.SIGCONT)


def _any_alive(pids: list[int], groups: list[int]) -> bool:
    return bool(pids) or any(_group_alive(g) for g in groups)


def _proc_table() -> list[tuple[int, int, int, bytes]]:
    """``(pid, ppid, pgid, state)`` of every process, from ``/proc`` (empty without it)."""
    return [(row.pid, row.ppid, row.pgid, row.state) for row in process_table() or []]


def _group_alive(pgid: int) -> bool:
    from baton.tools.shell import group_alive

    return group_alive(pgid)


def _prune() -> None:
    """Forget groups with no process left (the caller holds the lock)."""
    for pgid in list(_groups):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            _groups.discard(pgid)
        except PermissionError:
            pass


def _reap() -> None:
    """Collect the exit status of re-parented orphans (they are our children now)."""
    if not _subreaper:
        return
    for pid, ppid, _pgid, state in _proc_table():
        if ppid == os.getpid() and state in (b"Z", b"X"):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _killpg(pgid: int, sig: int) -> None:
    if pgid <= 1 or pgid == os.getpgrp():
        return  # never our own group, never everything
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)

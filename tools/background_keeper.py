"""Keeps one background command from outliving the baton that started it (run as a script).

``python -I -S background_keeper.py ARGV...`` runs ARGV (a shell) as its child, in its
own process group (the keeper leads it; baton starts it as a new session), and becomes a *child
subreaper*, so whatever the shell starts, even with ``setsid`` or a double fork, stays below it.
It ends the whole tree:

- when the shell exits (a background process's leftover jobs end with it), then exits with the
  shell's status (the same signal, when the shell was killed by one);
- when the process that started it goes away, however it went (SIGKILL included): the parent
  (baton, or inside the sandbox the sandbox's server, which ends with baton) is watched through a
  pidfd (``getppid`` polled where there is none; with a pidfd the keeper sleeps until something
  happens). ``PR_SET_PDEATHSIG`` is not used: it fires
  when the *thread* that forked exits, not the process. (A parent that died in the few
  milliseconds before the keeper looked is not noticed; baton's exit handlers end the group.)

SIGTERM sent to the group (``kill_shell``) reaches the shell; the keeper itself waits for the
shell to act on it. :data:`END_SIGNAL` sent to the keeper ends the whole tree at once (what
ignored SIGTERM or left the group included); the keeper then ends with SIGKILL.

Standard library only, no baton import: it also runs inside the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
POLL_SECONDS = 0.25
END_SIGNAL = signal.SIGUSR1
_ended = False


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _descendants() -> list[int]:
    """Live processes below this one (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    me = os.getpid()
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in (b"Z", b"X"):
                children.setdefault(int(fields[1]), []).append(int(name))
    out: list[int] = []
    stack = list(children.get(me, ()))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


def _end_tree() -> None:
    """SIGKILL every descendant and every other process of the keeper's group."""
    for _ in range(3):  # a process forking while we kill: look again
        pids = _descendants()
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if not pids:
            break
    _reap_all()


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _parent_watch(parent: int) -> int | None:
    try:
        return os.pidfd_open(parent)
    except (AttributeError, OSError):
        return None


def _run(shell: int, parent: int, wake: int) -> int:
    """Wait for the shell's exit status, or for the parent to go (then: -1); ``wake`` becomes
    readable when a child ends."""
    watch = _parent_watch(parent)
    if os.getppid() != parent:
        return -1  # the parent went before the watch was set up
    while True:
        while True:  # reap whatever ended (re-parented orphans too)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 0
            if pid == 0:
                break
            if pid == shell:
                return status
        # With a pidfd nothing needs polling: a child's end and END_SIGNAL write to ``wake``
        # (the wakeup fd), the parent's end makes the pidfd readable.
        timeout = POLL_SECONDS if watch is None else None
        ready, _, _ = select.select([wake, *([] if watch is None else [watch])], [], [], timeout)
        if wake in ready:
            with contextlib.suppress(OSError):
                os.read(wake, 512)
        if _ended or (watch is not None and watch in ready) or os.getppid() != parent:
            return -1


def _end_requested(*_: object) -> None:
    global _ended
    _ended = True


def main(argv: list[str]) -> None:
    """``ARGV...``: see the module docstring."""
    parent = os.getppid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, lambda *_: None)  # the shell decides; SIGKILL ends us both
    signal.signal(END_SIGNAL, _end_requested)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)  # a child's end wakes select() at once
    shell = os.fork()
    if shell == 0:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(END_SIGNAL, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    status = _run(shell, parent, wake_read)
    _end_tree()
    if status == -1:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])

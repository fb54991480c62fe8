"""Looking for processes a test left behind (Linux ``/proc``) and waiting for a condition."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")


@dataclass(frozen=True)
class Process:
    """One live process as ``/proc`` shows it."""

    pid: int
    ppid: int
    pgid: int
    cmdline: str  # the arguments joined by spaces


def live_processes() -> list[Process]:
    """Every process that runs now; zombies (and processes gone while reading) are left out."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            found.append(Process(int(entry.name), int(fields[1]), int(fields[2]), cmdline))
    return found


def processes_with(marker: str) -> list[Process]:
    """Live processes whose command line contains ``marker``."""
    return [p for p in live_processes() if marker in p.cmdline]


def sleepers(marker: str) -> list[int]:
    """Pids of live ``sleep`` commands whose arguments contain ``marker``."""
    return [p.pid for p in processes_with(marker) if p.cmdline.startswith("sleep ")]


def kill_sleepers(marker: str) -> None:
    """Clean-up: SIGKILL whatever :func:`sleepers` finds (one already gone is fine)."""
    for pid in sleepers(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_until(predicate: Callable[[], object], timeout: float = 20.0, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds pass (then one last look)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())

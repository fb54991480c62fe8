"""What background commands cost baton while they print (issue 30: 8 of them, <= 0.5 % of a core).

``baton`` runs in a real terminal (tmux) against the replay server; the user starts ``--jobs``
background commands with ``!&`` (default 8), each printing a line every ``--every`` seconds
(default 0.05). Once they all run, the CPU of baton's own processes is measured for
``--seconds`` (default 20): the ``baton`` process and every descendant that is a Python
interpreter (the background keepers, the sandbox host), not the commands themselves (their shell
and its ``sleep``), read from ``/proc`` before and after. Printed as a percentage of one core,
baton's process and the keepers apart, with the same figure with no background command running
(idle, before they start) for comparison.

Run: ``python benchmarks/bench_background.py [--jobs 8] [--seconds 20] [--every 0.05]``.
CPU figures are process CPU time, meaningful on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_tui_turns import TICK, Tmux, _children, _stat_fields
from tests.provider_scripts import models_json_provider
from tests.replay_server import ReplayServer, Reply

API = "anthropic-messages"


def _own_cpu(pid: int) -> tuple[float, float, int]:
    """(CPU seconds of ``pid`` itself, CPU seconds of its Python descendants, how many of those)."""
    fields = _stat_fields(pid)
    own = (int(fields[11]) + int(fields[12])) / TICK
    helpers, count = 0.0, 0
    frontier = _children(pid)
    while frontier:
        member = frontier.pop()
        try:
            comm = Path(f"/proc/{member}/comm").read_text().strip()
            stat = _stat_fields(member)
        except OSError:
            continue
        if comm.startswith("python"):
            helpers += (int(stat[11]) + int(stat[12])) / TICK
            count += 1
        frontier.extend(_children(member))
    return own, helpers, count


def _percent(pid: int, seconds: float) -> tuple[float, float, int]:
    own0, helpers0, _ = _own_cpu(pid)
    time.sleep(seconds)
    own1, helpers1, count = _own_cpu(pid)
    return (own1 - own0) / seconds * 100, (helpers1 - helpers0) / seconds * 100, count


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=0.05, help="seconds between two lines of one command")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle measurement before")
    parser.add_argument("--baton-arg", action="append", default=[], metavar="ARG")
    parser.add_argument("--profile", help="write a py-spy profile (raw) of baton while the commands print here")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed")
        return
    base = Path(tempfile.mkdtemp(prefix="bench-background-"))
    home, work = base / "home", base / "work"
    home.mkdir()
    work.mkdir()
    baton = Path(sys.executable).with_name("baton")
    env = {"HOME": str(base), "PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "BATON_HOME": str(home)}
    extra = "".join(" " + shlex.quote(arg) for arg in args.baton_arg)
    pid_file = work / "baton.pid"
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    shell = (f"cd {shlex.quote(str(work))} && echo $$ > {shlex.quote(str(pid_file))} && "
             f"exec {shlex.quote(str(baton))} --model replay/replay-model{extra}")
    with ReplayServer(lambda request: Reply(status=500)) as server:
        provider = models_json_provider(API, server.url)
        (home / "models.json").write_text(json.dumps({"providers": {"replay": provider}}))
        tmux = Tmux(f"env -i {env_args} sh -c {shlex.quote(shell)}")
        try:
            tmux.wait_for("replay-model", 60)
            pid = int(pid_file.read_text())
            time.sleep(2)
            idle_own, idle_helpers, _ = _percent(pid, args.idle)
            for job in range(1, args.jobs + 1):
                command = f"i=0; while :; do i=$((i+1)); echo job-{job} line $i; sleep {args.every}; done"
                tmux.type(f"!& {command}")
                time.sleep(0.2)
                tmux.enter()
                time.sleep(0.5)
            time.sleep(2)  # every command started and printing
            spy = None
            if args.profile:
                spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--output", args.profile, "--format",
                                        "raw", "--rate", "500", "--gil"], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            own, helpers, count = _percent(pid, args.seconds)
            if spy is not None:
                spy.send_signal(2)
                spy.wait(60)
            lines = args.jobs * args.seconds / args.every
        finally:
            tmux.kill()
    print(f"{args.jobs} background commands, a line every {args.every * 1000:.0f} ms each "
          f"(~{lines / args.seconds:.0f} lines/s), {args.seconds:.0f} s; machine load {os.getloadavg()[0]:.1f}")
    print(f"baton process {own:.2f} % of a core, its {count} Python helpers (keepers, sandbox host) "
          f"{helpers:.2f} %, together {own + helpers:.2f} %   (idle before: {idle_own + idle_helpers:.2f} %)")


if __name__ == "__main__":
    main()

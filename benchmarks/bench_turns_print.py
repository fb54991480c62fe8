"""What baton's non-UI core costs per turn: the 100-turn tool-calling script of
``bench_tui_turns.py`` run in print mode (``baton -p``), side by side with pi 0.73's print mode.

Each turn streams a short answer and calls ``bash`` (``echo step-N``); the last reply answers
without a tool. Measured from outside the process:

- whole-process CPU: ``os.wait4`` rusage of the program (user + system, its waited-for children
  included), so start-up and shutdown count too;
- CPU per turn: the replay server reads ``/proc/<pid>/stat`` (utime + stime + cutime + cstime)
  whenever a request arrives, so turn N costs the difference between request N and N+1 (the
  first, middle and last ten are printed, and the mean over all turns);
- start-up CPU: the reading at the first request; the tail: total minus the last reading;
- peak RSS: ``ru_maxrss`` of the same rusage (the largest of the program and its children).

pi (``npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1``; never a dependency)
gets a models.json in its own agent directory (``PI_CODING_AGENT_DIR``) pointing at the same
server. Target (issue 17 work): baton <= 18 ms of CPU per turn in print mode.

By default bash runs in baton's sandbox (bubblewrap, when installed: the ``auto`` approval mode),
which costs the children about 5 ms of CPU per call more than a bare shell; pass
``--baton-arg=--approval --baton-arg=full`` to measure without it (pi has no sandbox).

Run: ``python benchmarks/bench_turns_print.py [--turns 100] [--repeat 1] [--only baton|pi]
[--baton-arg ARG ...] [--profile out.txt]``. Figures are CPU time, meaningful on a loaded machine; wall time is not
reported.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_tui_turns import API, DONE, PI_CLI, Script, print_per_turn
from tests.provider_scripts import models_json_provider
from tests.replay_server import ReplayServer

PROMPT = "Please run the steps one by one."


@dataclass
class Run:
    """The figures of one print-mode run."""

    cpu: float
    system: float
    peak_rss_mb: float
    marks: list[float]
    results_seen: int
    finished: bool

    @property
    def per_turn(self) -> list[float]:
        """CPU seconds between consecutive requests."""
        return [b - a for a, b in itertools.pairwise(self.marks)]


def run_one(argv: list[str], env: dict[str, str], config_dir: Path, work: Path, turns: int, delay: float,
            profile: str | None = None) -> Run:
    """Run ``argv`` against a fresh replay server to completion and collect its figures."""
    script = Script(turns, delay)
    with ReplayServer(script) as server:
        provider = models_json_provider(API, server.url)
        (config_dir / "models.json").write_text(json.dumps({"providers": {"replay": provider}}))
        out = work / "stdout.txt"
        with out.open("wb") as sink:
            proc = subprocess.Popen(argv, cwd=work, env=env, stdout=sink, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL)
        script.pid = proc.pid
        spy = None
        if profile is not None:
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(proc.pid), "--output", profile, "--format",
                                    "raw", "--rate", "1000", "--nonblocking"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped above; keeps Popen from waiting again
        if spy is not None:
            spy.wait(60)
    cpu = usage.ru_utime + usage.ru_stime
    finished = DONE in out.read_text(errors="replace")
    return Run(cpu, usage.ru_stime, usage.ru_maxrss / 1024, list(script.cpu_at_request), script.results_seen, finished)


def _mean_ms(values: list[float]) -> float:
    return sum(values) / max(len(values), 1) * 1000


def report(label: str, runs: list[Run], turns: int) -> None:
    """Print one program's figures (the median run by total CPU, and the spread)."""
    best = sorted(runs, key=lambda r: r.cpu)[len(runs) // 2]
    pt = best.per_turn
    spread = ", ".join(f"{r.cpu:.2f}" for r in runs)
    startup = best.marks[0] if best.marks else 0.0
    tail = best.cpu - best.marks[-1] if best.marks else 0.0
    print(f"{label:8} CPU {best.cpu:6.2f} s (system {best.system:.2f} s; runs: {spread})   "
          f"peak RSS {best.peak_rss_mb:6.1f} MB   {best.results_seen}/{turns} bash results sent back"
          f"{'' if best.finished else '   DID NOT FINISH'}")
    print(f"{'':8} per-turn CPU mean {_mean_ms(pt):.1f} ms (median {statistics.median(pt) * 1000 if pt else 0:.1f}); "
          f"start-up to first request {startup * 1000:.0f} ms; after last request {tail * 1000:.0f} ms")
    print_per_turn(pt)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.005, help="seconds between streamed events")
    parser.add_argument("--repeat", type=int, default=1, help="runs per program (the median is shown)")
    parser.add_argument("--only", choices=("baton", "pi"))
    parser.add_argument("--baton-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for baton (e.g. --baton-arg=--approval --baton-arg=full: no sandbox)")
    parser.add_argument("--profile", help="write a py-spy raw profile of baton's (last) run here")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-print-"))
    path = os.environ.get("PATH", "")
    programs: dict[str, tuple[list[str], dict[str, str], Path]] = {}
    if args.only != "pi":
        home = base / "baton-home"
        home.mkdir()
        baton = str(Path(sys.executable).with_name("baton"))
        env = {"HOME": str(base), "PATH": path, "LANG": "C.UTF-8", "BATON_HOME": str(home)}
        argv = [baton, "--model", "replay/replay-model", *args.baton_arg, "-p", PROMPT]
        programs["baton"] = (argv, env, home)
    if args.only != "baton" and PI_CLI.exists() and shutil.which("node"):
        agent = base / "pi-agent"
        agent.mkdir()
        env = {"HOME": str(base), "PATH": path, "LANG": "C.UTF-8", "PI_CODING_AGENT_DIR": str(agent),
               "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
        programs["pi 0.73"] = (["node", str(PI_CLI), "--provider", "replay", "--model", "replay-model", "-p",
                                PROMPT], env, agent)
    results: dict[str, list[Run]] = {}
    for label, (argv, env, config_dir) in programs.items():
        for i in range(args.repeat):
            work = base / f"work-{label.split()[0]}-{i}"
            work.mkdir()
            profile = args.profile if label == "baton" and i == args.repeat - 1 else None
            results.setdefault(label, []).append(
                run_one(argv, env, config_dir, work, args.turns, args.delay, profile))
    print(f"{args.turns} tool-calling turns in print mode (CPU = user+system incl. children; machine load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, so wall time is not reported)")
    for label, runs in results.items():
        report(label, runs, args.turns)
    if "baton" in results and "pi 0.73" in results:
        b = sorted(r.cpu for r in results["baton"])[len(results["baton"]) // 2]
        p = sorted(r.cpu for r in results["pi 0.73"])[len(results["pi 0.73"]) // 2]
        print(f"ratio baton/pi: whole-process CPU {b / p:.2f}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

"""What subagents cost: ``baton -p`` whose model starts 4 subagents at once (one reply, four
``task`` calls), each making 25 tool turns (``read``) on another wire protocol before answering,
against the replay server (the parent speaks Anthropic Messages, the subagents OpenAI Chat
Completions). Subagents run in baton's process: no new interpreter each.

Measured from outside the process (``os.wait4`` rusage of the program: user + system CPU, its
waited-for children included, start-up and shutdown counted) with its peak RSS (``ru_maxrss``).
For scale, the same 100 tool turns made by the main agent alone (``--baseline``, on by default)
are run too: the difference is what four subagents (four session files, four contexts, the
progress events) add.

Run: ``python benchmarks/subagents.py [--subagents 4] [--turns 25] [--repeat 1] [--no-baseline]``.
Figures are CPU time, meaningful on a loaded machine (the load is printed); wall time is not
reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.sessions.subagent_helpers import CHILD_API, PARENT_API, SUBAGENT_MARK, task_calls_reply, write_agent

DONE = "All subagents reported."


@dataclass
class Run:
    """One run's figures."""

    cpu: float
    system: float
    peak_rss_mb: float
    requests: int
    finished: bool


class Script:
    """The parent starts ``subagents`` tasks (or, as the baseline, makes the turns itself); each
    subagent reads a file ``turns`` times, then answers."""

    def __init__(self, subagents: int, turns: int, *, baseline: bool) -> None:
        self.subagents, self.turns, self.baseline = subagents, turns, baseline
        self.requests = 0
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.json()
        with self._lock:
            self.requests += 1
        if SUBAGENT_MARK in json.dumps(body):
            return self._child(body)
        results = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                   if b.get("type") == "tool_result"]
        if self.baseline:
            if len(results) < self.subagents * self.turns:
                return Reply.sse(tool_call_reply(PARENT_API, f"toolu_{len(results)}", "read", {"path": "data.txt"}))
            return Reply.sse(text_reply(PARENT_API, DONE))
        if not results:
            calls = [(f"toolu_task{i}", {"description": f"part {i}", "prompt": f"part {i}", "agent": "worker"})
                     for i in range(self.subagents)]
            return task_calls_reply(calls)
        return Reply.sse(text_reply(PARENT_API, DONE))

    def _child(self, body: dict[str, Any]) -> Reply:
        task = body["messages"][1]["content"]
        task = task if isinstance(task, str) else "".join(p.get("text", "") for p in task)
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < self.turns:
            call_id = f"call_{task.replace(' ', '_')}_{done}"
            return Reply.sse(tool_call_reply(CHILD_API, call_id, "read", {"path": "data.txt"}, text="Reading."))
        return Reply.sse(text_reply(CHILD_API, f"{task}: read {done} times."))


def run_one(base: Path, index: int, subagents: int, turns: int, *, baseline: bool) -> Run:
    home = base / f"home-{index}"
    work = base / f"work-{index}"
    home.mkdir()
    work.mkdir()
    (work / "data.txt").write_text("".join(f"line {i}\n" for i in range(200)))
    write_agent(home / "agents", "worker", model="replay-o/child-model", tools="Read", body="You read files.")
    script = Script(subagents, turns, baseline=baseline)
    with ReplayServer(script) as server:
        (home / "models.json").write_text(json.dumps({"providers": {
            "replay-a": {"baseUrl": server.url, "api": PARENT_API, "apiKey": "k",
                         "models": [{"id": "parent-model", "contextWindow": 200000, "maxTokens": 8192}]},
            "replay-o": {"baseUrl": server.url + "/v1", "api": CHILD_API, "apiKey": "k",
                         "models": [{"id": "child-model", "contextWindow": 200000, "maxTokens": 8192}]},
        }}))
        baton = str(Path(sys.executable).with_name("baton"))
        env = {"HOME": str(base), "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "BATON_HOME": str(home)}
        out = work / "stdout.txt"
        with out.open("wb") as sink:
            proc = subprocess.Popen([baton, "--model", "replay-a/parent-model", "-p", "Split the work."], cwd=work,
                                    env=env, stdout=sink, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped above
    finished = DONE in out.read_text(errors="replace")
    return Run(usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024, script.requests, finished)


def report(label: str, runs: list[Run], turns_total: int) -> Run:
    best = sorted(runs, key=lambda r: r.cpu)[len(runs) // 2]
    spread = ", ".join(f"{r.cpu:.2f}" for r in runs)
    print(f"{label:22} CPU {best.cpu:6.2f} s (system {best.system:.2f} s; runs: {spread})   "
          f"peak RSS {best.peak_rss_mb:6.1f} MB   {best.requests} requests   "
          f"{best.cpu / turns_total * 1000:.1f} ms per tool turn{'' if best.finished else '   DID NOT FINISH'}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subagents", type=int, default=4)
    parser.add_argument("--turns", type=int, default=25, help="tool turns per subagent")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (the median is shown)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the main-agent-only run")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-subagents-"))
    total = args.subagents * args.turns
    load = os.getloadavg()
    try:
        sub = [run_one(base, i, args.subagents, args.turns, baseline=False) for i in range(args.repeat)]
        plain = [] if args.no_baseline else [
            run_one(base, 100 + i, args.subagents, args.turns, baseline=True) for i in range(args.repeat)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{args.subagents} parallel subagents × {args.turns} tool turns, baton -p against the replay server "
          f"(load {load[0]:.1f}/{load[1]:.1f} on {os.cpu_count()} cores; CPU = user+system incl. children)")
    with_sub = report(f"{args.subagents} subagents", sub, total)
    if plain:
        alone = report("main agent alone", plain, total)
        print(f"subagents add {with_sub.cpu - alone.cpu:+.2f} s of CPU for the same {total} tool turns, "
              f"{(with_sub.peak_rss_mb - alone.peak_rss_mb) / args.subagents:+.1f} MB of peak RSS each "
              "(issue 30 target <= 15 MB)")


if __name__ == "__main__":
    main()

"""Figures for permissions and the sandbox (issue 13). Run: ``python benchmarks/bench_permissions.py``.

* sandbox overhead per bash call: median wall time of ``BashTool.execute("true")`` over 50 runs
  under bubblewrap minus the median without it, target <= 15 ms;
* rule check: ``Policy.decide`` for a bash call and an edit call against 200 rules (allow, deny and
  ask, bash and path rules mixed; none matching, the worst case), target <= 50 µs per call.

Timings on a shared machine are noisy; the script prints medians and the spread.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.sessions.permissions.paths import Workspace  # noqa: E402
from baton.sessions.permissions.policy import Policy  # noqa: E402
from baton.sessions.permissions.rules import RuleSet  # noqa: E402
from baton.tools.bash import BashParams, BashTool  # noqa: E402
from baton.tools.sandbox import Sandbox, probe  # noqa: E402

RUNS = 50


async def _time_bash(tool: BashTool, runs: int, cpu: list[float] | None = None) -> list[float]:
    params = BashParams(command="true")
    signal = asyncio.Event()
    times: list[float] = []
    for i in range(runs):
        before = _child_cpu()
        start = time.perf_counter()
        result = await tool.execute(f"call-{i}", params, signal, lambda _: None)
        times.append((time.perf_counter() - start) * 1000)
        if cpu is not None:
            cpu.append((_child_cpu() - before) * 1000)
        assert not result.is_error, result.content
    return times


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_sandbox() -> None:
    status = probe()
    if not status.available:
        print(f"sandbox overhead: skipped ({status.reason})")
        return
    with tempfile.TemporaryDirectory() as work:
        sandbox = Sandbox(work, bwrap=status.bwrap or "bwrap")
        plain = BashTool(work)
        boxed = BashTool(work, command_wrapper=lambda argv, _id: sandbox.argv(argv, work))
        asyncio.run(_time_bash(plain, 5))  # warm up both paths
        asyncio.run(_time_bash(boxed, 5))
        rounds_plain: list[float] = []
        rounds_boxed: list[float] = []
        cpu_plain: list[float] = []
        cpu_boxed: list[float] = []
        for _ in range(5):  # interleave, so load on the machine hits both sides alike
            rounds_plain += asyncio.run(_time_bash(plain, RUNS // 5, cpu_plain))
            rounds_boxed += asyncio.run(_time_bash(boxed, RUNS // 5, cpu_boxed))
    p, b = statistics.median(rounds_plain), statistics.median(rounds_boxed)
    print(f"bash `true` without sandbox: median {p:.1f} ms (p10 {_pct(rounds_plain, 10):.1f}, "
          f"p90 {_pct(rounds_plain, 90):.1f}) over {len(rounds_plain)} runs")
    print(f"bash `true` in the sandbox:  median {b:.1f} ms (p10 {_pct(rounds_boxed, 10):.1f}, "
          f"p90 {_pct(rounds_boxed, 90):.1f}) over {len(rounds_boxed)} runs")
    print(f"sandbox overhead per call: {b - p:.1f} ms median wall time (target <= 15 ms); "
          f"p10 {_pct(rounds_boxed, 10) - _pct(rounds_plain, 10):.1f} ms")
    extra_cpu = statistics.median(cpu_boxed) - statistics.median(cpu_plain)
    print(f"  CPU time of the child processes (load-independent): {statistics.median(cpu_plain):.1f} ms without, "
          f"{statistics.median(cpu_boxed):.1f} ms with the sandbox (+{extra_cpu:.1f} ms)")


def _pct(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, len(ordered) * q // 100)]


def _rules(n: int) -> RuleSet:
    allow, deny, ask = [], [], []
    for i in range(n):
        kind = (allow, deny, ask)[i % 3]
        if i % 2:
            kind.append(f"bash(tool{i} run test:*)")
        else:
            kind.append(f"edit(src/module{i}/**/*.py)")
    return RuleSet.parse(allow, deny, ask)


def bench_rules() -> None:
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "src", "pkg"))
        policy = Policy(Workspace.for_dir(work), _rules(200), "auto")
        calls = [
            ("bash", {"command": "git status && npm run build | tee out.log"}),
            ("edit", {"path": "src/pkg/mod.py"}),
            ("write", {"path": "../elsewhere/x.txt"}),
        ]
        for tool, args in calls:
            policy.decide(tool, args)  # warm caches
            n = 5_000
            samples = []
            cpu = []
            for _ in range(5):
                start, cpu_start = time.perf_counter(), time.process_time()
                for _ in range(n):
                    policy.decide(tool, args)
                samples.append((time.perf_counter() - start) / n * 1e6)
                cpu.append((time.process_time() - cpu_start) / n * 1e6)
            print(f"rule check, 200 rules, {tool}: median {statistics.median(samples):.1f} µs per call "
                  f"(best {min(samples):.1f}; CPU time {statistics.median(cpu):.1f} µs; target <= 50 µs)")


if __name__ == "__main__":
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs (shared: figures are noisy)")
    bench_rules()
    bench_sandbox()

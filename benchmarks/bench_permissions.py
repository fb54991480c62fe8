"""Figures for permissions and the sandbox (issues 13 and 23). Run: ``python benchmarks/bench_permissions.py``.

* sandbox cost per bash call, for ``BashTool.execute("true")`` run directly, in a fresh bwrap (a
  session's first command) and in the session's long-lived sandbox (every later one): median wall
  time over 50 runs, and CPU time per command of baton and everything it started (bwrap, the
  sandbox's server, the shell), the long-lived sandbox's start and end included — CPU time does
  not depend on how busy the machine is; target <= 15 ms of wall time over the direct run;
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.sessions.permissions.paths import Workspace  # noqa: E402
from baton.sessions.permissions.policy import Policy  # noqa: E402
from baton.sessions.permissions.rules import RuleSet  # noqa: E402
from baton.tools.bash import BashParams, BashTool  # noqa: E402
from baton.tools.processes import become_subreaper, descendants  # noqa: E402
from baton.tools.sandbox import Sandbox, probe  # noqa: E402
from baton.tools.sandbox_host import SandboxHosts  # noqa: E402
from baton.tools.shell import CommandLauncher, StartedCommand  # noqa: E402

RUNS = 100


def _cpu() -> float:
    """CPU seconds of this process and of every child it has reaped (and theirs)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _launcher(kind: str, sandbox: Sandbox, hosts: SandboxHosts) -> CommandLauncher | None:
    async def fresh(argv: list[str], _call: str, cwd: str, env: dict[str, str], fd: int) -> StartedCommand:
        return await sandbox.start(argv, cwd, env, fd)

    async def hosted(argv: list[str], _call: str, cwd: str, env: dict[str, str], fd: int) -> StartedCommand:
        return await hosts.spawn(sandbox.bwrap_args(), argv, cwd, env, fd)

    return {"direct": None, "fresh bwrap": fresh, "long-lived sandbox": hosted}[kind]


async def _round(kind: str, work: str, runs: int, make_sandbox: Callable[[], Sandbox]) -> tuple[list[float], float]:
    """Wall times (ms) of ``runs`` commands and CPU ms per command (the host's life included)."""
    hosts = SandboxHosts()
    tool = BashTool(work, command_launcher=_launcher(kind, make_sandbox(), hosts))
    params = BashParams(command="true")
    signal = asyncio.Event()
    times: list[float] = []
    cpu_before = _cpu()
    for i in range(runs):
        start = time.perf_counter()
        result = await tool.execute(f"call-{i}", params, signal, lambda _: None)
        times.append((time.perf_counter() - start) * 1000)
        assert not result.is_error, result.content
    await hosts.close()
    _reap_orphans()
    return times, (_cpu() - cpu_before) / runs * 1000


def _reap_orphans() -> None:
    """Collect the sandboxes' inits, re-parented to this process (a subreaper), so that their CPU
    time and their commands' count too."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)
            if not descendants():
                return


def bench_sandbox() -> None:
    become_subreaper()
    status = probe()
    if not status.available:
        print(f"sandbox cost: skipped ({status.reason})")
        return
    kinds = ("direct", "fresh bwrap", "long-lived sandbox")
    with tempfile.TemporaryDirectory() as work:
        def make_sandbox() -> Sandbox:
            return Sandbox(work, bwrap=status.bwrap or "bwrap", socket_filter=status.socket_filter)

        for kind in kinds:  # warm up every path
            asyncio.run(_round(kind, work, 3, make_sandbox))
        wall: dict[str, list[float]] = {kind: [] for kind in kinds}
        cpu: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(5):  # interleave, so load on the machine hits every kind alike
            for kind in kinds:
                times, per_command = asyncio.run(_round(kind, work, RUNS // 5, make_sandbox))
                wall[kind] += times
                cpu[kind].append(per_command)
    base = statistics.median(wall["direct"])
    for kind in kinds:
        median = statistics.median(wall[kind])
        extra = f", +{median - base:.1f} ms over direct (target <= 15 ms)" if kind != "direct" else ""
        print(f"bash `true`, {kind:<18}: median {median:5.1f} ms wall (p10 {_pct(wall[kind], 10):.1f}, "
              f"p90 {_pct(wall[kind], 90):.1f}){extra}; CPU {statistics.median(cpu[kind]):.1f} ms per command "
              "(baton + its children)")
    sandbox = Sandbox(work if os.path.isdir(work) else tempfile.gettempdir(), bwrap=status.bwrap or "bwrap")
    args_cpu = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(200):
            sandbox.bwrap_args()
        args_cpu.append((time.process_time() - start) / 200 * 1e6)
    print(f"building bwrap's arguments (hidden places, git pointers): {statistics.median(args_cpu):.0f} µs per command")


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

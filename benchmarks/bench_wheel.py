"""Wall time of the installed wheel: ``baton --version`` and ``baton --model demo/baton-demo -p "list files"``.

Builds the wheel, installs it into a fresh venv in a temporary folder (as ``python -m tests.wheel``
does) and runs each command N times as a fresh process from a small project folder; prints the best
and the median, of wall and CPU time, beside the bare interpreter's start as a baseline.
Targets: ``--version`` <= 0.15 s, the demo run <= 0.8 s.

Run: ``python -m benchmarks.bench_wheel [N]`` (default 10).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.wheel import build_wheel, clean_env, decoy_workdir, make_venv


def time_runs(command: list[str], cwd: Path, env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) times of ``runs`` fresh runs of ``command``, after one untimed
    warm-up run. CPU time says what the program costs when the machine is too busy for wall time to."""
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=True, stdin=subprocess.DEVNULL)
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=True, stdin=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def _ms(values: list[float]) -> str:
    return f"best {min(values) * 1000:.0f} ms, median {statistics.median(values) * 1000:.0f} ms"


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory(prefix="baton-bench-wheel-") as temp_name:
        temp = Path(temp_name)
        wheel = build_wheel(temp / "dist")
        baton = str(make_venv(temp / "venv", wheel) / "baton")
        home, work = temp / "home", decoy_workdir(temp)
        home.mkdir()
        env = clean_env(home)
        print(f"{wheel.name} in a fresh venv, {runs} runs each (a shared, loaded machine: figures are noisy)")
        walls, cpus = time_runs([str(Path(baton).with_name("python")), "-c", "pass"], work, env, runs)
        print(f"baseline, python -c pass: wall {_ms(walls)}; cpu {_ms(cpus)}")
        for args, target in (("--version",), 0.15), (("--model", "demo/baton-demo", "-p", "list files"), 0.8):
            walls, cpus = time_runs([baton, *args], work, env, runs)
            print(f"baton {' '.join(args)}: wall {_ms(walls)} (target <= {target * 1000:.0f} ms); cpu {_ms(cpus)}")


if __name__ == "__main__":
    main()

"""Wall time of ``baton --version`` (a fresh process each time; best and median of N).

Run: ``python -m benchmarks.bench_version [N]``. Uses the ``baton`` console script next to the
running interpreter (the venv's), else the one on ``PATH``. Target: <= 0.15 s (pi: 0.87 s).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def baton_executable() -> str:
    beside = Path(sys.executable).with_name("baton")
    if beside.is_file():
        return str(beside)
    found = shutil.which("baton")
    if found is None:
        raise SystemExit("baton is not installed (pip install -e .) and not on PATH")
    return found


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    command = [baton_executable(), "--version"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    print(f"{' '.join(command)} -> {output!r}")
    print(f"wall time over {runs} runs: best {min(times) * 1000:.0f} ms, "
          f"median {statistics.median(times) * 1000:.0f} ms (target <= 150 ms)")


if __name__ == "__main__":
    main()

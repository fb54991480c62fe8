"""Figures for background commands (issue 28). Run: ``python benchmarks/background_ring.py``.

* a background command writing 100 MB (``head -c 100000000 /dev/zero | tr`` as text lines): the
  ring's memory (its buffer) and the peak RSS growth of a fresh interpreter (``VmHWM`` before and
  after), the bytes the full log kept, and how long reading it took;
* baton's CPU (user + system of this process, the keepers and commands excluded) while 8
  background commands print lines as fast as they can for a few seconds, per second of wall time.

Each figure runs in a fresh interpreter with a temporary ``$BATON_HOME``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_RING_CHILD = """
import asyncio, json, os, time
from baton.tools.bash import BashTool

def hwm_kb():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1])

async def main():
    tool = BashTool(os.getcwd())
    await tool.execute('warm', {'command': 'echo warm'}, None)
    before = hwm_kb()
    started = time.perf_counter()
    await tool.execute('big', {'command': "head -c 100000000 /dev/zero | tr '\\\\0' 'x' | fold -w 99",
                               'run_in_background': True}, None)
    process = tool.background.get('bash_1')
    while process.running:
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - started
    print(json.dumps({'total_mb': process.ring.total_bytes / 1e6, 'ring_kb': process.ring.memory_bytes / 1024,
                      'log_mb': os.path.getsize(process.ring.log_path) / 1e6,
                      'rss_growth_mb': (hwm_kb() - before) / 1024, 'seconds': elapsed}))

asyncio.run(main())
"""

_CPU_CHILD = """
import asyncio, json, os, resource, time
from baton.tools.bash import BashTool

SECONDS = 5.0

async def main():
    tool = BashTool(os.getcwd())
    tool.background.set_limit(8)
    await tool.execute('warm', {'command': 'echo warm'}, None)
    line = "'a line of output from a busy server\\\\\\\\n'"
    command = "python3 -c \\"import sys\\nwhile True: sys.stdout.write(" + line + ")\\""
    for i in range(8):
        await tool.execute(f'c{i}', {'command': command, 'run_in_background': True}, None)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    await asyncio.sleep(SECONDS)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    total = sum(p.ring.total_bytes for p in tool.background.all())
    await tool.background.close()
    print(json.dumps({'cpu_per_wall_second': cpu / wall, 'mb_per_second': total / wall / 1e6,
                      'ring_kb_total': sum(p.ring.memory_bytes for p in tool.background.all()) / 1024}))

asyncio.run(main())
"""


def _run(code: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "BATON_HOME": home, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", code], cwd=home, env=env, capture_output=True, text=True,
                             timeout=600, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Print the figures."""
    ring = _run(_RING_CHILD)
    print(f"background command writing {ring['total_mb']:.0f} MB: ring {ring['ring_kb']:.0f} KiB, "
          f"peak RSS growth {ring['rss_growth_mb']:.1f} MB, full log {ring['log_mb']:.0f} MB, "
          f"read in {ring['seconds']:.2f} s")
    cpu = _run(_CPU_CHILD)
    print(f"8 background commands printing ({cpu['mb_per_second']:.0f} MB/s together): baton's CPU "
          f"{cpu['cpu_per_wall_second'] * 100:.0f}% of one core; rings {cpu['ring_kb_total']:.0f} KiB in all")


if __name__ == "__main__":
    main()

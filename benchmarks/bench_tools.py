"""Figures for the coding tools (issue 5). Run: ``python benchmarks/bench_tools.py``.

* bash streaming 50 MB (``yes | head -c 50000000``): peak RSS growth of a fresh interpreter
  (``VmHWM`` from /proc/self/status before and after the call), target <= 50 MB;
* read of a 100 MB file's first page: wall time of ``ReadTool.execute`` (best and median of
  runs, file in the page cache), target <= 50 ms;
* for reference: a read deep inside the same file (offset 900,000), an edit of one line in a 10 MB
  file, strip_control_sequences throughput, and the Python grep fallback (no ripgrep) over 500
  files, which searches in a child process so that an abort can kill it (issue 11).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.providers.messages import TextContent  # noqa: E402
from baton.tools.edit import EditTool  # noqa: E402
from baton.tools.grep import GrepTool  # noqa: E402
from baton.tools.read import ReadTool  # noqa: E402
from baton.tools.sanitize import strip_control_sequences  # noqa: E402

_BASH_CHILD = """
import asyncio, json, time
from baton.tools.bash import BashTool

def hwm_kb():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1])

async def main():
    tool = BashTool({cwd!r})
    await tool.execute('warm', {{'command': 'echo warm'}}, None, lambda update: None)
    before = hwm_kb()
    updates = []
    started = time.perf_counter()
    result = await tool.execute('big', {{'command': {command!r}}}, None, updates.append)
    elapsed = time.perf_counter() - started
    print(json.dumps({{'growth_kb': hwm_kb() - before, 'before_kb': before, 'seconds': elapsed,
                      'updates': len(updates), 'bytes': result.details['totalBytes'],
                      'lines': result.details['totalLines'], 'path': result.details['fullOutputPath'],
                      'model_chars': len(result.content[0].text)}}))

asyncio.run(main())
"""


def bench_bash(command: str = "yes | head -c 50000000") -> dict[str, float]:
    """Run the bash tool in a fresh interpreter and report its peak RSS growth."""
    with tempfile.TemporaryDirectory() as cwd:
        child = _BASH_CHILD.format(cwd=cwd, command=command)
        out = subprocess.run([sys.executable, "-c", child], cwd=ROOT, capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    if report["path"]:
        Path(report["path"]).unlink(missing_ok=True)
    return report


def _timed(coro_factory: Callable[[], Coroutine[Any, Any, None]], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(coro_factory())
        times.append((time.perf_counter() - started) * 1000)
    return times


def bench_read(directory: str, runs: int = 15) -> dict[str, object]:
    """Time reading the first page (and a deep page) of a 100 MB text file."""
    path = os.path.join(directory, "big.log")
    line = b"2024-01-01T00:00:00Z INFO request handled in 12ms path=/api/v1/items status=200 bytes=4096\n"
    with open(path, "wb") as handle:
        block = line * 10_000
        while handle.tell() < 100 * 1024 * 1024:
            handle.write(block)
    size = os.path.getsize(path)
    tool = ReadTool(directory)
    args = {"path": "big.log"}

    async def first() -> None:
        await tool.execute("r", args)

    async def deep() -> None:
        await tool.execute("r", {"path": "big.log", "offset": 900_000})

    asyncio.run(first())  # warm the page cache once
    first_times = _timed(first, runs)
    deep_times = _timed(deep, 5)
    result = asyncio.run(tool.execute("r", args))
    return {
        "file_mb": size / 2**20,
        "first_page_ms_best": min(first_times),
        "first_page_ms_median": statistics.median(first_times),
        "deep_page_ms_median": statistics.median(deep_times),
        "notice": "\n".join(b.text for b in result.content if isinstance(b, TextContent)).rsplit("\n", 1)[-1],
    }


def bench_edit(directory: str, runs: int = 5) -> dict[str, float]:
    """Time a one-line edit in a 10 MB file (read, match, diff, atomic write)."""
    path = os.path.join(directory, "ten.txt")
    lines = [f"line {i} some content here to make it longer\n" for i in range(220_000)]
    times = []
    tool = EditTool(directory)
    for run in range(runs):
        with open(path, "w") as handle:
            handle.writelines(lines)
        args = {"path": "ten.txt", "oldText": "line 110000 some", "newText": f"edited {run} some"}
        started = time.perf_counter()
        asyncio.run(tool.execute("e", args))
        times.append((time.perf_counter() - started) * 1000)
    return {"file_mb": os.path.getsize(path) / 2**20, "edit_ms_median": statistics.median(times)}


def bench_grep_fallback(directory: str, runs: int = 7) -> dict[str, float]:
    """Wall time of the Python grep fallback (child process included) over 500 small files."""
    root = Path(directory) / "tree"
    for i in range(500):
        folder = root / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}.py").write_text("".join(f"value_{j} = {j}  # filler line\n" for j in range(40)))
    tool = GrepTool(str(root), use_ripgrep=False)
    times = _timed(lambda: tool.execute("g", {"pattern": "value_3[0-9] ="}), runs)
    return {"ms_best": min(times), "ms_median": statistics.median(times)}


def bench_sanitize() -> dict[str, float]:
    """Throughput of strip_control_sequences on coloured, plain and progress-bar output."""
    samples = {
        "coloured": "\x1b[32mOK\x1b[0m test_something passed in 0.01s\n" * 200_000,
        "plain": "just a normal line of output here\n" * 300_000,
        "progress": ("\r" + "#" * 50 + " 45%") * 100_000 + "\n",
    }
    figures = {}
    for name, text in samples.items():
        started = time.perf_counter()
        strip_control_sequences(text)
        figures[name] = len(text.encode()) / 2**20 / (time.perf_counter() - started)
    return figures


def main() -> None:
    """Print every figure."""
    bash = bench_bash()
    print(f"bash 'yes | head -c 50000000': {bash['bytes'] / 1e6:.0f} MB, {bash['lines']} lines in "
          f"{bash['seconds']:.2f} s, {bash['updates']} UI updates; peak RSS growth "
          f"{bash['growth_kb'] / 1024:.1f} MB (target <= 50 MB); model text {bash['model_chars']} chars")
    with tempfile.TemporaryDirectory() as directory:
        read = bench_read(directory)
        print(f"read first page of a {read['file_mb']:.0f} MB file: best {read['first_page_ms_best']:.1f} ms, "
              f"median {read['first_page_ms_median']:.1f} ms (target <= 50 ms); notice: {read['notice']}")
        print(f"read page at offset 900000 of the same file: median {read['deep_page_ms_median']:.1f} ms")
        edit = bench_edit(directory)
        print(f"edit one line in a {edit['file_mb']:.1f} MB file: median {edit['edit_ms_median']:.1f} ms")
        grep = bench_grep_fallback(directory)
        print(f"grep fallback (python, child process) over 500 files: best {grep['ms_best']:.0f} ms, "
              f"median {grep['ms_median']:.0f} ms")
    rates = ", ".join(f"{name} {rate:.0f} MB/s" for name, rate in bench_sanitize().items())
    print(f"strip_control_sequences: {rates}")


if __name__ == "__main__":
    main()

"""Editors wait for nothing: the installed ``baton --mode acp`` from spawn until ``initialize``
and then ``session/new`` are answered, as an editor sends them (one after the other, each once
the previous answer came), with a private ``$BATON_HOME`` and the offline demo model.

Run: ``python benchmarks/bench_acp_start.py [--runs N] [--importtime]``. Goal: session/new answered
<= 0.2 s.

Besides the wall clock (which a busy machine stretches), each answer's CPU time: what baton's
threads had run when the answer arrived (``/proc/PID/task/*/schedstat``, and ``/proc/PID/stat``
for threads that have ended; a child such as the sandbox probe's bwrap is not counted).
``--importtime`` runs baton once more under ``python -X importtime`` and prints the import time
spent before ``session/new`` was answered (the sum of the top-level imports before the answer,
which a wrapper marks on stderr: the session opens behind the answer and loads more).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _answer(proc: subprocess.Popen[bytes], request_id: int, buffer: bytearray, timeout: float = 30.0) -> None:
    """Read stdout until the response to ``request_id`` arrives (notifications are skipped)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while time.monotonic() < deadline:
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"request {request_id} failed: {message['error']}")
                return
        if select.select([fd], [], [], 0.5)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"baton exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            buffer += chunk
    raise RuntimeError(f"no answer to request {request_id} within {timeout} s")


def _ticks(stat: Path) -> int:
    """utime + stime of a ``stat`` file, in clock ticks."""
    fields = stat.read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pid: int) -> float:
    """CPU time of the process so far: its live threads' nanosecond counters (``schedstat``),
    plus what threads that have ended ran (the process's ``stat`` counts them, in clock ticks:
    a helper thread such as the sandbox probe's may be gone by the time an answer arrives)."""
    total = 0
    live_ticks = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
            live_ticks += _ticks(task / "stat")
        except (OSError, ValueError, IndexError):
            pass  # the thread ended meanwhile
    ended_ticks = max(_ticks(Path(f"/proc/{pid}/stat")) - live_ticks, 0)
    return total / 1e9 + ended_ticks / os.sysconf("SC_CLK_TCK")


def one_run(baton: list[str], work: Path, env: dict[str, str],
            stderr: int | None = subprocess.PIPE) -> tuple[float, float, float, float]:
    """(spawn -> initialize answered, spawn -> session/new answered) in seconds of wall clock,
    then the same two in seconds of baton's CPU time."""
    start = time.perf_counter()
    proc = subprocess.Popen([*baton, "--mode", "acp", "--model", "demo/baton-demo"], cwd=work, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    assert proc.stdin is not None
    buffer = bytearray()
    try:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True},
                                                         "terminal": True}}}).encode() + b"\n")
        proc.stdin.flush()
        _answer(proc, 1, buffer)
        initialized = time.perf_counter() - start
        initialized_cpu = cpu_seconds(proc.pid)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
            "cwd": str(work), "mcpServers": []}}).encode() + b"\n")
        proc.stdin.flush()
        _answer(proc, 2, buffer)
        opened = time.perf_counter() - start
        return initialized, opened, initialized_cpu, cpu_seconds(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


MARK_ANSWERS = """
import sys
import baton.tui.modes.acp.transport as transport
send_now = transport.StdioTransport.send_now
def marked(self, message):
    send_now(self, message)
    if message.get("id") == 2 and "method" not in message:
        sys.stderr.write("BENCH: session/new answered\\n")
        sys.stderr.flush()
transport.StdioTransport.send_now = marked
from baton.tui.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def import_time(baton: list[str], work: Path, env: dict[str, str]) -> float:
    """Seconds ``-X importtime`` counts before ``session/new`` was answered (see the docstring)."""
    log = work / "importtime.log"
    with log.open("wb") as sink:
        one_run([sys.executable, "-X", "importtime", "-c", MARK_ANSWERS], work, env, stderr=sink.fileno())
    total = 0
    for line in log.read_text().splitlines():
        if line.startswith("BENCH: session/new answered"):
            break
        fields = line.split("|")
        if len(fields) != 3 or not line.startswith("import time:") or not fields[1].strip().isdigit():
            continue
        name = fields[2]
        if name.startswith(" ") and not name.startswith("  "):  # top level: one space after the bar
            total += int(fields[1])
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--importtime", action="store_true", help="also the import time before session/new")
    options = parser.parse_args()
    runs = options.runs
    work = Path(tempfile.mkdtemp(prefix="bench-acp-"))
    home = work / "home"
    home.mkdir()
    env = {"HOME": str(work), "PATH": os.environ.get("PATH", ""), "BATON_HOME": str(home), "LANG": "C.UTF-8",
           "OLLAMA_HOST": "127.0.0.1:9"}
    baton = [sys.executable, str(Path(sys.executable).with_name("baton"))]
    one_run(baton, work, env)  # warm the file cache and the byte-code
    figures = [one_run(baton, work, env) for _ in range(runs)]
    for index, label in enumerate(("initialize answered", "session/new answered")):
        values = [figure[index] for figure in figures]
        cpu = [figure[index + 2] for figure in figures]
        print(f"spawn -> {label:21}: best {min(values):.3f} s  median {statistics.median(values):.3f} s  "
              f"CPU best {min(cpu):.3f} s  median {statistics.median(cpu):.3f} s  ({runs} runs)")
    if options.importtime:
        print(f"-X importtime before session/new answered: {import_time(baton, work, env):.3f} s")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

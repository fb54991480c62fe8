"""Figures for the command line (issue: CLI, print and JSON modes).

1. ``baton -p "list files"`` on the offline demo model, end to end (process start to exit):
   wall time, best and median of N runs. Target: <= 0.8 s.
2. JSON mode: a 20,000-delta text stream from a local replay server, emitted as JSON lines;
   events per second over the whole process run (start-up included, so the figure is
   conservative), and over the streaming part alone. Target: >= 20,000 events/s.

Run: ``python benchmarks/bench_cli.py``
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.provider_scripts import models_json_provider, text_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import baton_command, baton_env, write_models_json  # noqa: E402


def bench_demo_print(runs: int = 7) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        for name in ("README.md", "app.py", "notes.txt"):
            (work / name).write_text("x\n")
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            result = subprocess.run(baton_command("-p", "list files"), cwd=work, env=baton_env(home),
                                    capture_output=True, text=True, input="")
            times.append(time.perf_counter() - start)
            assert result.returncode == 0, result.stderr
            assert "app.py" in result.stdout
    print(f"baton -p 'list files' (demo model), wall: best {min(times):.3f} s, "
          f"median {statistics.median(times):.3f} s over {runs} runs (target <= 0.8 s)")


def bench_json_mode(deltas: int = 20_000, api: str = "anthropic-messages") -> None:
    body = text_reply(api, [f"w{i % 10} " for i in range(deltas)])
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        work = Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        best_total = best_stream = 0.0
        for _ in range(3):
            with ReplayServer([Reply.sse(body)]) as server:
                write_models_json(home, {"replay": models_json_provider(api, server.url)})
                start = time.perf_counter()
                proc = subprocess.Popen(baton_command("-p", "--mode", "json", "--no-session", "--model",
                                                      "replay/replay-model", "go"),
                                        cwd=work, env=baton_env(home), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                assert proc.stdout is not None
                first_update = None
                count = 0
                for line in proc.stdout:
                    count += 1
                    if first_update is None and '"message_update"' in line:
                        first_update = time.perf_counter()
                end = time.perf_counter()
                proc.wait()
                assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
            total_rate = count / (end - start)
            stream_rate = count / (end - (first_update or start))
            best_total = max(best_total, total_rate)
            best_stream = max(best_stream, stream_rate)
        json.loads(line)  # the last line is valid JSON
    print(f"JSON mode, {deltas:,}-delta stream ({api}): {count:,} events; "
          f"{best_total:,.0f} events/s over the whole run incl. start-up, "
          f"{best_stream:,.0f} events/s while streaming (target >= 20,000)")


if __name__ == "__main__":
    bench_demo_print()
    bench_json_mode()

"""Figures for the protocol modes (issue: editors and scripts drive baton).

1. ACP start-up: from process start to the answer to ``session/new`` (``initialize`` and
   ``session/new`` written at once, as an editor does), raw JSON-RPC on pipes, the offline demo
   model. Best and median of N runs. Target: <= 0.3 s.
2. RPC relay: a 20,000-delta text stream from a local replay server, relayed as JSON event lines;
   events per second while streaming (first ``message_update`` to ``agent_end``) and over the
   whole run from the ``prompt`` command. Target: >= 20,000 events/s.

Run: ``python benchmarks/bench_protocols.py``
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


def bench_acp_start(runs: int = 7) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        requests = (
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": 1, "clientCapabilities": {}}}) + "\n"
            + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                          "params": {"cwd": str(work), "mcpServers": []}}) + "\n"
        ).encode()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            proc = subprocess.Popen(baton_command("--mode", "acp", "--model", "demo/baton-demo"), cwd=work,
                                    env=baton_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(requests)
            proc.stdin.flush()
            while True:
                message = json.loads(proc.stdout.readline())
                if message.get("id") == 2:
                    break
            times.append(time.perf_counter() - start)
            assert "sessionId" in message["result"], message
            proc.stdin.close()
            proc.wait(timeout=30)
    print(f"ACP initialize + session/new answered from process start: best {min(times):.3f} s, "
          f"median {statistics.median(times):.3f} s over {runs} runs (target <= 0.3 s)")


def bench_rpc_relay(deltas: int = 20_000, api: str = "anthropic-messages", runs: int = 3) -> None:
    body = text_reply(api, [f"w{i % 10} " for i in range(deltas)])
    best_stream = best_total = 0.0
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        for _ in range(runs):
            with ReplayServer([Reply.sse(body)]) as server:
                write_models_json(home, {"replay": models_json_provider(api, server.url)})
                proc = subprocess.Popen(baton_command("--mode", "rpc", "--no-session", "--model",
                                                      "replay/replay-model"),
                                        cwd=work, env=baton_env(home), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(json.dumps({"type": "get_state"}) + "\n")
                proc.stdin.flush()
                proc.stdout.readline()  # started and answering
                start = time.perf_counter()
                proc.stdin.write(json.dumps({"type": "prompt", "message": "go"}) + "\n")
                proc.stdin.flush()
                first_update = None
                count = 0
                for line in proc.stdout:
                    count += 1
                    if first_update is None and '"message_update"' in line:
                        first_update = time.perf_counter()
                    if line.startswith('{"type":"agent_end"'):
                        break
                end = time.perf_counter()
                proc.stdin.close()
                proc.wait(timeout=30)
            best_total = max(best_total, count / (end - start))
            best_stream = max(best_stream, count / (end - (first_update or start)))
    print(f"RPC relay, {deltas:,}-delta stream ({api}): {count:,} lines; {best_stream:,.0f} events/s while "
          f"streaming, {best_total:,.0f} events/s from the prompt command (target >= 20,000)")


if __name__ == "__main__":
    bench_acp_start()
    bench_rpc_relay()

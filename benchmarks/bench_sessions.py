"""Session store figures: load + build context time and memory.

    python benchmarks/bench_sessions.py [--entries 100000] [--runs 5]

1. The real 990-message pi session (``../shared/fixtures/pi-sessions/before-compaction.jsonl``,
   a v1 file, so migration is included): load + build context, best and median of ``--runs``.
   Target: <= 150 ms.
2. A synthetic v3 session of ``--entries`` entries (one linear branch, no compaction: the whole
   file is the context — the worst case), with a realistic mix of user prompts, assistant replies
   with tool calls and tool results of varied sizes: load + build context time (target <= 3 s) and
   peak memory of the load relative to the file size (target <= 10x), measured with tracemalloc
   in a separate pass (tracemalloc slows the code down, so it is not timed).
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.sessions.session_file import dump_line  # noqa: E402
from baton.sessions.store import SessionStore  # noqa: E402

REAL_SESSION = ROOT.parent / "shared" / "fixtures" / "pi-sessions" / "before-compaction.jsonl"
WORDS = ["the", "parser", "reads", "tokens", "from", "the", "stream", "and", "builds", "a", "tree",
         "of", "nodes", "for", "each", "file"]


def _text(rng: random.Random, low: int, high: int) -> str:
    target = rng.randint(low, high)
    out: list[str] = []
    size = 0
    while size < target:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def write_synthetic(path: Path, entries: int, seed: int = 7) -> None:
    """A linear session: user → assistant(tool call) → tool result → ... → assistant(text)."""
    rng = random.Random(seed)
    header = {"type": "session", "version": 3, "id": "bench", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}
    lines = [dump_line(header)]
    parent: str | None = None
    ts = 1_735_689_600_000
    pending_call: tuple[str, str] | None = None
    for i in range(entries):
        ts += 1000
        entry_id = f"{i:08x}"
        phase = i % 6
        if phase == 0:
            message = {"role": "user", "content": [{"type": "text", "text": _text(rng, 40, 600)}], "timestamp": ts}
        elif phase in (1, 3):
            call_id = f"toolu_{i:020d}"
            name = rng.choice(("read", "bash", "edit"))
            args = {"path": f"src/module_{rng.randint(0, 500)}.py"} if name != "bash" else {"command": "ls -la"}
            pending_call = (call_id, name)
            message = {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": _text(rng, 50, 400), "thinkingSignature": "sig" * 20},
                    {"type": "text", "text": _text(rng, 20, 300)},
                    {"type": "toolCall", "id": call_id, "name": name, "arguments": args},
                ],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": 100, "output": 50, "cacheRead": 1000 + i, "cacheWrite": 10, "totalTokens": 1160 + i,
                          "cost": {"input": 0.0003, "output": 0.00075, "cacheRead": 0.0003, "cacheWrite": 0.0000375,
                                   "total": 0.0013875}},
                "stopReason": "toolUse", "timestamp": ts,
            }
        elif phase in (2, 4):
            call_id, name = pending_call or ("toolu_x", "read")
            message = {
                "role": "toolResult", "toolCallId": call_id, "toolName": name,
                "content": [{"type": "text", "text": _text(rng, 100, 3000)}], "isError": False, "timestamp": ts,
            }
        else:
            message = {
                "role": "assistant", "content": [{"type": "text", "text": _text(rng, 50, 800)}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": 10, "output": 200, "cacheRead": 2000, "cacheWrite": 0, "totalTokens": 2210,
                          "cost": {"input": 0.00003, "output": 0.003, "cacheRead": 0.0006, "cacheWrite": 0,
                                   "total": 0.00363}},
                "stopReason": "stop", "timestamp": ts,
            }
        lines.append(dump_line({"type": "message", "id": entry_id, "parentId": parent,
                                "timestamp": "2025-01-01T00:00:00.000Z", "message": message}))
        parent = entry_id
    path.write_bytes(b"".join(lines))


def load_and_build(path: Path) -> tuple[float, int]:
    gc.collect()
    start = time.perf_counter()
    store = SessionStore.load(path)
    ctx = store.build_context()
    elapsed = time.perf_counter() - start
    return elapsed, len(ctx.messages)


def peak_memory(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    store = SessionStore.load(path)
    ctx = store.build_context()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del store, ctx
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ok = True

    if REAL_SESSION.exists():
        times = []
        count = 0
        for _ in range(args.runs):
            elapsed, count = load_and_build(REAL_SESSION)
            times.append(elapsed * 1000)
        lines = sum(1 for _ in REAL_SESSION.open("rb"))
        best, median = min(times), statistics.median(times)
        print(f"real pi session ({lines} lines, {REAL_SESSION.stat().st_size / 1e6:.1f} MB, v1 -> v3): "
              f"load + build context best {best:.1f} ms, median {median:.1f} ms, {count} context messages "
              f"(target <= 150 ms)")
        ok &= median <= 150
    else:
        print(f"real pi session not found at {REAL_SESSION}; skipped")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "synthetic.jsonl"
        write_synthetic(path, args.entries)
        size = path.stat().st_size
        runs = [load_and_build(path) for _ in range(max(1, min(args.runs, 3)))]
        times = [r[0] for r in runs]
        peak = peak_memory(path)
        print(f"synthetic session ({args.entries:,} entries, {size / 1e6:.1f} MB): load + build context "
              f"best {min(times):.2f} s, median {statistics.median(times):.2f} s, {runs[0][1]:,} context messages "
              f"(target <= 3 s)")
        print(f"  peak memory of load + build context: {peak / 1e6:.1f} MB = {peak / size:.1f}x the file size "
              f"(target <= 10x)")
        ok &= statistics.median(times) <= 3.0 and peak <= 10 * size
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

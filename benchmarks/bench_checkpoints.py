"""Checkpoint figures: snapshot and restore times on a 10,000-file workspace, and the git cost
of a read-only turn.

    python benchmarks/bench_checkpoints.py [--files 10000] [--changed 100] [--runs 7]

1. Snapshot of the unchanged workspace (target <= 150 ms): median and best of ``--runs``.
2. Snapshot after ``--changed`` files were modified (target <= 300 ms).
3. Restore of ``--changed`` files to the previous checkpoint (target <= 300 ms; the snapshot of
   the current state a rewind takes first is not included: it is figure 2).
4. Git processes started by a read-only turn of a real session (target: 0).
The first snapshot (a new shadow repository hashing every file) is printed for information.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.sessions.checkpoints import git as git_module  # noqa: E402
from baton.sessions.checkpoints.store import CheckpointStore  # noqa: E402


def make_workspace(root: Path, files: int) -> list[Path]:
    """``files`` source-like files of ~1 kB in 100 directories."""
    paths = []
    for i in range(files):
        directory = root / f"pkg{i % 100:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"module_{i}.py"
        path.write_text(f"# module {i}\n" + "def f(x):\n    return x * 2\n" * 40)
        paths.append(path)
    return paths


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def report(name: str, values: list[float], target: float) -> None:
    median = statistics.median(values)
    verdict = "ok" if median <= target else "OVER"
    print(f"{name:<38} median {median:7.1f} ms  best {min(values):7.1f} ms  target <= {target:.0f} ms  {verdict}")


def bench_store(files: int, changed: int, runs: int) -> None:
    git = git_module.find_git()
    if git is None:
        print("git not found: nothing to measure")
        return
    with tempfile.TemporaryDirectory() as tmp:
        ws, home = Path(tmp) / "ws", Path(tmp) / "home"
        paths = make_workspace(ws, files)
        store = CheckpointStore(ws, git=git, home=home)
        first_ms = timed(lambda: store.snapshot())
        print(f"workspace: {files} files; first snapshot (new shadow repository): {first_ms:.0f} ms")
        base = store.snapshot().commit

        report("snapshot, unchanged", [timed(lambda: store.snapshot(base)) for _ in range(runs)], 150)

        snap_times, restore_times = [], []
        for run in range(runs):
            step = max(1, len(paths) // changed)
            for path in paths[run::step][:changed]:
                path.write_text(path.read_text() + f"# edit {run}\n")
            current = None

            def take() -> None:
                nonlocal current
                current = store.snapshot(base)

            snap_times.append(timed(take))
            assert current is not None
            restore_times.append(timed(lambda c=current.commit: store.restore(base, c)))
        report(f"snapshot, {changed} files changed", snap_times, 300)
        report(f"restore of {changed} files", restore_times, 300)


async def read_only_turn_git_calls() -> int:
    from baton.providers.faux import FauxProvider, FauxResponse, faux_model
    from baton.sessions import CodingSession, SessionOptions

    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "project"
        cwd.mkdir()
        (cwd / "a.txt").write_text("hello\n")
        import os

        os.environ["BATON_HOME"] = str(Path(tmp) / "home")
        model = faux_model("bench", provider="bench", api="faux-bench")
        with FauxProvider("faux-bench") as faux:
            faux.add(FauxResponse.tool_call("write", {"path": "b.txt", "content": "x"}), "wrote",
                     FauxResponse.tool_call("read", {"path": "a.txt"}), "it says hello")
            session = await CodingSession.open(SessionOptions(cwd=cwd, model=model, session="none",
                                                              context_files=False))
            await session.prompt("write b")  # a mutating turn first: the store exists
            before = git_module.invocations
            await session.prompt("read a")
            calls = git_module.invocations - before
            await session.close()
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    bench_store(args.files, args.changed, args.runs)
    calls = asyncio.run(read_only_turn_git_calls())
    print(f"{'git processes in a read-only turn':<38} {calls}  target 0  {'ok' if calls == 0 else 'OVER'}")


if __name__ == "__main__":
    main()

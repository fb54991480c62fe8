"""Crash safety: a writer killed with SIGKILL at random moments never leaves an unloadable file
and never loses an entry whose append had returned.

To keep 60 runs fast, one helper process imports the store once and forks a fresh writer per
run (a zygote); the writer appends entries of random sizes forever and, after each append
returns, records the entry id in an acknowledgement file. The test kills the writer with
SIGKILL after a random delay, then reloads the session file.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

from baton.providers.messages import TextContent, UserMessage
from baton.sessions import SessionStore

ROOT = Path(__file__).resolve().parents[2]
RUNS = 60
PARALLEL = 6

ZYGOTE = r"""
import os, random, signal, sys
from pathlib import Path
from baton.providers.messages import TextContent, UserMessage
from baton.sessions.store import SessionStore

def write_forever(path, acks, seed):
    rng = random.Random(seed)
    ack = os.open(acks, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    store = SessionStore.create(path.parent, path.parent, path=path)
    while True:
        size = rng.choice((10, 300, 5000, 70000))
        entry = store.append_message(UserMessage(content=[TextContent(text="x" * size)]))
        os.write(ack, (entry.id + "\n").encode())

print("ready", flush=True)
for line in sys.stdin:
    command, *args = line.split()
    if command == "run":
        pid = os.fork()
        if pid == 0:
            try:
                write_forever(Path(args[0]), args[1], int(args[2]))
            finally:
                os._exit(1)
        print(pid, flush=True)
    elif command == "kill":
        pid = int(args[0])
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        print("killed" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL else f"exited {status}",
              flush=True)
"""


class Zygote:
    """The helper process: ``run`` forks a writer, ``kill`` SIGKILLs and reaps it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lock = asyncio.Lock()

    async def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        async with self.lock:
            self.proc.stdin.write(line.encode() + b"\n")
            await self.proc.stdin.drain()
            return (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()


async def _one_run(zygote: Zygote, index: int, directory: Path, rng: random.Random) -> tuple[Path, list[str]]:
    path = directory / f"run-{index}.jsonl"
    acks = directory / f"run-{index}.acks"
    pid = await zygote.ask(f"run {path} {acks} {index}")
    await asyncio.sleep(rng.uniform(0.0, 0.12))
    assert await zygote.ask(f"kill {pid}") == "killed"
    acknowledged = acks.read_text().split("\n")[:-1] if acks.exists() else []
    return path, acknowledged


async def test_sigkill_at_random_moments_never_loses_an_acknowledged_entry(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", ZYGOTE,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=ROOT,
    )
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"ready\n"
    zygote = Zygote(proc)
    rng = random.Random(1234)
    semaphore = asyncio.Semaphore(PARALLEL)

    async def guarded(i: int) -> tuple[Path, list[str]]:
        async with semaphore:
            return await _one_run(zygote, i, tmp_path, random.Random(rng.random()))

    try:
        results = await asyncio.gather(*(guarded(i) for i in range(RUNS)))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        await proc.wait()

    total = 0
    for path, acknowledged in results:
        if not path.exists():
            assert acknowledged == [], "an acknowledged append must have created the file"
            continue
        store = SessionStore.open(path)  # every reload succeeds (and can take the lock)
        ids = [e.id for e in store.entries]
        assert ids[: len(acknowledged)] == acknowledged, f"{path.name}: lost or reordered acknowledged entries"
        # still appendable after the crash: a torn tail is cut off, nothing else changes
        added = store.append_message(UserMessage(content=[TextContent(text="after the crash")]))
        store.close()
        reloaded = SessionStore.load(path)
        assert reloaded.warnings == []
        assert [e.id for e in reloaded.entries] == [*ids, added.id]
        total += len(acknowledged)
    assert total > RUNS, "the writers should have acknowledged many appends in total"

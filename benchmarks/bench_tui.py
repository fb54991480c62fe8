"""Figures for the interactive app (issue: the terminal UI).

1. Start-up: the real ``baton`` command in a pseudo-terminal (offline demo model, fresh
   $BATON_HOME): time from spawning the process until the editor has painted, and until a key
   typed into it is echoed back. Target: <= 0.6 s to an editor accepting keys.
2. Streaming, headless (``App.run_test``) against a real CodingSession on a faux model paced at
   16 characters every 10 ms; the figure is the process CPU time spent during the stream (app,
   session, agent and faux provider together), next to the same stream with no UI attached:
   a. 10 kB of Markdown prose                      target: <= 1.5 s
   b. a 300-line code fence left open (12.7 kB)    target: <= 3 s
   c. (a) with 400 earlier messages in the session target: <= 1.5 x (a)
3. Resuming the real 990-line pi session (``../shared/fixtures/pi-sessions/before-compaction.jsonl``,
   copied to a temporary directory): time from opening the session to the first paint showing its
   last message. Target: <= 1 s.

Run: ``python benchmarks/bench_tui.py`` (``--quick`` skips the no-UI baselines).
"""

from __future__ import annotations

import asyncio
import os
import pty
import select
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baton.providers.faux import FauxProvider, FauxResponse, faux_model  # noqa: E402
from baton.providers.messages import AssistantMessage, TextContent, UserMessage  # noqa: E402
from tests.replay_server import PI_SESSIONS  # noqa: E402
from tests.tui.cli_harness import baton_command, baton_env  # noqa: E402

CHUNK = 16
DELAY = 0.01


def prose(size: int = 10_000) -> str:
    """Markdown prose of ``size`` characters: paragraphs, a heading, bullets, inline code."""
    sentences = [
        "The session layer keeps the transcript whole while the model changes underneath it. ",
        "Each request is rebuilt from the stored history, so nothing is lost by a switch. ",
        "Tool results carry **details** for the interface and *content* for the model. ",
        "A `transform_messages` pass adapts thinking blocks and tool ids to the target. ",
    ]
    out: list[str] = ["## Notes on the design\n\n"]
    i = 0
    while sum(map(len, out)) < size:
        para = "".join(sentences[(i + k) % 4] for k in range(4))
        out.append(para.strip() + "\n\n")
        if i % 5 == 4:
            out.append("- first point about streaming\n- second point about `windowing`\n\n")
        i += 1
    return "".join(out)[:size]


def code_fence(lines: int = 300) -> str:
    """A Python code fence of ``lines`` lines (12.7 kB for 300), left open while streaming."""
    body = [f"    result_{i:03d} = compute(value_{i:03d}, factor={i % 7})  # step\n" for i in range(lines)]
    return "```python\ndef generated():\n" + "".join(body)[: 12_700 - 30] + "\n```\n"


def history(pairs: int) -> list[Any]:
    """``pairs`` user/assistant exchanges of a few hundred characters each."""
    messages: list[Any] = []
    for i in range(pairs):
        messages.append(UserMessage(content=f"Question {i}: how does part {i} work?"))
        text = f"Part {i} works like this:\n\n" + prose(400)
        messages.append(AssistantMessage(content=[TextContent(text=text)], api="faux-bench", provider="bench",
                                         model="bench-1"))
    return messages


# ---------------------------------------------------------------------------------------------
# 1. Start-up in a pseudo-terminal


def _read_until(fd: int, needle: bytes, deadline: float, seen: bytearray) -> bool:
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.01)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return False
            seen.extend(chunk)
            if needle in seen:
                return True
    return False


def startup_once(home: Path, work: Path) -> tuple[float, float]:
    """(seconds to the painted editor, seconds to a typed key echoed) for one ``baton`` start."""
    pid, fd = pty.fork()
    if pid == 0:  # child: run baton in the pseudo-terminal
        env = baton_env(home, TERM="xterm-256color", COLUMNS="100", LINES="30")
        env.pop("NO_COLOR", None)
        os.chdir(work)
        os.execvpe(baton_command()[0], baton_command(), env)
    start = time.perf_counter()
    seen = bytearray()
    try:
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        if not _read_until(fd, b"essage baton", start + 10, seen):  # the cursor covers the M
            raise RuntimeError(f"the editor never appeared; output: {bytes(seen[-400:])!r}")
        painted = time.perf_counter() - start
        mark = len(seen)
        os.write(fd, b"Z")
        while True:  # the placeholder goes and a Z appears: the editor took the key
            del seen[:mark]
            mark = 0
            if not _read_until(fd, b"Z", start + 10, seen):
                raise RuntimeError("the typed key was never echoed")
            break
        accepted = time.perf_counter() - start
        return painted, accepted
    finally:
        os.write(fd, b"\x04")  # Ctrl+D: the editor holds "Z", so delete it first...
        os.write(fd, b"\x7f\x04")  # ...then Ctrl+D on the empty editor quits
        deadline = time.time() + 5
        while time.time() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            _read_until(fd, b"\x00never", time.perf_counter() + 0.05, bytearray())
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)


def bench_startup(runs: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        (work / "README.md").write_text("hello\n")
        startup_once(home, work)  # warm the OS file cache and .pyc files
        painted, accepted = [], []
        for _ in range(runs):
            p, a = startup_once(home, work)
            painted.append(p)
            accepted.append(a)
    print(f"1. start -> editor painted: best {min(painted):.3f} s, median {statistics.median(painted):.3f} s; "
          f"-> key accepted: best {min(accepted):.3f} s, median {statistics.median(accepted):.3f} s "
          f"over {runs} runs (target <= 0.6 s)")


# ---------------------------------------------------------------------------------------------
# 2. Streaming CPU


async def _open(cwd: Path, model: Any, messages: list[Any] | None = None) -> Any:
    from baton.sessions import CodingSession, SessionOptions
    from baton.sessions.settings import validate_settings

    session = await CodingSession.open(SessionOptions(
        cwd=cwd, model=model, tools=[], session="none", context_files=False,
        settings=validate_settings({"compaction": {"enabled": False}}), extra_models=[model],
    ))
    if messages:
        session.agent.replace_messages(messages)
    return session


async def stream_cpu(text: str, *, earlier: int = 0, ui: bool = True) -> tuple[float, float, int]:
    """(process CPU seconds, wall seconds, entries rendered) for streaming ``text`` once."""
    from baton.tui.app.baton_app import BatonApp

    model = faux_model("bench-1", provider="bench", api="faux-bench", context_window=1_000_000)
    provider = FauxProvider("faux-bench", [FauxResponse.text(text)], chunk_size=CHUNK, delay=DELAY).register()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            session = await _open(Path(tmp), model, history(earlier // 2) if earlier else None)
            done = asyncio.Event()
            session.subscribe(lambda e: done.set() if e.type == "agent_end" else None)
            if not ui:
                cpu0, wall0 = time.process_time(), time.perf_counter()
                await session.prompt("go")
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                await session.close()
                return cpu, wall, 0
            app = BatonApp(session)
            async with app.run_test(size=(120, 40)) as pilot:
                await pilot.pause(0.2)
                cpu0, wall0 = time.process_time(), time.perf_counter()
                app.editor.set_text("go")
                await pilot.press("enter")
                await done.wait()
                while app.is_busy:
                    await asyncio.sleep(0.01)
                await app.transcript.flush_now()
                await pilot.pause()
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                mounted = len(app.transcript.mounted_views)
                shown = app.transcript.last_answer() or ""
                assert shown.strip() == text.strip(), "the whole answer must be on screen"
            await session.close()
            return cpu, wall, mounted
    finally:
        provider.unregister()


def bench_streaming(quick: bool) -> None:
    cases = [
        ("a. 10 kB prose", prose(), 0, 1.5),
        ("b. 300-line open fence (12.7 kB)", code_fence(), 0, 3.0),
        ("c. 10 kB prose, 400 earlier messages", prose(), 400, None),
    ]
    figures: dict[str, float] = {}
    for label, text, earlier, target in cases:
        cpu, wall, mounted = asyncio.run(stream_cpu(text, earlier=earlier))
        base = ""
        if not quick:
            base_cpu, _, _ = asyncio.run(stream_cpu(text, earlier=earlier, ui=False))
            base = f" (no UI: {base_cpu:.2f} s, so the UI's share is {cpu - base_cpu:.2f} s)"
        figures[label] = cpu
        goal = f"target <= {target} s" if target else f"target <= 1.5 x (a) = {1.5 * figures[cases[0][0]]:.2f} s"
        print(f"2{label}: CPU {cpu:.2f} s over {wall:.1f} s of streaming{base}; "
              f"{mounted} entries rendered ({goal})")
    ratio = figures[cases[2][0]] / figures[cases[0][0]]
    print(f"   ratio (c)/(a): {ratio:.2f} (target <= 1.5)")


# ---------------------------------------------------------------------------------------------
# 3. Resume first paint


async def resume_first_paint(source: Path) -> tuple[float, float, int, int]:
    """(seconds to open the session, seconds to the first paint with the last message, entries,
    entries rendered)."""
    from baton.sessions import CodingSession, SessionOptions
    from baton.tui.app.baton_app import BatonApp
    from baton.tui.app.widgets.messages import user_text
    from tests.tui.app_helpers import screen_text

    model = faux_model("bench-1", provider="bench", api="faux-bench")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "session.jsonl"
        shutil.copyfile(source, copy)
        start = time.perf_counter()
        session = await CodingSession.open(SessionOptions(
            cwd=Path(tmp), model=model, session=str(copy), context_files=False, extra_models=[model]))
        opened = time.perf_counter() - start
        last = next(m for m in reversed(session.messages) if isinstance(m, UserMessage | AssistantMessage))
        shown = user_text(last.content) if isinstance(last, UserMessage) else last.text
        needle = shown.strip().split("\n")[0][:40]
        app = BatonApp(session)
        async with app.run_test(size=(120, 40)) as pilot:
            while needle not in screen_text(app):
                await asyncio.sleep(0.005)
            painted = time.perf_counter() - start
            entries, mounted = len(app.transcript.entries), len(app.transcript.mounted_views)
            await pilot.pause()
        await session.close()
    return opened, painted, entries, mounted


def bench_resume(runs: int = 3) -> None:
    source = PI_SESSIONS / "before-compaction.jsonl"
    if not source.exists():
        print(f"3. skipped: {source} not found")
        return
    results = [asyncio.run(resume_first_paint(source)) for _ in range(runs)]
    opened = min(r[0] for r in results)
    painted = min(r[1] for r in results)
    _, _, entries, mounted = results[0]
    lines = sum(1 for _ in source.open(encoding="utf-8"))
    print(f"3. resume the {lines}-line pi session: opened in {opened:.3f} s, first paint with its last message "
          f"at {painted:.3f} s (best of {runs}; {entries} entries, {mounted} rendered) (target <= 1 s)")


def main() -> None:
    quick = "--quick" in sys.argv
    bench_startup()
    bench_streaming(quick)
    bench_resume()


if __name__ == "__main__":
    main()

"""The ``/model`` picker's per-row cost on a real pi session.

Opens ``../shared/fixtures/pi-sessions/large-session.jsonl`` (copied to a temporary directory) as a
CodingSession and walks the picker's rows the way a user does: down through every target, then
back up, as the picker's detail line computes them. A first opening warms the process (each wire
protocol's module is imported on first use); the figures are those of the next opening: its
cost, and per highlighted row the CPU time and the number of ``transform_messages`` runs (the
handoff preview runs the real transform), for the first pass (each target new to this opening)
and the second (each target seen before).

Run: ``python benchmarks/bench_model_picker.py``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.replay_server import PI_SESSIONS  # noqa: E402

SESSION = PI_SESSIONS / "large-session.jsonl"
TARGETS = (
    "anthropic/claude-opus-4-5", "openai/gpt-5", "openai/gpt-5-codex", "google/gemini-2.5-pro",
    "google/gemini-2.5-flash", "deepseek/deepseek-chat", "mistral/mistral-large-latest", "xai/grok-4",
)


class TransformCounter:
    """Counts the runs of the handoff transform (it calls through to the real one)."""

    def __init__(self) -> None:
        import baton.sessions.handoff as handoff

        self.module = handoff
        self.real = handoff.transform_messages
        self.calls = 0

    def __enter__(self) -> TransformCounter:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return self.real(*args, **kwargs)

        self.module.transform_messages = counted  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        self.module.transform_messages = self.real  # type: ignore[assignment]


def _detail_function(session: Any) -> Callable[[Any], Any]:
    """The detail line the picker shows for a highlighted model, made as ``/model`` makes it for
    one opening of the picker."""
    from baton.tui.app import commands

    return commands.model_preview_detail(session, {})


async def _measure() -> None:
    from baton.providers.catalog import get_model
    from baton.sessions import CodingSession, SessionOptions

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BATON_HOME"] = str(Path(tmp) / "home")
        copy = Path(tmp) / "pi.jsonl"
        shutil.copyfile(SESSION, copy)
        session = await CodingSession.open(SessionOptions(cwd=Path(tmp), session=str(copy), tools=[],
                                                          context_files=False))
        targets = [get_model(ref) for ref in TARGETS]
        print(f"session: {SESSION.name}, {len(session.messages)} messages; {len(targets)} targets")
        rows = [*targets, *reversed(targets)]  # down the list, then back up
        import baton.tui.app.commands  # noqa: F401  (the app has it loaded when the picker opens)
        with TransformCounter() as counter:
            for model in rows:  # a first opening: imports each wire protocol's module once
                _detail_function(session)(model)
            started = time.process_time()
            detail = _detail_function(session)
            opening = time.process_time() - started
            times: list[float] = []
            transforms: list[int] = []
            for model in rows:
                before = counter.calls
                started = time.process_time()
                detail(model)
                times.append(time.process_time() - started)
                transforms.append(counter.calls - before)
        await session.close()
    half = len(targets)
    print(f"opening the picker again: {opening * 1000:.1f} ms")
    for label, part, runs in (("first pass (new targets)", times[:half], transforms[:half]),
                              ("second pass (seen targets)", times[half:], transforms[half:])):
        print(f"{label:<28} per row: CPU median {statistics.median(part) * 1000:7.1f} ms, "
              f"max {max(part) * 1000:7.1f} ms; transforms per row: {statistics.mean(runs):.2f}")


def main() -> None:
    """Print the figures (or say why not)."""
    if not SESSION.exists():
        print(f"skipped: {SESSION} is absent")
        return
    asyncio.run(_measure())


if __name__ == "__main__":
    main()

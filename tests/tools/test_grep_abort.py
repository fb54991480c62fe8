"""The Python grep fallback can be stopped: a catastrophic regex ends within 0.5 s of an abort."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.grep import GrepTool
from tests.process_helpers import live_processes
from tests.tools.conftest import Call, text_of


def _children() -> set[int]:
    """Pids of this process's live (not zombie) children."""
    return {p.pid for p in live_processes() if p.ppid == os.getpid()}


async def test_abort_ends_a_catastrophic_regex_quickly(cwd: Path, call: Call) -> None:
    (cwd / "evil.txt").write_text("a" * 40 + "!\n")
    before = _children()
    signal = asyncio.Event()
    task = asyncio.create_task(call(GrepTool(str(cwd), use_ripgrep=False), signal=signal, pattern="(a+)+$"))
    await asyncio.sleep(1.0)
    assert not task.done(), "the pattern should still be running (exponential backtracking)"
    signal.set()
    aborted_at = time.monotonic()
    with pytest.raises(ToolError, match="aborted"):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - aborted_at < 0.5
    assert _children() <= before, "the search process is gone"


async def test_fallback_still_finds_matches_in_order(cwd: Path, call: Call) -> None:
    (cwd / "b.txt").write_text("x\nneedle two\n")
    (cwd / "a.txt").write_text("needle one\n")
    result = await call(GrepTool(str(cwd), use_ripgrep=False), pattern="needle")
    assert result.details["engine"] == "python"
    assert sorted(text_of(result).splitlines()) == ["a.txt:1: needle one", "b.txt:2: needle two"]

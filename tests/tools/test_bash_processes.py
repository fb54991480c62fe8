"""Nothing hangs: a stopped command is noticed at once, and many calls share a process limit."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_tool_call
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from baton.tools.bash import BashTool
from baton.tools.process_slots import ProcessSlots
from tests.tools.conftest import Call, text_of


async def test_command_that_stops_itself_is_reported_quickly(cwd: Path, call: Call) -> None:
    started = time.monotonic()
    result = await call(BashTool(str(cwd)), command="echo before; kill -STOP $$; echo after", timeout=60)
    assert time.monotonic() - started < 10
    assert result.is_error
    text = text_of(result)
    assert text.startswith("before\n") and "after" not in text
    assert "stopped" in text and "stop signal" in text
    assert result.details["stopped"]["name"] == "bash"


async def test_stopped_child_is_reported_and_its_group_killed(cwd: Path, call: Call) -> None:
    started = time.monotonic()
    result = await call(BashTool(str(cwd)), command="sh -c 'kill -STOP $$'; echo unreachable", timeout=60)
    assert time.monotonic() - started < 10
    assert result.is_error and "stop signal" in text_of(result)
    assert "unreachable" not in text_of(result)


async def test_short_stop_that_the_command_continues_is_not_reported(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="sleep 5 & pid=$!; kill -STOP $pid; kill -CONT $pid; "
                        "kill $pid; echo fine", timeout=60)
    assert not result.is_error
    assert text_of(result) == "fine"


def _max_concurrency(log: Path) -> int:
    running = peak = 0
    for line in log.read_text().split():
        running += 1 if line == "start" else -1
        peak = max(peak, running)
    return peak


async def test_a_reply_with_many_calls_runs_at_most_the_limit_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BATON_HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    work.mkdir()
    model = faux_model("m", provider="p", api="faux-limit")
    with FauxProvider("faux-limit") as provider:
        command = "echo start >> log; sleep 0.4; echo end >> log"
        provider.add(FauxResponse(content=[faux_tool_call("bash", {"command": command}) for _ in range(9)]),
                     "all done")
        options = SessionOptions(cwd=work, model=model, tools=["bash"], context_files=False,
                                 settings=validate_settings({"tools": {"maxProcesses": 3}}))
        session = await CodingSession.open(options)
        try:
            await session.prompt("go")
        finally:
            await session.close()
    log = (work / "log").read_text().split()
    assert log.count("start") == 9 and log.count("end") == 9
    assert _max_concurrency(work / "log") == 3


async def test_abort_while_waiting_for_a_slot_gives_it_up() -> None:
    slots = ProcessSlots(1)
    signal = asyncio.Event()
    async with slots.slot() as first:
        assert first
        waiting = asyncio.create_task(slots.slot(signal).__aenter__())
        await asyncio.sleep(0.01)
        assert not waiting.done()
        signal.set()
        assert await waiting is False
    assert slots.active == 0
    async with slots.slot() as again:
        assert again and slots.active == 1

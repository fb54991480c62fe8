"""The bash tool: output, exit codes, streaming, truncation, timeouts and aborts that kill the
whole process group, bounded memory, control sequences."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from baton.agent.tool import AgentToolResult, ToolError
from baton.tools.bash import BashTool
from baton.tools.shell import shell_command
from tests.process_helpers import live_processes
from tests.tools.conftest import Call, text_of

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``."""
    return [p.pid for p in live_processes() if p.pgid == pgid]


async def wait_for_text(updates: list[AgentToolResult], pattern: str, timeout: float = 5.0) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for update in reversed(updates):
            found = re.search(pattern, text_of(update))
            if found:
                return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"no update matched {pattern!r}")


async def test_stdout_and_stderr_are_merged(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="echo out; echo err >&2; echo out2")
    assert text_of(result) == "out\nerr\nout2"
    assert result.is_error is False
    assert result.details["exitCode"] == 0
    assert result.details["truncated"] is False
    assert result.details["fullOutputPath"] is None


async def test_runs_in_the_working_directory_under_bash(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command='pwd; echo "${BASH_VERSION:+bash}"')
    assert text_of(result) == f"{cwd}\nbash"


async def test_no_output(cwd: Path, call: Call) -> None:
    assert text_of(await call(BashTool(str(cwd)), command="true")) == "(no output)"


async def test_nonzero_exit_is_an_error_with_the_code(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="echo failing; exit 3")
    assert result.is_error is True
    assert text_of(result) == "failing\n\nCommand exited with code 3"
    assert result.details["exitCode"] == 3


async def test_stdin_is_closed(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="cat; echo done", timeout=5)
    assert text_of(result) == "done"


async def test_timeout_kills_the_process_group(cwd: Path, call: Call) -> None:
    updates: list[AgentToolResult] = []
    started = time.monotonic()
    result = await call(BashTool(str(cwd)), on_update=updates.append,
                        command="echo PG=$$; sleep 5 & echo BG=$!; sleep 5", timeout=1)
    elapsed = time.monotonic() - started
    assert result.is_error is True
    assert result.details["timedOut"] is True
    assert text_of(result).endswith("Command timed out after 1 seconds")
    pgid = int(re.search(r"PG=(\d+)", text_of(result)).group(1))  # type: ignore[union-attr]
    background = int(re.search(r"BG=(\d+)", text_of(result)).group(1))  # type: ignore[union-attr]
    assert group_members(pgid) == []
    assert not alive(background)
    assert 0.9 <= elapsed < 3.0


async def test_abort_kills_the_whole_tree(cwd: Path, call: Call) -> None:
    signal = asyncio.Event()
    updates: list[AgentToolResult] = []
    task = asyncio.create_task(call(BashTool(str(cwd)), signal=signal, on_update=updates.append,
                                    command="echo PG=$$; sleep 100 & echo BG=$!; sleep 100"))
    found = await wait_for_text(updates, r"PG=(\d+)\nBG=(\d+)")
    pgid, background = int(found.group(1)), int(found.group(2))
    assert alive(pgid) and alive(background)
    signal.set()
    result = await asyncio.wait_for(task, 5)
    assert result.is_error is True
    assert result.details["aborted"] is True
    assert text_of(result).endswith("Command aborted")
    assert not alive(pgid) and not alive(background)
    assert group_members(pgid) == []


async def test_sigterm_ignoring_process_is_killed(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="trap '' TERM; echo PG=$$; sleep 30; sleep 30", timeout=0.5)
    pgid = int(re.search(r"PG=(\d+)", text_of(result)).group(1))  # type: ignore[union-attr]
    assert result.details["timedOut"] is True
    assert group_members(pgid) == []


async def test_cancelled_run_kills_the_group(cwd: Path, call: Call) -> None:
    updates: list[AgentToolResult] = []
    task = asyncio.create_task(call(BashTool(str(cwd)), on_update=updates.append, command="echo PG=$$; sleep 100"))
    pgid = int((await wait_for_text(updates, r"PG=(\d+)")).group(1))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 3
    while group_members(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert group_members(pgid) == []


async def test_background_process_holding_the_pipe_does_not_block(cwd: Path, call: Call) -> None:
    started = time.monotonic()
    result = await call(BashTool(str(cwd)), command="sleep 30 & echo BG=$!")
    background = int(re.search(r"BG=(\d+)", text_of(result)).group(1))  # type: ignore[union-attr]
    try:
        assert time.monotonic() - started < 3
        assert result.is_error is False
        assert alive(background)  # a started server keeps running
    finally:
        os.kill(background, 9)


async def test_output_is_streamed_throttled_and_tail_only(cwd: Path, call: Call) -> None:
    updates: list[AgentToolResult] = []
    result = await call(BashTool(str(cwd)), on_update=updates.append,
                        command="for i in $(seq 1 40); do seq 1 500; echo tick $i; sleep 0.025; done")
    assert result.details["totalLines"] == 40 * 501
    assert 3 <= len(updates) <= 25  # ~1 s of output at <= 10 updates per second
    for update in updates:
        assert len(text_of(update).encode()) <= 50 * 1024
        assert update.details["running"] is True
    assert "tick 40" in text_of(result)


async def test_tail_truncation_and_full_output_file(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="seq 1 3000")
    text = text_of(result)
    body, notice = text.split("\n\n")
    assert body.split("\n") == [str(i) for i in range(1001, 3001)]
    path = result.details["fullOutputPath"]
    assert notice == f"[Showing lines 1001-3000 of 3000. Full output: {path}]"
    assert Path(path).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert result.details["truncation"]["truncatedBy"] == "lines"
    Path(path).unlink()


async def test_byte_limit_notice(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="for i in $(seq 1 1000); do printf '%099d\\n' $i; done")
    text = text_of(result)
    assert "(50.0KB limit). Full output:" in text
    assert len(text.split("\n\n")[0].encode()) <= 50 * 1024
    Path(result.details["fullOutputPath"]).unlink()


async def test_ten_megabytes_of_output(cwd: Path, call: Call) -> None:
    result = await call(BashTool(str(cwd)), command="head -c 10000000 /dev/zero | tr '\\0' 'x' | fold -w 99")
    assert result.details["totalBytes"] == 10_000_000 + 10_000_000 // 99
    assert len(text_of(result).encode()) < 60 * 1024
    path = Path(result.details["fullOutputPath"])
    assert path.stat().st_size == result.details["totalBytes"]
    path.unlink()


def test_memory_stays_bounded_for_ten_megabytes(tmp_path: Path) -> None:
    """Peak RSS growth of a fresh interpreter running 10 MB of output through the tool."""
    script = f"""
import asyncio, json
from baton.tools.bash import BashTool
from baton.tools.output_buffer import OutputBuffer

def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1])

async def main():
    tool = BashTool({str(tmp_path)!r})
    await tool.execute('warm', {{'command': 'echo warm'}})
    before = hwm()
    result = await tool.execute('big', {{'command': 'yes | head -c 10000000'}}, None, lambda update: None)
    print(json.dumps({{'growth_kb': hwm() - before, 'bytes': result.details['totalBytes'],
                      'path': result.details['fullOutputPath']}}))

asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True)
    report = json.loads(out.stdout)
    Path(report["path"]).unlink()
    assert report["bytes"] == 10_000_000
    assert report["growth_kb"] < 20 * 1024


async def test_control_sequences_are_stripped(cwd: Path, call: Call) -> None:
    updates: list[AgentToolResult] = []
    result = await call(BashTool(str(cwd)), on_update=updates.append,
                        command=r"printf '\033[31mred\033[0m\n\033]0;title\007plain\n10%%\r100%%\n'")
    assert text_of(result) == "red\nplain\n100%"
    assert all("\x1b" not in text_of(update) for update in updates)


async def test_invalid_timeout(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Invalid timeout"):
        await call(BashTool(str(cwd)), command="true", timeout=-1)


async def test_missing_working_directory(tmp_path: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Working directory does not exist"):
        await call(BashTool(str(tmp_path / "gone")), command="true")


def test_sh_fallback_when_bash_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import baton.tools.shell as shell

    monkeypatch.setattr(shell.shutil, "which", lambda name: "/bin/sh" if name == "sh" else None)
    monkeypatch.setattr(shell.os.path, "exists", lambda path: False)
    assert shell_command("echo hi") == ["/bin/sh", "-c", "echo hi"]


async def test_failing_update_callback_does_not_lose_output(cwd: Path, call: Call) -> None:
    def broken(update: AgentToolResult) -> None:
        raise RuntimeError("subscriber bug")

    result = await call(BashTool(str(cwd)), on_update=broken, command="echo one; sleep 0.2; echo two")
    assert text_of(result) == "one\ntwo"

"""Background commands (``bash`` with ``run_in_background``, ``bash_output``, ``kill_shell``) with
real processes: the limit, the ring, the filter, killing a whole tree, and a notify command a
repository cannot set."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools import bash_output as bash_output_module
from baton.tools.background import CATCH_UP_BYTES, BackgroundProcesses, _Reader
from baton.tools.bash import BashTool
from baton.tools.bash_output import BashOutputTool
from baton.tools.kill_shell import KillShellTool
from baton.tools.output_ring import OutputRing
from tests.process_helpers import needs_proc, processes_with


def _tools(cwd: Path, limit: int = 8) -> tuple[BashTool, BashOutputTool, KillShellTool]:
    bash, output, kill = BashTool(str(cwd)), BashOutputTool(str(cwd)), KillShellTool(str(cwd))
    bash.background = output.background = kill.background = BackgroundProcesses(limit)
    return bash, output, kill


def _sleeper(name: str) -> str:
    return f"python3 -c 'import time; time.sleep(600)' {name}"


async def wait_until(predicate: Callable[[], object], timeout: float = 20.0) -> bool:
    """Poll ``predicate`` while the event loop runs (the processes' pipes are read on it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


def _kill_marked(marker: str) -> None:
    for process in processes_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)


async def _start(bash: BashTool, command: str) -> str:
    result = await bash.execute("c", {"command": command, "run_in_background": True}, asyncio.Event())
    assert not result.is_error, result.content
    details = result.details
    assert isinstance(details, dict)
    shell_id = details["shellId"]
    assert isinstance(shell_id, str)
    return shell_id


@needs_proc
async def test_a_model_starting_a_thousand_background_commands_gets_the_limit(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    bash, _, kill = _tools(tmp_path, limit=8)
    refused = 0
    try:
        for _ in range(40):  # the attack: start, start, start — never waiting
            try:
                await _start(bash, _sleeper(marker))
            except AssertionError:
                raise
            except ToolError as exc:
                assert "At most 8 background commands run at once (tools.maxBackground)" in str(exc)
                refused += 1
        assert refused == 32
        assert len(bash.background.running()) == 8
        sleeping = lambda: [p for p in processes_with(marker) if p.cmdline.startswith("python3 -c")]  # noqa: E731
        assert await wait_until(lambda: len(sleeping()) == 8)
        # Ending one frees a place; nothing queued started meanwhile.
        await kill.execute("k", {"shell_id": "bash_1"}, asyncio.Event())
        await _start(bash, _sleeper(marker))
        assert len(bash.background.running()) == 8
    finally:
        await bash.background.close()
        _kill_marked(marker)
    assert not processes_with(marker)


@needs_proc
async def test_kill_shell_ends_the_whole_tree_even_what_left_the_group(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    bash, output, kill = _tools(tmp_path)
    command = (f"trap '' TERM; setsid {_sleeper(marker + '-escaped')} & ({_sleeper(marker + '-orphan')} &); "
               f"echo started; {_sleeper(marker + '-main')}")
    try:
        shell_id = await _start(bash, command)
        assert await wait_until(lambda: len({p.cmdline.split()[-1] for p in processes_with(marker)
                                       if p.cmdline.startswith("python3 -c")}) == 3)
        result = await kill.execute("k", {"shell_id": shell_id}, asyncio.Event())
        assert f"Killed background shell {shell_id}" in result.content[0].text  # type: ignore[union-attr]
        assert await wait_until(lambda: not processes_with(marker), timeout=10), processes_with(marker)
        read = await output.execute("o", {"bash_id": shell_id}, asyncio.Event())
        assert "<status>killed</status>" in read.content[0].text  # type: ignore[union-attr]
        assert "started" in read.content[0].text  # type: ignore[union-attr]
    finally:
        _kill_marked(marker)


async def test_bash_output_gives_only_what_is_new_and_says_when_it_ended(tmp_path: Path) -> None:
    bash, output, _ = _tools(tmp_path)
    shell_id = await _start(bash, "echo first; read -t 0.5 _ < /dev/zero; sleep 0.5; echo second; exit 3")
    process = bash.background.get(shell_id)
    assert await wait_until(lambda: process.ring.total_bytes > 0)
    first = (await output.execute("o1", {"bash_id": shell_id}, asyncio.Event())).content[0].text  # type: ignore[union-attr]
    assert "first" in first and "second" not in first
    for _ in range(200):
        if not process.running:
            break
        await asyncio.sleep(0.05)
    second = (await output.execute("o2", {"bash_id": shell_id}, asyncio.Event())).content[0].text  # type: ignore[union-attr]
    assert "<status>exited 3</status>" in second and "second" in second and "first" not in second
    third = (await output.execute("o3", {"bash_id": shell_id}, asyncio.Event())).content[0].text  # type: ignore[union-attr]
    assert "(no new output)" in third


async def test_a_chatty_command_is_read_in_batches_and_bash_output_still_sees_every_line(tmp_path: Path) -> None:
    # Issue 30: a command printing a line every few milliseconds must not wake baton at every
    # line; what waits in the pipe is still there for bash_output the moment it asks.
    bash, output, kill = _tools(tmp_path)
    reads = 0

    def count(_: object) -> None:
        nonlocal reads
        reads += 1

    bash.background.on_output = count
    shell_id = await _start(bash, "for i in $(seq 1 60); do echo line-$i; sleep 0.01; done; sleep 600")
    try:
        process = bash.background.get(shell_id)
        assert await wait_until(lambda: process.ring.total_bytes > 0)
        await asyncio.sleep(1.5)  # the loop printed its 60 lines long ago (60 x 10 ms)
        assert reads < 30, f"{reads} reads for 60 lines"
        text = (await output.execute("o", {"bash_id": shell_id}, asyncio.Event())).content[0].text  # type: ignore[union-attr]
        assert all(f"line-{i}\n" in text for i in range(1, 61)), text
    finally:
        await kill.execute("k", {"shell_id": shell_id}, asyncio.Event())


async def test_a_fast_command_is_read_whole_and_its_end_is_seen(tmp_path: Path) -> None:
    bash, _, _ = _tools(tmp_path)
    shell_id = await _start(bash, "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done")
    process = bash.background.get(shell_id)
    assert await wait_until(lambda: not process.running)
    assert process.ring.total_bytes == 3_000_000 + len("\ndone\n")
    assert process.ring.last_line(20) == "done"


async def test_bash_output_names_an_unknown_id(tmp_path: Path) -> None:
    _, output, kill = _tools(tmp_path)
    with pytest.raises(ToolError, match="No background shell with id 'bash_9'"):
        await output.execute("o", {"bash_id": "bash_9"}, asyncio.Event())
    output.background.lost["bash_2"] = "npm run dev"
    with pytest.raises(ToolError, match="bash_2 was lost"):
        await kill.execute("k", {"shell_id": "bash_2"}, asyncio.Event())


async def test_a_filter_that_backtracks_forever_costs_an_error_not_baton(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bash_output_module, "FILTER_TIMEOUT_SECONDS", 0.5)
    bash, output, _ = _tools(tmp_path)
    shell_id = await _start(bash, "printf 'ok line\\n%s!\\n' $(printf 'a%.0s' $(seq 40))")
    process = bash.background.get(shell_id)
    assert await wait_until(lambda: not process.running)
    with pytest.raises(ToolError, match="filter took longer"):
        await output.execute("o", {"bash_id": shell_id, "filter": "^(a+)+$"}, asyncio.Event())
    ticks = 0

    async def tick() -> None:  # the event loop stayed free while the filter ran
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.ensure_future(tick())
    process.read_offset = 0
    with pytest.raises(ToolError):
        await output.execute("o", {"bash_id": shell_id, "filter": "^(a+)+$"}, asyncio.Event())
    ticker.cancel()
    assert ticks > 5
    process.read_offset = 0
    kept = await output.execute("o", {"bash_id": shell_id, "filter": "^ok"}, asyncio.Event())
    assert "ok line" in kept.content[0].text and "aaa" not in kept.content[0].text  # type: ignore[union-attr]
    with pytest.raises(ToolError, match="Invalid filter"):
        await output.execute("o", {"bash_id": shell_id, "filter": "("}, asyncio.Event())


def test_the_ring_stays_bounded_and_the_log_stops_at_its_cap(baton_home: Path) -> None:
    ring = OutputRing(capacity=64 * 1024, log_max_bytes=1024 * 1024)
    chunk = b"".join(b"line %08d\n" % i for i in range(6_000))  # ~84 KB per chunk
    for _ in range(120):  # ~10 MB
        ring.append(chunk)
    assert ring.memory_bytes <= 64 * 1024
    assert ring.total_bytes == 120 * len(chunk)
    since = ring.since(0)
    assert since.skipped_bytes == ring.total_bytes - 64 * 1024
    assert since.text.endswith("line 00005999\n")
    assert ring.last_line() == "line 00005999"
    ring.close()
    size = Path(ring.log_path).stat().st_size
    assert 1024 * 1024 <= size < 1024 * 1024 + 200, "the log stops at its cap, with a note"
    assert Path(ring.log_path).read_bytes().endswith(b"later output is only in memory]\n")


def test_the_ring_shows_no_terminal_sequences(baton_home: Path) -> None:
    ring = OutputRing()
    ring.append(b"\x1b]52;c;aGVsbG8=\x07plain\x1b[2J text\x1b]777;notify;x;y\x07\n")
    assert ring.since(0).text == "plain text\n"
    assert ring.last_line() == "plain text"
    ring.close()


class _EndlessPipeTransport:
    """A read transport whose pipe always has more (a file far larger than any pipe)."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("rb")

    def get_extra_info(self, name: str) -> object:
        return self.file if name == "pipe" else None

    def is_closing(self) -> bool:
        return False


async def test_catching_up_with_a_command_that_never_stops_printing_takes_a_bounded_amount(tmp_path: Path) -> None:
    endless = tmp_path / "endless"
    endless.write_bytes(b"y\n" * (8 * CATCH_UP_BYTES))
    ring = OutputRing()
    reader = _Reader(ring, asyncio.get_running_loop().create_future(), lambda: None)
    transport = _EndlessPipeTransport(endless)
    reader.transport = transport  # type: ignore[assignment]
    try:
        reader.catch_up()
    finally:
        transport.file.close()
        ring.close()
    assert CATCH_UP_BYTES <= ring.total_bytes < CATCH_UP_BYTES + 256 * 1024

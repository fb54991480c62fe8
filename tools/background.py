"""Background commands of one session (``bash`` with ``run_in_background``, the user's ``!&``).

A background command starts exactly like any other bash call (the same launcher, so the same
sandbox and the same permission decision) and runs on while the agent works. Its output goes to
an :class:`~tools.output_ring.OutputRing` (bounded memory, full log in the temp folder);
``bash_output`` reads what is new since the last read, ``kill_shell`` ends it, ``/ps`` lists them.

Limits and guarantees:

- at most ``limit`` run at once (``tools.maxBackground``, default 8): the next start is refused
  with a clear error, never queued; at most :data:`KEEP_FINISHED` ended ones are remembered;
- each runs under :mod:`tools.background_keeper`, which ends the command's whole tree when the
  shell exits and when baton goes away, however it goes (SIGKILL too); its process group is
  registered with :mod:`tools.processes` as well, and :meth:`BackgroundProcesses.close` ends
  them all when the session closes;
- the state belongs to the session (an ACP process hosts several sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from baton.providers.errors import BatonError
from baton.tools.output_ring import OutputRing
from baton.tools.processes import register_group
from baton.tools.shell import KILL_GRACE_SECONDS, StartedCommand, group_alive, kill_group, signal_group

DEFAULT_MAX_BACKGROUND = 8
KEEP_FINISHED = 16
"""Ended background commands remembered (their rings freed beyond this; logs stay until exit)."""
BATCH_SECONDS = 1.0
"""The longest a command's pipe is left alone after a read (a command printing little at a time)."""
BATCH_BYTES = 16 * 1024
"""A pause lasts at most as long as the command, at the rate it printed since the last read,
takes to print this much: a quarter of a pipe (64 KiB), so a pause never holds a writer back."""
MIN_PAUSE = 0.005
"""A pause shorter than this is not taken (a fast writer is read as fast as it writes)."""
FAST_SECONDS = 1.0
"""After a read of :data:`BATCH_BYTES` or more, the pipe is read without pauses this long."""
CATCH_UP_BYTES = 1 << 20
"""The most :meth:`_Reader.catch_up` takes at once: a full pipe at Linux's largest default size
(``/proc/sys/fs/pipe-max-size``), so what waited when it was called is in, and a command printing
without end cannot hold the event loop."""
KEEPER_SCRIPT = Path(__file__).with_name("background_keeper.py")
END_SIGNAL = signal.SIGUSR1
"""Asks the keeper to end its whole tree (``background_keeper.END_SIGNAL``)."""

State = Literal["running", "exited", "killed", "failed"]
Launch = Callable[[list[str], int], Awaitable[StartedCommand]]
"""``(argv, output_fd) -> started command``: how the caller starts the keeper's argv."""


class BackgroundError(BatonError):
    """A background command could not start (limit reached) or is unknown."""


def keeper_argv(argv: list[str]) -> list[str]:
    """``argv`` run under :mod:`tools.background_keeper` (which watches the process starting it)."""
    return [sys.executable, "-I", "-S", str(KEEPER_SCRIPT), *argv]


@dataclass(eq=False)
class BackgroundProcess:
    """One background command and what it printed."""

    id: str
    command: str
    started_by: Literal["model", "user"]
    ring: OutputRing
    started_at: float = field(default_factory=time.time)
    _started_monotonic: float = field(default_factory=time.monotonic)
    state: State = "running"
    exit_code: int | None = None
    signal: int | None = None
    ended_at: float | None = None
    group: int | None = None
    read_offset: int = 0
    """Where ``bash_output`` reads from next."""
    _process: StartedCommand | None = None
    _watch: asyncio.Task[None] | None = None
    _transport: asyncio.ReadTransport | None = None
    _reader: _Reader | None = None
    _pipe_closed: asyncio.Future[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the command has not ended yet."""
        return self.state == "running"

    @property
    def runtime(self) -> float:
        """Seconds it ran (so far, while running)."""
        end = self.ended_at - self.started_at if self.ended_at is not None else None
        return end if end is not None else time.monotonic() - self._started_monotonic

    def catch_up(self) -> None:
        """Take in the output that is waiting in the pipe (call before reading :attr:`ring`)."""
        if self._reader is not None and self.running:
            self._reader.catch_up()

    def status_text(self) -> str:
        """``running``, ``exited 0``, ``killed``, ``killed by SIGTERM``."""
        if self.state == "exited":
            return f"exited {self.exit_code}" if self.signal is None else f"ended by signal {self.signal}"
        return self.state


async def _end_tree(group: int, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the group (the keeper, the group's leader, lets the shell act on it); after
    ``grace`` seconds ask the keeper to end the whole tree (what ignored SIGTERM or left the
    group too); SIGKILL the group last."""
    signal_group(group, signal.SIGTERM)
    signal_group(group, signal.SIGCONT)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline and group_alive(group):
        await asyncio.sleep(0.02)
    if group_alive(group):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(group, END_SIGNAL)
        deadline = loop.time() + 2.0
        while loop.time() < deadline and group_alive(group):
            await asyncio.sleep(0.02)
    await kill_group(group, grace=0)


class _Reader(asyncio.Protocol):
    """Reads a command's output into its ring. A command that prints a little at a time (a line
    every few milliseconds) is read in batches: after a read the pipe is left alone for up to
    :data:`BATCH_SECONDS` (what arrives meanwhile waits in the pipe), so eight chatty commands
    wake baton about once a second each instead of at every line. The pause is cut to the time the
    command takes to fill a quarter of the pipe at the rate it printed, and not taken when that
    is under :data:`MIN_PAUSE`: a fast writer is never held back. Readers of the output
    (``bash_output``, ``/ps``) call :meth:`catch_up` first and see everything."""

    def __init__(self, ring: OutputRing, closed: asyncio.Future[None], on_data: Callable[[], None]) -> None:
        self.ring = ring
        self.closed = closed
        self.on_data = on_data
        self.transport: asyncio.ReadTransport | None = None
        self._resume: asyncio.TimerHandle | None = None
        self._last_read = 0.0
        self._fast_until = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport
        self._last_read = asyncio.get_running_loop().time()

    def data_received(self, data: bytes) -> None:
        self.ring.append(data)
        self.on_data()
        loop = asyncio.get_running_loop()
        now = loop.time()
        since, self._last_read = now - self._last_read, now
        if len(data) >= BATCH_BYTES:  # a fast writer (or one a pause held back): no pause for a while
            self._fast_until = now + FAST_SECONDS
        transport = self.transport
        if self._resume is not None or transport is None or transport.is_closing() or now < self._fast_until:
            return
        # The time the command takes, at the rate it printed since the last read, to print
        # BATCH_BYTES (a pause longer than that could fill the pipe and hold it back).
        pause = min(BATCH_SECONDS, BATCH_BYTES * since / len(data)) if data else 0.0
        if pause >= MIN_PAUSE:
            transport.pause_reading()
            self._resume = loop.call_later(pause, self.resume)

    def resume(self) -> None:
        """Read the pipe again as soon as it has something (the batch's pause is over, or the
        command ended and its last output and end of file should come in now)."""
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
            transport = self.transport
            if transport is not None and not transport.is_closing():
                transport.resume_reading()

    def catch_up(self) -> None:
        """Take in what waits in the pipe now (a read of the output must not miss it)."""
        transport = self.transport
        pipe = transport.get_extra_info("pipe") if transport is not None else None
        if pipe is None or transport is None or transport.is_closing():
            return
        taken = 0
        while taken < CATCH_UP_BYTES:  # a command that never stops printing would never empty it
            try:
                data = os.read(pipe.fileno(), 256 * 1024)
            except (BlockingIOError, InterruptedError, OSError, ValueError):
                return
            if not data:
                return  # end of file: the transport sees it too when it reads next
            taken += len(data)
            self.ring.append(data)
            self.on_data()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._resume is not None:
            self._resume.cancel()
            self._resume = None
        if not self.closed.done():
            self.closed.set_result(None)


class BackgroundProcesses:
    """The background commands of one session (see the module docstring)."""

    def __init__(self, limit: int = DEFAULT_MAX_BACKGROUND) -> None:
        self.limit = max(1, limit)
        self._processes: dict[str, BackgroundProcess] = {}
        self._numbers = itertools.count(1)
        self.lost: dict[str, str] = {}
        """Ids (and commands) of background commands a previous baton ran in this session: they
        ended with it."""
        self.on_change: Callable[[BackgroundProcess], None] | None = None
        """Called when one starts or ends (the session records it and tells its subscribers)."""
        self.on_output: Callable[[BackgroundProcess], None] | None = None
        """Called when one printed something (the app's live view)."""
        self._closed = False

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called (what ends now ends because the session does)."""
        return self._closed

    def set_limit(self, limit: int) -> None:
        """Change how many may run at once (those running keep running)."""
        self.limit = max(1, limit)

    def running(self) -> list[BackgroundProcess]:
        """Those still running, oldest first."""
        return [p for p in self._processes.values() if p.running]

    def all(self) -> list[BackgroundProcess]:
        """Every remembered one, oldest first."""
        return list(self._processes.values())

    def get(self, shell_id: str) -> BackgroundProcess:
        """The background command ``shell_id``; :class:`BackgroundError` saying why when unknown."""
        process = self._processes.get(shell_id)
        if process is not None:
            return process
        if shell_id in self.lost:
            raise BackgroundError(
                f"Background shell {shell_id} was lost: it ended when the baton that started it exited.")
        known = ", ".join(self._processes) or "none"
        raise BackgroundError(f"No background shell with id {shell_id!r} (known: {known}).")

    def reserve_check(self) -> None:
        """Raise :class:`BackgroundError` when no other may start now."""
        if self._closed:
            raise BackgroundError("The session is closing: no background command may start.")
        if len(self.running()) >= self.limit:
            raise BackgroundError(
                f"At most {self.limit} background commands run at once (tools.maxBackground); "
                "end one with kill_shell first.")

    async def start(self, command: str, launch: Launch, argv: list[str],
                    started_by: Literal["model", "user"] = "model") -> BackgroundProcess:
        """Start ``argv`` (the shell running ``command``) under the keeper with ``launch``; the
        new entry, already running. Raises :class:`BackgroundError` at the limit and whatever
        ``launch`` raises."""
        self.reserve_check()
        shell_id = self._new_id()
        ring = OutputRing()
        process = BackgroundProcess(shell_id, command, started_by, ring)
        read_fd, write_fd = os.pipe()
        try:
            started = await launch(keeper_argv(argv), write_fd)
        except BaseException:
            os.close(read_fd)
            ring.close()
            raise
        finally:
            with contextlib.suppress(OSError):
                os.close(write_fd)
        process._process = started
        process.group = started.pid
        if started.pid is not None:
            register_group(started.pid)
        loop = asyncio.get_running_loop()
        closed: asyncio.Future[None] = loop.create_future()
        reader = _Reader(ring, closed, lambda: self._output(process))
        transport, _ = await loop.connect_read_pipe(lambda: reader, os.fdopen(read_fd, "rb", buffering=0))
        process._transport, process._reader, process._pipe_closed = transport, reader, closed
        self._processes[shell_id] = process
        self._forget_old()
        process._watch = asyncio.ensure_future(self._watch_end(process))
        self._changed(process)
        return process

    async def kill(self, shell_id: str) -> BackgroundProcess:
        """End ``shell_id``'s whole process group (SIGTERM, then SIGKILL); the entry once ended."""
        process = self.get(shell_id)
        if not process.running:
            return process
        process.state = "killed"
        if process.group is not None:
            await _end_tree(process.group)
        if process._watch is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(process._watch), 5.0)
        return process

    async def close(self) -> None:
        """End every running one (the session is closing)."""
        self._closed = True
        running = self.running()
        await asyncio.gather(*(self.kill(p.id) for p in running), return_exceptions=True)

    def _new_id(self) -> str:
        while True:
            shell_id = f"bash_{next(self._numbers)}"
            if shell_id not in self._processes and shell_id not in self.lost:
                return shell_id

    def _forget_old(self) -> None:
        finished = [p for p in self._processes.values() if not p.running]
        for process in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._processes[process.id]

    async def _watch_end(self, process: BackgroundProcess) -> None:
        assert process._process is not None
        try:
            returncode = await process._process.wait()
        finally:
            if process.group is not None and group_alive(process.group):
                await kill_group(process.group, grace=0.2)  # the keeper is gone: nothing left behind
            if process._reader is not None:
                process._reader.resume()  # the last output and the end of file, without the batch's wait
            if process._pipe_closed is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(process._pipe_closed), 1.0)
            if process._transport is not None:
                process._transport.close()
            process.ring.close()
        process.ended_at = time.time()
        if returncode is None:
            process.state = "killed" if process.state == "killed" else "failed"
        elif returncode < 0:
            process.signal = -returncode
            process.state = "killed" if process.state == "killed" else "exited"
        else:
            process.exit_code = returncode
            if process.state != "killed":
                process.state = "exited"
        self._changed(process)

    def _changed(self, process: BackgroundProcess) -> None:
        if self.on_change is not None:
            self.on_change(process)

    def _output(self, process: BackgroundProcess) -> None:
        if self.on_output is not None:
            self.on_output(process)

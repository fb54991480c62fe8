"""The ``bash`` tool: run a shell command in the working directory.

The command runs under bash (``sh`` when bash is missing) in its own process group, with stdin
closed and stdout and stderr merged into one pipe. Output streams to the UI through ``on_update``
(at most every :data:`UPDATE_INTERVAL` seconds, the tail only); the model gets the last 2000 lines
/ 50 KB, and when there is more, the full output is in a temp file whose path is given. Memory
stays bounded however much is printed (see :mod:`tools.output_buffer`). Terminal control
sequences are stripped from everything shown. A non-zero exit code, a timeout and an abort are
error results saying so; timeout and abort kill the whole process group (children and background
jobs included), SIGTERM first, SIGKILL after a grace period.

``details``: ``{command, exitCode, signal, durationMs, timedOut, aborted, truncated, totalLines,
totalBytes, outputLines, fullOutputPath, truncation?}``; updates carry ``{command, running: true,
totalLines, totalBytes, truncated, fullOutputPath}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal as signals
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError, short_title
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.messages import TextContent
from baton.tools.background import BackgroundError, BackgroundProcesses
from baton.tools.details import BashDetails
from baton.tools.output_buffer import OutputBuffer, OutputSnapshot
from baton.tools.params import ToolParams
from baton.tools.process_slots import ProcessSlots
from baton.tools.process_watch import StoppedProcess, watch_stopped
from baton.tools.processes import register_group
from baton.tools.shell import (
    CommandLauncher,
    CommandLaunchError,
    StartedCommand,
    kill_group,
    shell_command,
    signal_group,
    start_command,
)
from baton.tools.tool_env import ToolEnvironment
from baton.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 180.0
UPDATE_INTERVAL = 0.1
"""Minimum seconds between two streamed updates (at most 10 per second)."""
DRAIN_IDLE_SECONDS = 0.2
"""After the shell exits, stop reading once background processes holding the pipe stay quiet
this long (or after :data:`DRAIN_MAX_SECONDS`); they keep running."""
DRAIN_MAX_SECONDS = 2.0


class BashParams(ToolParams):
    """Arguments of ``bash``."""

    command: str = Field(description="Bash command to execute")
    timeout: float | None = Field(
        default=None,
        description=(
            "Timeout in seconds. Defaults to 180 (3 minutes) when omitted; pass 0 to disable the "
            "timer, or a larger number of seconds for a longer limit."
        ),
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Set to true to run this command in the background (a dev server, a watcher): the call "
            "returns at once with a shell id; read its output with bash_output and end it with kill_shell."
        ),
    )


class _PipeReader(asyncio.Protocol):
    """Feeds the command's output pipe into the buffer and wakes the update throttle."""

    def __init__(self, buffer: OutputBuffer, on_data: Callable[[], None]) -> None:
        self.buffer = buffer
        self.on_data = on_data
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer.append(data)
        self.on_data()

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class _Updates:
    """Throttled ``on_update`` calls: the first at once, then at most one per interval, and the
    last pending one delivered even when no more output comes."""

    def __init__(self, on_update: OnUpdate, buffer: OutputBuffer, command: str) -> None:
        self.on_update = on_update
        self.buffer = buffer
        self.command = command
        self.loop = asyncio.get_running_loop()
        self.last = -math.inf
        self.handle: asyncio.TimerHandle | None = None

    def mark(self) -> None:
        if self.handle is not None:
            return
        delay = self.last + UPDATE_INTERVAL - self.loop.time()
        if delay <= 0:
            self.flush()
        else:
            self.handle = self.loop.call_later(delay, self.flush)

    def flush(self) -> None:
        self.handle = None
        self.last = self.loop.time()
        snapshot = self.buffer.snapshot()
        details: JsonObject = {
            "command": self.command,
            "running": True,
            "totalLines": snapshot.total_lines,
            "totalBytes": snapshot.total_bytes,
            "truncated": snapshot.truncation.truncated,
            "fullOutputPath": snapshot.full_output_path,
        }
        try:
            self.on_update(AgentToolResult([TextContent(text=snapshot.text)], details))
        except Exception:  # a broken subscriber must not stop the command's output
            logger.exception("bash on_update callback failed")

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None


class BashTool(AgentTool[BashParams, JsonObject]):
    """Run shell commands (see the module docstring).

    ``default_timeout`` applies when the call gives none (None: no limit); ``env`` replaces the
    environment the command sees (default: ``environment``'s, this process's without API keys and
    tokens, see :mod:`tools.tool_env`); ``slots`` limits how many commands run at once (the
    session's, shared with its other command runners; default: this tool's own);
    ``command_launcher`` may start the shell differently per call (the permission policy starts it
    inside the sandbox this way)."""

    name = "bash"
    prompt_summary = "Execute bash commands (ls, grep, find, etc.)"
    details_type = BashDetails
    label = "bash"
    kind = "execute"
    claude_code_name = "Bash"
    description = (
        "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
        f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit "
        "first). If truncated, full output is saved to a temp file. Timeout defaults to 180 seconds; pass "
        "a timeout in seconds for a longer limit, or 0 to disable the timer. With run_in_background, the "
        "command keeps running after the call returns (no timeout); it ends when baton exits."
    )
    parameters = BashParams

    @classmethod
    def claude_code_call(cls, args: JsonMapping, cwd: str) -> tuple[str, JsonObject]:
        """Claude Code's ``Bash`` input: ``command``, ``timeout`` in milliseconds (and a
        ``description`` only when the model gave one: baton's bash asks for none)."""
        name, out = super().claude_code_call(args, cwd)
        timeout = args.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            out["timeout"] = int(timeout * 1000)
        return name, out

    def __init__(
        self,
        cwd: str,
        default_timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
        env: Mapping[str, str] | None = None,
        command_launcher: CommandLauncher | None = None,
        *,
        environment: ToolEnvironment | None = None,
        slots: ProcessSlots | None = None,
    ) -> None:
        self.cwd = cwd
        self.default_timeout = default_timeout
        self.env = dict(env) if env is not None else None
        self.command_launcher = command_launcher
        self.environment = environment or ToolEnvironment()
        self.slots = slots or ProcessSlots()
        self.background = BackgroundProcesses()
        """The session's background commands (``run_in_background``; see :mod:`tools.background`)."""

    def _timeout(self, requested: float | None) -> float | None:
        if requested is None:
            return self.default_timeout
        if not math.isfinite(requested) or requested < 0:
            raise ToolError("Invalid timeout: must be a finite number of seconds, or 0 to disable the timer")
        return None if requested == 0 else requested

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """The command's first line (``npm test …`` when it has more)."""
        command = args.get("command")
        return (short_title(command) or cls.label) if isinstance(command, str) else cls.label

    async def run(
        self, tool_call_id: str, params: BashParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Run ``params.command`` (see the module docstring) once a process slot is free
        (:mod:`tools.process_slots`: at most ``tools.maxProcesses`` commands at once); with
        ``run_in_background``, start it in the background and return its shell id at once."""
        if params.run_in_background:
            return await self._run_in_background(params.command, tool_call_id)
        async with self.slots.slot(signal) as got_slot:
            if not got_slot:
                raise ToolError("Command aborted", _details(params.command, aborted=True))
            return await self._run_command(params, signal, on_update, tool_call_id)

    async def _run_command(
        self, args: BashParams, signal: asyncio.Event, on_update: OnUpdate, tool_call_id: str = ""
    ) -> AgentToolResult[JsonObject]:
        timeout = self._timeout(args.timeout)
        if signal.is_set():
            raise ToolError("Command aborted", _details(args.command, aborted=True))
        if not os.path.isdir(self.cwd):
            raise ToolError(f"Working directory does not exist: {self.cwd}\nCannot execute bash commands.")
        buffer = OutputBuffer()
        updates = _Updates(on_update, buffer, args.command)
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        proc = await self._start(args.command, tool_call_id, (read_fd, write_fd), buffer)
        group = proc.pid
        if group is not None:
            register_group(group)  # background jobs left in the group are ended when baton exits
        os.close(write_fd)
        transport, reader = await asyncio.get_running_loop().connect_read_pipe(
            lambda: _PipeReader(buffer, updates.mark), os.fdopen(read_fd, "rb", buffering=0)
        )
        try:
            ending = await _wait_for_end(proc, group, signal, timeout, reader, buffer)
        finally:
            updates.cancel()
            if proc.returncode is None and group is not None:
                signal_group(group, signals.SIGKILL)
            transport.close()
            buffer.close()
        duration_ms = round((time.monotonic() - started) * 1000)
        result = _result(args.command, proc.returncode, buffer, duration_ms, timeout, ending)
        return _report_stopped(result, ending.stopped) if ending.stopped is not None else result

    async def _run_in_background(self, command: str, tool_call_id: str) -> AgentToolResult[JsonObject]:
        """Start ``command`` as a background command of the session (it holds no process slot)."""
        if not os.path.isdir(self.cwd):
            raise ToolError(f"Working directory does not exist: {self.cwd}\nCannot execute bash commands.")
        env = self.env if self.env is not None else self.environment.build()

        async def launch(argv: list[str], output_fd: int) -> StartedCommand:
            if self.command_launcher is not None:
                return await self.command_launcher(argv, tool_call_id, self.cwd, env, output_fd, background=True)
            return await start_command(argv, self.cwd, env, output_fd)

        try:
            process = await self.background.start(command, launch, shell_command(command))
        except BackgroundError as exc:
            raise ToolError(str(exc), _details(command, background=True)) from None
        except CommandLaunchError as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:
            raise ToolError(f"Failed to start the shell: {exc.strerror or exc}") from None
        text = (f"Command running in background with ID: {process.id}. Read its output with bash_output "
                f"(bash_id {process.id!r}) and end it with kill_shell. Full log: {process.ring.log_path}")
        details = _details(command, background=True, shellId=process.id, fullOutputPath=process.ring.log_path)
        return AgentToolResult([TextContent(text=text)], details)

    async def _start(
        self, command: str, tool_call_id: str, pipe: tuple[int, int], buffer: OutputBuffer
    ) -> StartedCommand:
        """The shell running ``command``, its output on the pipe's write end (the pipe and the
        buffer are closed when it cannot start)."""
        argv = shell_command(command)
        env = self.env if self.env is not None else self.environment.build()
        try:
            if self.command_launcher is not None:
                return await self.command_launcher(argv, tool_call_id, self.cwd, env, pipe[1])
            return await start_command(argv, self.cwd, env, pipe[1])
        except (OSError, CommandLaunchError) as exc:
            for fd in pipe:
                os.close(fd)
            buffer.close()
            if isinstance(exc, CommandLaunchError):
                raise ToolError(str(exc)) from None
            raise ToolError(f"Failed to start the shell: {exc.strerror or exc}") from None


@dataclass(frozen=True, slots=True)
class _Ending:
    """How a command ended, when it did not simply exit."""

    aborted: bool = False
    timed_out: bool = False
    stopped: StoppedProcess | None = None

    @property
    def killed(self) -> bool:
        """Whether baton ended the command's process group."""
        return self.aborted or self.timed_out or self.stopped is not None


async def _wait_for_end(
    proc: StartedCommand, group: int | None, signal: asyncio.Event, timeout: float | None,
    reader: _PipeReader, buffer: OutputBuffer,
) -> _Ending:
    """Wait for the command to exit, be aborted, time out or stop; end its group in the last
    three cases, then read what is left of its output."""
    exit_task = asyncio.ensure_future(proc.wait())
    abort_task = asyncio.ensure_future(signal.wait())
    # A command that ended before its group was known has nothing left to watch.
    stopped_task: asyncio.Future[StoppedProcess] = (
        asyncio.ensure_future(watch_stopped(group)) if group is not None
        else asyncio.get_running_loop().create_future()
    )
    try:
        done, _ = await asyncio.wait(
            (exit_task, abort_task, stopped_task), timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if abort_task in done:
            ending = _Ending(aborted=True)
        elif stopped_task in done and exit_task not in done:
            ending = _Ending(stopped=stopped_task.result())
        else:
            ending = _Ending(timed_out=exit_task not in done)
        if ending.killed and group is not None:
            await kill_group(group)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(exit_task), 5.0)
        await _drain(reader, buffer, killed=ending.killed)
    finally:
        abort_task.cancel()
        stopped_task.cancel()
    return ending


async def _drain(reader: _PipeReader, buffer: OutputBuffer, killed: bool) -> None:
    """Read the pipe to its end, unless processes left behind keep it open (then stop reading)."""
    if killed:
        # Everything in the group is dead: the pipe closes as soon as the kernel tears it down.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader.closed), 1.0)
        return
    loop = asyncio.get_running_loop()
    start = last_change = loop.time()
    seen = buffer.total_bytes
    while not reader.closed.done():
        await asyncio.wait({reader.closed}, timeout=0.05)
        now = loop.time()
        if buffer.total_bytes != seen:
            seen = buffer.total_bytes
            last_change = now
        if now - last_change >= DRAIN_IDLE_SECONDS or now - start >= DRAIN_MAX_SECONDS:
            return


def _details(command: str, **extra: JsonValue) -> JsonObject:
    details: JsonObject = {
        "command": command,
        "exitCode": None,
        "signal": None,
        "durationMs": 0,
        "timedOut": False,
        "aborted": False,
        "truncated": False,
        "totalLines": 0,
        "totalBytes": 0,
        "outputLines": 0,
        "fullOutputPath": None,
    }
    details.update(extra)
    return details


def _result(
    command: str, returncode: int | None, buffer: OutputBuffer, duration_ms: int, timeout: float | None,
    ending: _Ending,
) -> AgentToolResult[JsonObject]:
    snapshot = buffer.snapshot()
    truncation = snapshot.truncation
    exit_code = returncode if returncode is not None and returncode >= 0 else None
    signal_name = _signal_name(-returncode) if returncode is not None and returncode < 0 else None
    text = snapshot.text.rstrip("\n")
    if truncation.truncated:
        text = f"{text}\n\n{_truncation_notice(snapshot, buffer)}"
    status = _status(returncode, exit_code, signal_name, timeout, ending)
    if status is not None:
        text = f"{text}\n\n{status}" if text else status
    elif not text:
        text = "(no output)"
    details = _details(
        command,
        exitCode=exit_code,
        signal=signal_name,
        durationMs=duration_ms,
        timedOut=ending.timed_out,
        aborted=ending.aborted,
        truncated=truncation.truncated,
        totalLines=snapshot.total_lines,
        totalBytes=snapshot.total_bytes,
        outputLines=truncation.output_lines,
        fullOutputPath=snapshot.full_output_path,
    )
    if truncation.truncated:
        details["truncation"] = truncation.to_details()
    return AgentToolResult([TextContent(text=text)], details, is_error=status is not None)


def _truncation_notice(snapshot: OutputSnapshot, buffer: OutputBuffer) -> str:
    """``[Showing lines 1-2000 of 2500. Full output: /tmp/...]`` and its other forms."""
    truncation = snapshot.truncation
    end = truncation.total_lines
    start = end - truncation.output_lines + 1
    path = snapshot.full_output_path
    if truncation.last_line_partial:
        return (
            f"[Showing last {format_size(truncation.output_bytes)} of line {end} (line is "
            f"{format_size(buffer.last_line_bytes())}). Full output: {path}]"
        )
    if truncation.truncated_by == "lines":
        return f"[Showing lines {start}-{end} of {end}. Full output: {path}]"
    limit = format_size(DEFAULT_MAX_BYTES)
    return f"[Showing lines {start}-{end} of {end} ({limit} limit). Full output: {path}]"


def _status(
    returncode: int | None, exit_code: int | None, signal_name: str | None, timeout: float | None, ending: _Ending
) -> str | None:
    """Why the result is an error (``None``: the command exited with 0)."""
    if ending.aborted:
        return "Command aborted"
    if ending.timed_out:
        return f"Command timed out after {timeout:g} seconds"
    if signal_name is not None:
        return f"Command was killed by signal {signal_name}"
    if exit_code:
        return f"Command exited with code {exit_code}"
    if returncode is None:
        return "Command ended with an unknown exit status (the sandbox that ran it stopped)"
    return None


def _report_stopped(result: AgentToolResult[JsonObject], stopped: StoppedProcess) -> AgentToolResult[JsonObject]:
    """The result of a command ended because a process of it stopped (see :mod:`tools.process_watch`)."""
    status = (
        f"Command was stopped: process {stopped.pid} ({stopped.name}) got a stop signal (SIGSTOP, SIGTSTP, "
        "SIGTTIN or SIGTTOU) and nothing could continue it, so the command was ended. Commands run without "
        "job control: do not stop processes or read from the terminal."
    )
    text = "".join(b.text for b in result.content if isinstance(b, TextContent)).rstrip("\n")
    lines = text.split("\n\n")
    if lines and lines[-1].startswith("Command was killed by signal"):
        lines.pop()
    text = "\n\n".join([*lines, status]) if text and lines != [""] else status
    details: JsonObject = {**(result.details or {}), "stopped": {"pid": stopped.pid, "name": stopped.name}}
    return AgentToolResult([TextContent(text=text)], details, is_error=True)


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return str(number)

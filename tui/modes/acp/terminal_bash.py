"""``bash`` in the editor's terminal, when the editor offers terminals (ACP ``terminal/*``).

The command runs in a terminal the editor creates and shows live inside the tool call; the model
gets the same text the local bash tool would give it (the tail, control sequences stripped, the
exit status). Abort (``session/cancel``) and the timeout kill it.

The editor's terminal is no way around the permission policy: the call went through the same
gate as local bash (asked where that asks), and what the editor starts is exactly what baton would
start locally — ``bash -c COMMAND`` inside the session's sandbox when the policy sandboxed the
call (the same bubblewrap arguments), with baton's scrubbed environment (``env -i``: none of the
editor's variables, so no key the editor holds, reach the command).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonObject
from baton.providers.messages import TextContent
from baton.tools import BashTool, strip_control_sequences
from baton.tools.bash import DEFAULT_TIMEOUT_SECONDS, BashParams
from baton.tools.sandbox import sandbox_environment
from baton.tools.shell import shell_command
from baton.tools.tool_env import ToolEnvironment
from baton.tools.truncate import truncate_tail

if TYPE_CHECKING:
    from baton.tools.sandbox import Sandbox
    from baton.tui.modes.acp.client import AcpClient

SandboxFor = Callable[[str], "Sandbox | None"]
"""The sandbox a tool call must run in (the session's permission gate decides)."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The editor keeps at most this much output (from the end) for the model.
OUTPUT_BYTE_LIMIT = 1_000_000


class EditorTerminalBash(AgentTool[BashParams, JsonObject]):
    """The ``bash`` tool, run in the editor's terminal."""

    name: ClassVar[str] = "bash"
    label: ClassVar[str] = "bash"
    description: ClassVar[str] = BashTool.description
    parameters = BashParams
    kind = BashTool.kind
    claude_code_name = BashTool.claude_code_name

    def __init__(
        self, client: AcpClient, session_id: str, cwd: str, on_terminal: Callable[[str, str], None],
        sandbox_for: SandboxFor = lambda call_id: None, environment: ToolEnvironment | None = None,
        background: BashTool | None = None,
    ) -> None:
        self.client = client
        self.environment = environment or ToolEnvironment()
        self.session_id = session_id
        self.cwd = cwd
        self.on_terminal = on_terminal
        self.sandbox_for = sandbox_for
        self.background = background
        """baton's own bash, which runs ``run_in_background`` calls (an editor's terminal lives only
        as long as the call; the session's background commands are baton's)."""

    async def _call(self, method: str, terminal_id: str | None = None, **params: Any) -> Any:
        payload: dict[str, Any] = {"sessionId": self.session_id, **params}
        if terminal_id is not None:
            payload["terminalId"] = terminal_id
        return await self.client.request(method, payload) or {}

    async def run(
        self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult:
        """Run ``params.command`` in a new editor terminal and wait for it."""
        args: BashParams = params
        if signal.is_set():
            raise ToolError("Command aborted")
        if args.run_in_background:
            if self.background is None:
                raise ToolError("run_in_background is not available here; run the command without it.")
            return await self.background.run(tool_call_id, args, signal, on_update)
        timeout = DEFAULT_TIMEOUT_SECONDS if args.timeout is None else (args.timeout or None)
        argv = terminal_argv(args.command, self.cwd, self.sandbox_for(tool_call_id), self.environment)
        created = await self._call("terminal/create", command=argv[0], args=argv[1:], cwd=self.cwd,
                                   outputByteLimit=OUTPUT_BYTE_LIMIT)
        terminal_id = str(created["terminalId"])
        self.on_terminal(tool_call_id, terminal_id)
        started = time.monotonic()
        exited = asyncio.ensure_future(self._call("terminal/wait_for_exit", terminal_id))
        stop = asyncio.ensure_future(signal.wait())
        aborted = timed_out = False
        try:
            done, _ = await asyncio.wait({exited, stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if exited not in done:
                aborted, timed_out = signal.is_set(), not signal.is_set()
                with contextlib.suppress(Exception):
                    await self._call("terminal/kill", terminal_id)
            output = await self._call("terminal/output", terminal_id)
        finally:
            stop.cancel()
            exited.cancel()
            with contextlib.suppress(Exception):
                await self._call("terminal/release", terminal_id)
        status = output.get("exitStatus") or (exited.result() if exited.done() and not exited.cancelled() else {})
        return _result(args.command, str(output.get("output", "")), status or {}, timeout,
                       int((time.monotonic() - started) * 1000), aborted, timed_out)


def terminal_argv(command: str, cwd: str, sandbox: Sandbox | None, environment: ToolEnvironment) -> list[str]:
    """What the editor's terminal runs for ``command``: the shell (in ``sandbox`` when given),
    started by ``env -i`` with the session's tool environment (credentials dropped)."""
    import shutil

    argv = shell_command(command)
    env = environment.build()
    if sandbox is not None:
        argv = sandbox.detached_argv(argv, cwd)
        env = sandbox_environment(env)
    pairs = [f"{k}={v}" for k, v in sorted(env.items()) if _ENV_NAME.fullmatch(k)]
    return [shutil.which("env") or "/usr/bin/env", "-i", *pairs, *argv]


def _result(
    command: str, output: str, status: dict[str, Any], timeout: float | None, duration_ms: int,
    aborted: bool, timed_out: bool,
) -> AgentToolResult:
    truncation = truncate_tail(strip_control_sequences(output))
    text = truncation.content.rstrip("\n")
    if truncation.truncated:
        text = f"[Showing the last {truncation.output_lines} of {truncation.total_lines} lines]\n{text}"
    exit_code, signal_name = status.get("exitCode"), status.get("signal")
    details = {"command": command, "exitCode": exit_code, "signal": signal_name, "durationMs": duration_ms,
               "timedOut": timed_out, "aborted": aborted, "truncated": truncation.truncated,
               "totalLines": truncation.total_lines, "terminal": True}
    if aborted:
        raise ToolError("Command aborted", details)
    problem = None
    if timed_out:
        problem = f"Command timed out after {timeout:g} seconds"
    elif signal_name:
        problem = f"Command was killed by signal {signal_name}"
    elif exit_code:
        problem = f"Command exited with code {exit_code}"
    if problem is not None:
        text = f"{text}\n\n{problem}" if text else problem
    elif not text:
        text = "(no output)"
    return AgentToolResult([TextContent(text=text)], details, is_error=problem is not None)

"""Running one command hook: JSON on stdin, stdout/stderr collected, killed at its timeout.

The command runs through the shell in its own process group (so a timeout or an abort kills
what it started too), in the session's directory, in the environment bash commands get (no
credentials: :mod:`tools.tool_env`) with ``CLAUDE_PROJECT_DIR`` and ``BATON_PROJECT_DIR`` set.
Its output is redacted (:mod:`providers.redact`) before anything reads it: it may become a tool
result, context for the model or a warning on the screen. Nothing here raises: a command that
cannot start is an outcome too.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from baton.providers.json_depth import MAX_VALUE_DEPTH, loads_bounded
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.redact import redact
from baton.tools.processes import register_group
from baton.tools.shell import kill_group, shell_command
from baton.tools.tool_env import ToolEnvironment

MAX_OUTPUT_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What a hook command did."""

    command: str
    exit_code: int | None
    """``None`` when it could not start or was killed at its timeout."""
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None
    """Why it could not start."""

    @property
    def json(self) -> JsonObject | None:
        """The stdout parsed as a JSON object, when it is one."""
        text = self.stdout.strip()
        if not text.startswith("{"):
            return None
        try:
            value = loads_bounded(text, MAX_VALUE_DEPTH)
        except ValueError:  # not JSON, or nested too deeply
            return None
        return value if isinstance(value, dict) else None


async def run_hook_command(command: str, payload: JsonMapping, cwd: Path, timeout: float,
                           environment: ToolEnvironment) -> HookOutcome:
    """Run ``command`` with ``payload`` as JSON on stdin, in the session's ``environment``; never raises."""
    env = {**environment.build(), "CLAUDE_PROJECT_DIR": str(cwd), "BATON_PROJECT_DIR": str(cwd)}
    try:
        proc = await asyncio.create_subprocess_exec(
            *shell_command(command),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookOutcome(command, None, error=f"cannot start: {exc.strerror or exc}")
    register_group(proc.pid)  # whatever the hook leaves running ends with baton
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        out, err = await asyncio.wait_for(_communicate(proc, data), timeout)
    except TimeoutError:
        await kill_group(proc.pid)
        await proc.wait()
        return HookOutcome(command, None, timed_out=True)
    except asyncio.CancelledError:
        await asyncio.shield(kill_group(proc.pid))
        raise
    return HookOutcome(command, proc.returncode, redact(_text(out)), redact(_text(err)))


async def _communicate(proc: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bytes]:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the hook did not read its input: fine
    finally:
        proc.stdin.close()
    out, err = await asyncio.gather(proc.stdout.read(MAX_OUTPUT_BYTES), proc.stderr.read(MAX_OUTPUT_BYTES))
    await proc.wait()
    return out, err


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")

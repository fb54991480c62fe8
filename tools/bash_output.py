"""The ``bash_output`` tool: what a background command printed since the last read.

Claude Code's ``BashOutput``: ``bash_id`` names a command started with ``bash``'s
``run_in_background``; the result is its status and the output it printed since the previous
``bash_output`` call for it (the last 2000 lines / 50 KB of that; the whole output is in the log
named). ``filter``, a regular expression, keeps only the matching lines (the lines left out are
consumed too). The expression runs in a separate process that is ended after
:data:`FILTER_TIMEOUT_SECONDS`, so a pattern that backtracks without end costs the model an error,
not baton's responsiveness.

``details``: ``{shellId, command, status, exitCode, newBytes, skippedBytes, fullOutputPath}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.background import BackgroundError, BackgroundProcesses
from baton.tools.params import ToolParams
from baton.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_tail

FILTER_TIMEOUT_SECONDS = 5.0
_FILTER_SCRIPT = (
    "import re, sys\n"
    "pattern = re.compile(sys.argv[1])\n"
    "text = sys.stdin.buffer.read().decode('utf-8', 'surrogateescape')\n"
    "out = [line for line in text.split('\\n') if pattern.search(line)]\n"
    "sys.stdout.buffer.write('\\n'.join(out).encode('utf-8', 'surrogateescape'))\n"
)


class BashOutputParams(ToolParams):
    """Arguments of ``bash_output``."""

    bash_id: str = Field(description="The id of the background shell (returned by bash with run_in_background)")
    filter: str | None = Field(
        default=None,
        description="Optional regular expression: only output lines matching it are returned "
        "(the others are consumed too).",
    )


class BashOutputTool(AgentTool[BashOutputParams, JsonObject]):
    """Read a background command's new output (see the module docstring)."""

    name = "bash_output"
    label = "bash output"
    prompt_summary = "Read new output of a background bash command"
    kind = "read"
    read_only = True
    session_only = True
    claude_code_name = "BashOutput"
    description = (
        "Read the output a background bash command (started with run_in_background) printed since the "
        "last bash_output call for it, with its status (running, or how it ended). Optional filter: a "
        f"regular expression keeping only matching lines. Output is cut to the last {DEFAULT_MAX_LINES} "
        f"lines or {DEFAULT_MAX_BYTES // 1024}KB; the full log's path is given."
    )
    parameters = BashOutputParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.background = BackgroundProcesses()
        """The session's background commands (the session shares bash's registry with this tool)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Output of bash_1``."""
        shell = args.get("bash_id")
        return f"Output of {shell}" if isinstance(shell, str) else cls.label

    async def run(
        self, tool_call_id: str, params: BashOutputParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Read (see the module docstring)."""
        try:
            process = self.background.get(params.bash_id)
        except BackgroundError as exc:
            raise ToolError(str(exc)) from None
        process.catch_up()
        chunk = process.ring.since(process.read_offset)
        process.read_offset = chunk.next_offset
        text = chunk.text
        if params.filter:
            text = await _filter_lines(text, params.filter)
        truncation = truncate_tail(text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
        parts = [f"<status>{process.status_text()}</status>"]
        if chunk.skipped_bytes:
            parts.append(f"[{chunk.skipped_bytes} bytes printed since the last read are only in the log: "
                         f"{process.ring.log_path}]")
        if truncation.truncated:
            parts.append(f"[Showing the last {truncation.output_lines} lines of the new output. "
                         f"Full log: {process.ring.log_path}]")
        body = truncation.content.rstrip("\n")
        parts.append(f"<output>\n{body}\n</output>" if body else "(no new output)")
        details: JsonObject = {
            "shellId": process.id, "command": process.command, "status": process.status_text(),
            "exitCode": process.exit_code, "newBytes": len(chunk.text.encode()),
            "skippedBytes": chunk.skipped_bytes, "fullOutputPath": process.ring.log_path,
        }
        return AgentToolResult.text("\n".join(parts), details)


async def _filter_lines(text: str, pattern: str) -> str:
    """The lines of ``text`` matching ``pattern`` (in a separate, time-limited process)."""
    import re

    try:
        re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"Invalid filter regular expression: {exc}") from None
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", "-c", _FILTER_SCRIPT, pattern,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(
            process.communicate(text.encode("utf-8", "surrogateescape")), FILTER_TIMEOUT_SECONDS)
    except TimeoutError:
        raise ToolError(f"The filter took longer than {FILTER_TIMEOUT_SECONDS:g} seconds and was stopped; "
                        "use a simpler expression.") from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    return out.decode("utf-8", "replace")

"""The user's own shell commands (``!cmd``): run with the bash tool, recorded as a
``bashExecution`` message."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from baton.agent.messages import BashExecutionMessage
from baton.agent.redaction import redact_result
from baton.agent.tool import AgentToolResult, ToolError
from baton.providers.messages import TextContent


async def run_user_bash(
    command: str,
    cwd: str,
    signal: asyncio.Event,
    *,
    exclude_from_context: bool = False,
    on_output: Callable[[str], None] | None = None,
) -> BashExecutionMessage:
    """Run ``command`` in ``cwd`` (no timeout; ``signal`` stops it, with its whole process
    group). ``on_output`` gets the output so far (its tail) while it runs."""
    from baton.tools.bash import BashTool

    def forward(partial: AgentToolResult) -> None:
        if on_output is not None:
            partial = redact_result(partial, partial=True)
            on_output("".join(b.text for b in partial.content if isinstance(b, TextContent)))

    tool = BashTool(cwd, default_timeout=None)
    try:
        result = await tool.execute("user-bash", {"command": command}, signal, forward)
    except ToolError as exc:
        result = AgentToolResult.text(str(exc), exc.details, is_error=True)
    result = redact_result(result)  # the output goes to the screen, the session file, the model
    details = result.details if isinstance(result.details, dict) else {}
    return BashExecutionMessage(
        command=command,
        output=_plain_output(result),
        exit_code=details.get("exitCode"),
        cancelled=bool(details.get("aborted") or details.get("timedOut")),
        truncated=bool(details.get("truncated")),
        full_output_path=details.get("fullOutputPath"),
        exclude_from_context=True if exclude_from_context else None,
    )


def _plain_output(result: AgentToolResult) -> str:
    """The command's output without the status line the tool adds for a model (the message
    keeps the exit code itself)."""
    text = "".join(b.text for b in result.content if isinstance(b, TextContent))
    if text == "(no output)" and not result.is_error:
        return ""
    if result.is_error:
        head, sep, tail = text.rpartition("\n\n")
        if sep and tail.startswith("Command "):
            return head
        if not sep and text.startswith("Command "):
            return ""
    return text

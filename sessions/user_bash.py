"""The user's own shell commands (``!cmd``): run with the bash tool, recorded as a
``bashExecution`` message.

A command run while the agent works is added to the conversation after the run (before the next
prompt), so a turn never sees a message appear in its middle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from baton.agent.messages import BashExecutionMessage
from baton.agent.redaction import redact_result
from baton.agent.tool import AgentToolResult, ToolError
from baton.providers.messages import TextContent

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession
    from baton.tools.process_slots import ProcessSlots
    from baton.tools.tool_env import ToolEnvironment


class UserBash:
    """The ``!cmd`` commands of one session: at most one runs; results wait for a run to end."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session
        self._signal: asyncio.Event | None = None
        self._pending: list[BashExecutionMessage] = []

    async def run(
        self, command: str, exclude_from_context: bool = False, on_output: Callable[[str], None] | None = None
    ) -> BashExecutionMessage:
        """Run ``command`` for the user (see ``CodingSession.run_bash``)."""
        session = self._session
        signal = asyncio.Event()
        self._signal = signal
        try:
            message = await run_user_bash(
                command, str(session.cwd), signal, exclude_from_context=exclude_from_context, on_output=on_output,
                environment=session.tool_env, slots=session.process_slots,
            )
        finally:
            self._signal = None
        if session.is_running:
            self._pending.append(message)
        else:
            self._add(message)
        return message

    def abort(self) -> None:
        """Stop the running command, if any."""
        if self._signal is not None:
            self._signal.set()

    def flush(self) -> None:
        """Add the results that waited for the run to end."""
        pending, self._pending = self._pending, []
        for message in pending:
            self._add(message)

    def _add(self, message: BashExecutionMessage) -> None:
        session = self._session
        session.store.append_message(message)
        session.agent.replace_messages([*session.agent.messages, message])


async def run_user_bash(
    command: str,
    cwd: str,
    signal: asyncio.Event,
    *,
    exclude_from_context: bool = False,
    on_output: Callable[[str], None] | None = None,
    environment: ToolEnvironment | None = None,
    slots: ProcessSlots | None = None,
) -> BashExecutionMessage:
    """Run ``command`` in ``cwd`` (no timeout; ``signal`` stops it, with its whole process
    group) in the session's ``environment``, taking one of its process ``slots``. ``on_output``
    gets the output so far (its tail) while it runs."""
    from baton.tools.bash import BashTool

    def forward(partial: AgentToolResult) -> None:
        if on_output is not None:
            partial = redact_result(partial, partial=True)
            on_output("".join(b.text for b in partial.content if isinstance(b, TextContent)))

    tool = BashTool(cwd, default_timeout=None, environment=environment, slots=slots)
    try:
        result = await tool.execute("user-bash", {"command": command}, signal, forward)
    except ToolError as exc:
        result = AgentToolResult.text(str(exc), exc.details if isinstance(exc.details, dict) else None, is_error=True)
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

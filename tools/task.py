"""The ``task`` tool: hand a self-contained task to a subagent and get its final answer back.

The subagent runs its own agent loop with a fresh context (its system prompt and the task), its
own tools and possibly another provider's model; only the task and its final answer enter the
caller's context. The tool itself only carries the call: the session gives it a
:class:`TaskRunner` (``sessions/subagents.py``), which picks the agent definition and model,
runs the subagent under the session's permissions, sandbox, hooks and checkpoints, and keeps its
transcript in a session file of its own. Without a runner the tool refuses every call.

``details`` (from the runner): ``{agent, model, status, sessionFile, sessionId, turns, usage,
cost, currentTool?, elapsedMs}`` — while it runs, each update carries the same fields so far.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from pydantic import AliasChoices, Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError, short_title
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.params import ToolParams


class TaskParams(ToolParams):
    """Arguments of ``task``."""

    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the subagent: everything it needs to know, and what to report back")
    agent: str | None = Field(
        default=None,
        # Claude Code's models call the same tool with ``subagent_type``.
        validation_alias=AliasChoices("agent", "subagent_type", "subagentType"),
        description="The agent to run (see the list in this tool's description; default: general)",
    )


class TaskRunner(Protocol):
    """What runs a subagent for a ``task`` call (the session provides it)."""

    def agents_summary(self) -> str:
        """The agents the model may name, one line each (for the tool's description)."""
        ...

    async def run_task(
        self, tool_call_id: str, params: TaskParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Run the subagent to its end (or until ``signal``) and return its final answer."""
        ...


BASE_DESCRIPTION = (
    "Launch a subagent to carry out a self-contained task (research across many files, a focused "
    "change, a review) with a fresh context; only its final answer comes back to you. Give it "
    "everything it needs in the prompt: it does not see this conversation. Several task calls in "
    "one reply run in parallel."
)


class TaskTool(AgentTool[TaskParams, JsonObject]):
    """Run a subagent (see the module docstring)."""

    name = "task"
    label = "Task"
    prompt_summary = "Delegate a self-contained task to a subagent (fresh context, its answer comes back)"
    kind = "other"
    delegates = True
    claude_code_name = "Task"
    description = BASE_DESCRIPTION
    parameters = TaskParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.runner: TaskRunner | None = None
        """Set by the session; ``None``: subagents are not available here."""

    def schema_description(self) -> str:
        """The description with the agents the runner offers."""
        if self.runner is None:
            return BASE_DESCRIPTION
        return f"{BASE_DESCRIPTION}\n\nAvailable agents:\n{self.runner.agents_summary()}"

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Task (explore): find the config loader``."""
        description = args.get("description")
        agent = args.get("agent")
        head = f"Task ({agent})" if isinstance(agent, str) and agent else "Task"
        return f"{head}: {short_title(description)}" if isinstance(description, str) and description else head

    async def run(
        self, tool_call_id: str, params: TaskParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Hand the task to the runner."""
        if self.runner is None:
            raise ToolError("Subagents are not available here (the depth limit is reached or subagents are off).")
        return await self.runner.run_task(tool_call_id, params, signal, on_update)

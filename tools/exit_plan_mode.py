"""The ``exit_plan_mode`` tool: the model hands its plan to the user, who decides.

Offered only in plan mode. The tool does not leave plan mode itself: it asks the session's
reviewer (:attr:`ExitPlanModeTool.review`, set by :mod:`baton.sessions.plan_mode`), which shows
the plan to the user — accept and start (in ``ask`` or ``auto`` mode), keep planning with
feedback, or cancel — and only the user's answer changes the mode. Without anyone to ask (print,
JSON and RPC modes) the plan is reported and plan mode stays on.

``details``: ``{plan, outcome, mode?, feedback?}``; ``outcome`` is ``accepted``, ``keep_planning``,
``cancelled``, ``proposed`` (nobody could be asked) or ``not_planning``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.params import ToolParams

PlanOutcome: TypeAlias = Literal["accepted", "keep_planning", "cancelled", "proposed", "not_planning"]
MAX_PLAN = 100_000
"""Characters of a plan."""


class ExitPlanModeParams(ToolParams):
    """Arguments of ``exit_plan_mode``."""

    plan: str = Field(min_length=1, max_length=MAX_PLAN,
                      description="The plan, in Markdown: the steps, the files to change, how to check the result")


@dataclass(frozen=True, slots=True)
class PlanVerdict:
    """What became of a plan: what the model reads, and what the UI and session keep."""

    outcome: PlanOutcome
    text: str
    mode: str | None = None
    """``accepted``: the approval mode the work starts in."""
    feedback: str | None = None
    """``keep_planning``: what the user wants changed."""


PlanReview: TypeAlias = Callable[[str, str, asyncio.Event], Awaitable[PlanVerdict]]
"""``(tool_call_id, plan, signal)``: shows a plan to the user and returns their verdict (the
session's plan-mode part)."""


class ExitPlanModeTool(AgentTool[ExitPlanModeParams, JsonObject]):
    """Present the plan for the user's decision (see the module docstring)."""

    name = "exit_plan_mode"
    label = "Plan"
    kind = "think"
    read_only = True
    claude_code_name = "ExitPlanMode"
    prompt_summary = "In plan mode: present your plan to the user for approval"
    description = (
        "Call this when you are in plan mode and have finished planning: pass your plan in Markdown "
        "(the steps, the files you will change, how you will check the result). The user reads it and "
        "decides: start the work, keep planning with their feedback, or cancel. Do not call it to ask "
        "questions, and only once the plan is complete."
    )
    parameters = ExitPlanModeParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.review: PlanReview | None = None
        """Set by the session; without it there is no plan mode to leave."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Plan``: the plan itself is the call's content."""
        return cls.label

    async def run(
        self, tool_call_id: str, params: ExitPlanModeParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Ask the reviewer; the model reads the verdict."""
        verdict = (await self.review(tool_call_id, params.plan, signal) if self.review is not None
                   else PlanVerdict("not_planning", "There is no plan mode in this session; go on with the work."))
        details: JsonObject = {"plan": params.plan, "outcome": verdict.outcome}
        if verdict.mode is not None:
            details["mode"] = verdict.mode
        if verdict.feedback is not None:
            details["feedback"] = verdict.feedback
        return AgentToolResult.text(verdict.text, details)

"""Plan mode, the session's side: what the model is offered, what it is told, and the user's
verdict on its plan.

The permission policy is what holds plan mode (:mod:`baton.sessions.permissions.policy` refuses
every call that could change anything). This part makes the mode usable: in plan mode the model
is offered only the read-only tools (read, grep, find, ls — added for planning when the session
was not given them — read-only MCP tools, ``todo_write``) and ``exit_plan_mode``, and its system
prompt says what plan mode is; outside plan mode ``exit_plan_mode`` and the tools added for
planning are neither offered nor run. ``exit_plan_mode`` reaches :meth:`SessionPlanMode.review`,
which asks the front end's :attr:`~SessionPlanMode.approver`; only the user's answer leaves plan
mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from baton.agent.execution import BeforeToolCallResult, ToolCallContext
from baton.sessions.events import PlanProposedEvent
from baton.sessions.permissions.policy import PLAN
from baton.tools.exit_plan_mode import ExitPlanModeTool, PlanVerdict

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool
    from baton.sessions.coding_session import CodingSession

logger = logging.getLogger(__name__)

PLANNING_TOOLS = ("read", "grep", "find", "ls")
"""The file tools plan mode offers, added for it when the session was not given them."""
PLAN_PROMPT = """

# Plan mode

Plan mode is on: the user wants a plan before any change. You may only read and search (the tools
offered now); every call that could change a file, run a command or reach anything outside is
refused. Explore what you need, then call exit_plan_mode with a complete plan in Markdown (the
steps, the files to change, how to check the result). The user accepts it (and the work starts),
asks you to keep planning, or cancels."""

PlanChoice: TypeAlias = Literal["accept", "keep_planning", "cancel"]


@dataclass(frozen=True, slots=True)
class PlanAnswer:
    """The user's answer to a plan: ``accept`` (start in ``mode``: ``ask`` or ``auto``),
    ``keep_planning`` (with ``feedback``) or ``cancel``."""

    choice: PlanChoice
    mode: str = "auto"
    feedback: str = ""


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """A plan to show: its Markdown and the ``exit_plan_mode`` call that brought it."""

    plan: str
    tool_call_id: str


PlanApprover: TypeAlias = Callable[[PlanRequest], Awaitable[PlanAnswer]]
"""What a front end implements: show the plan (Markdown), return the user's answer."""
START_MODES = ("ask", "auto")
"""The modes an accepted plan may start in (``full`` only by the user's own ``/approval``)."""


class SessionPlanMode:
    """Plan mode of one session (see the module docstring)."""

    def __init__(self, session: CodingSession, added: frozenset[str]) -> None:
        self._session = session
        self._added = added
        """Names of the tools added only for planning."""
        self.approver: PlanApprover | None = None
        """Set by a front end that can ask the user (the app, ACP); ``None``: the plan is reported."""
        for tool in session.agent.tools:
            if isinstance(tool, ExitPlanModeTool):
                tool.review = self.review
        session.agent.offers = self.offers
        session.tool_gates.add_before("plan_mode", self._before)
        session.permissions.mode_listeners.append(lambda mode: self._apply())
        self._apply()

    @property
    def active(self) -> bool:
        """Whether the session is in plan mode."""
        return self._session.permissions.mode == PLAN

    def offers(self, tool: AgentTool) -> bool:
        """Whether the model is shown ``tool`` now."""
        if self.active:
            traits = type(tool)
            return traits.read_only or traits.delegates  # as the policy judges it: by the tool's traits
        return tool.name not in self._added and not isinstance(tool, ExitPlanModeTool)

    def _apply(self) -> None:
        agent = self._session.agent
        if agent.system_prompt.endswith(PLAN_PROMPT):
            agent.system_prompt = agent.system_prompt[: -len(PLAN_PROMPT)]
        if self.active:
            agent.system_prompt += PLAN_PROMPT

    async def _before(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """Outside plan mode, a tool that is there only for planning is not run."""
        if self.active or self.offers(context.tool):
            return None
        return BeforeToolCallResult(block=True, reason=f"Tool {context.tool_call.name} is not available now")

    async def review(self, tool_call_id: str, plan: str, signal: asyncio.Event) -> PlanVerdict:
        """``exit_plan_mode``'s question: the user's verdict on ``plan``."""
        if not self.active:
            return PlanVerdict("not_planning", "Plan mode is not on; go on with the work.")
        if self.approver is None:
            await self._session.events.emit(PlanProposedEvent(plan, tool_call_id))
            return PlanVerdict("proposed", "The plan was handed to the user, who reviews it outside this run; plan "
                                           "mode stays on. Stop here: do not start the work.")
        answer = await self._ask(PlanRequest(plan, tool_call_id), signal)
        await self._session.events.emit(PlanProposedEvent(plan, tool_call_id, _outcome(answer)))
        if answer is None:
            return PlanVerdict("cancelled", "The run was aborted before the user answered; plan mode stays on.")
        if answer.choice == "accept":
            mode = answer.mode if answer.mode in START_MODES else "ask"
            self._session.permissions.set_mode(mode)
            return PlanVerdict("accepted", f"The user accepted the plan; the approval mode is now {mode}. Start the "
                                           "work now, following the plan.", mode=mode)
        if answer.choice == "keep_planning":
            feedback = answer.feedback.strip()
            told = f" The user's feedback: {feedback}" if feedback else ""
            return PlanVerdict("keep_planning", "The user wants to keep planning; plan mode stays on." + told +
                               " Revise the plan, then call exit_plan_mode again.", feedback=feedback)
        return PlanVerdict("cancelled", "The user cancelled the plan; plan mode stays on. Stop and wait for the "
                                        "user's next message.")

    async def _ask(self, request: PlanRequest, signal: asyncio.Event) -> PlanAnswer | None:
        assert self.approver is not None
        question = asyncio.ensure_future(self.approver(request))
        stop = asyncio.ensure_future(signal.wait())
        try:
            done, _ = await asyncio.wait({question, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if question not in done:
            question.cancel()
            return None
        try:
            return question.result()
        except Exception:  # a broken front end keeps plan mode on
            logger.exception("the plan could not be shown")
            return PlanAnswer("cancel")


def _outcome(answer: PlanAnswer | None) -> str:
    if answer is None or answer.choice == "cancel":
        return "cancelled"
    return "accepted" if answer.choice == "accept" else "keep_planning"


def planning_tool_names(names: list[str]) -> list[str]:
    """The tools to add to a session with the tools ``names`` so that plan mode works: the
    planning file tools it lacks and ``exit_plan_mode``."""
    return [name for name in (*PLANNING_TOOLS, ExitPlanModeTool.name) if name not in names]

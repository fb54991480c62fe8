"""The ``ask_model`` tool: a second opinion from another model (the ``advisor`` role).

The working model asks a question; the session's :class:`Advisor` (``sessions/advisor.py``) sends
it, with the recent conversation unless told otherwise, to the advisor model — any provider, the
transcript projected for its protocol as for a ``/model`` switch — and its answer comes back as
the result. The advisor gets no tools. The tool exists only where an advisor is configured.

``details``: ``{model, usage, cost, contextMessages}``; while the advisor thinks, one update
carries ``{model}`` (the app shows "consulting <model> …").
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError, short_title
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.details import ModelCallDetails
from baton.tools.params import ToolParams


class AskModelParams(ToolParams):
    """Arguments of ``ask_model``."""

    question: str = Field(description="What you want a second opinion on: state the problem and your current plan")
    include_conversation: bool = Field(
        default=True,
        description="Send the recent conversation with the question (false: the question must stand alone)",
    )


class Advisor(Protocol):
    """What answers an ``ask_model`` call (the session provides it)."""

    def describe(self) -> str:
        """The advisor model, for the tool's description."""
        ...

    async def consult(
        self, question: str, include_conversation: bool, signal: asyncio.Event, on_update: OnUpdate | None = None
    ) -> AgentToolResult[JsonObject]:
        """The advisor's answer (details: model, usage, cost); ``on_update`` hears which model
        was asked once the question is sent."""
        ...


BASE_DESCRIPTION = (
    "Ask another model (the user's configured advisor, often another vendor's) for a second opinion: "
    "a design choice, a bug you are stuck on, a review of your plan. It sees the recent conversation "
    "unless include_conversation is false, has no tools, and answers once."
)


class AskModelTool(AgentTool[AskModelParams, JsonObject]):
    """Consult the advisor (see the module docstring)."""

    name = "ask_model"
    label = "Ask model"
    prompt_summary = "Ask the advisor model (another vendor's, often) for a second opinion"
    kind = "think"
    read_only = True
    consults_configured_model = True
    description = BASE_DESCRIPTION
    parameters = AskModelParams
    details_type = ModelCallDetails

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.advisor: Advisor | None = None
        """Set by the session; ``None``: no advisor configured."""

    def schema_description(self) -> str:
        """The description naming the advisor model."""
        return BASE_DESCRIPTION if self.advisor is None else f"{BASE_DESCRIPTION} Advisor: {self.advisor.describe()}."

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Ask model: should the cache be per request?``."""
        question = args.get("question")
        return f"Ask model: {short_title(question)}" if isinstance(question, str) and question else "Ask model"

    async def run(
        self, tool_call_id: str, params: AskModelParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Hand the question to the advisor."""
        if self.advisor is None:
            raise ToolError("No advisor model is configured (set models.advisor in settings.json).")
        if not params.question.strip():
            raise ToolError("The question is empty.")
        return await self.advisor.consult(params.question, params.include_conversation, signal, on_update)

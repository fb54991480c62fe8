"""The session's advisor: answers the ``ask_model`` tool with the ``advisor`` role's model.

The question goes with the recent conversation (up to half the advisor's window, from a user
message on), projected for the advisor's protocol by the same transform every request takes
(thinking as text, ids normalised, images downgraded). The advisor gets no tools and answers once;
its cost is in the result's details (and so in the budget and ``/cost``, role ``advisor``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from baton.agent.messages import AgentMessage, convert_to_llm
from baton.agent.tool import AgentToolResult, OnUpdate
from baton.providers.errors import ToolError
from baton.providers.json_types import JsonObject
from baton.providers.messages import AssistantMessage, Context, TextContent, UserMessage
from baton.providers.models import Model
from baton.sessions.budget import BudgetExceededError
from baton.sessions.roles import RoleError, resolve_model_spec
from baton.sessions.tokens import estimate_message_tokens, load_tokenizer, message_token_bound, tokenizer_ready
from baton.tools.ask_model import AskModelTool

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

ADVISOR_SYSTEM_PROMPT = (
    "You are an advisor: a second model consulted by the model that is working on a user's task in a "
    "coding agent. The conversation you may see is theirs. Give your own independent view: point out "
    "mistakes, risks and better options, and say plainly when you agree. You cannot run tools or read "
    "files beyond what the conversation shows. Answer the question directly and concisely."
)
MAX_CONTEXT_TOKENS = 100_000
"""The most of the conversation sent along, whatever the advisor's window."""
ANSWER_TOKENS = 4096


class SessionAdvisor:
    """Answers ``ask_model`` for one session (see the module docstring)."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session

    def model(self) -> Model:
        """The advisor model (:class:`RoleError` when none is configured or it is unknown)."""
        session = self._session
        return resolve_model_spec("advisor", session.settings, session.model, session.options.extra_models)

    def describe(self) -> str:
        """The advisor model's name, or why there is none."""
        try:
            return self.model().ref
        except RoleError as exc:
            return f"unavailable ({exc})"

    async def consult(
        self, question: str, include_conversation: bool, signal: asyncio.Event, on_update: OnUpdate | None = None
    ) -> AgentToolResult[JsonObject]:
        """Ask the advisor; its answer, or :class:`ToolError` saying why there is none.
        ``on_update`` hears the advisor's model as the question leaves (the app's box says whom
        it is waiting for)."""
        from baton.providers.dispatch import complete

        session = self._session
        try:
            model = self.model()
            session.budget.check()
        except (RoleError, BudgetExceededError) as exc:
            raise ToolError(str(exc)) from None
        if not session.models.can_call(model):
            raise ToolError(f"The advisor {model.ref} cannot be called: no API key for {model.provider}.")
        if include_conversation and not tokenizer_ready() and (
                sum(message_token_bound(m) for m in session.messages) > _budget(model)):
            await load_tokenizer()  # where to start the history is a decision on exact counts
        history = recent_context(session.messages, model) if include_conversation else []
        ask = UserMessage(content=[TextContent(text=(
            "The model working on this conversation asks for your opinion:\n\n"
            f"<question>\n{question}\n</question>"))])
        context = Context(system_prompt=ADVISOR_SYSTEM_PROMPT, messages=[*convert_to_llm(history), ask])
        if on_update is not None:
            on_update(AgentToolResult([], {"model": model.ref}))
        answer = await complete(model, context, api_key=session.models.api_key(model.provider), signal=signal,
                                max_tokens=min(ANSWER_TOKENS, model.max_tokens or ANSWER_TOKENS))
        if answer.stop_reason == "aborted" or signal.is_set():
            raise ToolError("The question to the advisor was aborted.")
        if answer.stop_reason == "error":
            raise ToolError(f"The advisor {model.ref} failed: {answer.error_message or 'unknown error'}")
        text = "\n".join(b.text for b in answer.content if isinstance(b, TextContent)).strip()
        details: JsonObject = {"model": model.ref, "usage": answer.usage.model_dump(mode="json", by_alias=True),
                               "cost": answer.usage.cost.total, "contextMessages": len(history)}
        return AgentToolResult.text(text or "(the advisor gave no answer)", details)


def _budget(model: Model) -> int:
    return min(model.context_window // 2, MAX_CONTEXT_TOKENS) if model.context_window > 0 else 32_000


def recent_context(messages: list[AgentMessage], model: Model) -> list[AgentMessage]:
    """The end of the conversation that fits the advisor (half its window, at most
    :data:`MAX_CONTEXT_TOKENS`), starting at a user message; the reply that is asking is left out
    (its tool calls have no results yet)."""
    history = list(messages)
    if history and isinstance(history[-1], AssistantMessage):
        history.pop()
    budget = _budget(model)
    start, used = len(history), 0
    while start > 0 and used + (cost := estimate_message_tokens(history[start - 1])) <= budget:
        used += cost
        start -= 1
    while start < len(history) and not isinstance(history[start], UserMessage):
        start += 1
    return history[start:]


def attach(session: CodingSession) -> SessionAdvisor:
    """Give the session's ``ask_model`` tools their advisor."""
    advisor = SessionAdvisor(session)
    for tool in session.agent.tools:
        if isinstance(tool, AskModelTool):
            tool.advisor = advisor
    return advisor

"""The session's answer to MCP sampling: ask the user, run the session's model, count the cost.

:mod:`tools.mcp.sampling` bounds what a server may ask; here the session decides whether and how
it is answered. Each request is a question to the user naming the server (never remembered: an
"allow always" answers this one request); a mode with no one to ask (print, JSON) refuses with
that reason; a server gets at most :data:`MAX_PER_SERVER` answers a session. The answer comes
from the session's model with only the server's messages (nothing of the conversation), and its
usage is recorded as a ``custom`` entry (``mcp_sampling``) that the session's cost counts.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from baton.providers.messages import Context, TextContent, UserMessage
from baton.sessions.budget import BudgetExceededError
from baton.sessions.permissions.approval import ApprovalRequest
from baton.tools.mcp.sampling import SamplingAnswer, SamplingRefused, SamplingRequest

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

MAX_PER_SERVER = 10
SAMPLING_ENTRY = "mcp_sampling"
"""The custom entry holding one answer's usage (counted by :mod:`sessions.stats`)."""
_ids = itertools.count(1)


class SessionSampler:
    """Answers MCP sampling requests for one session."""

    def __init__(self, session: CodingSession) -> None:
        self.session = session
        self.answered: dict[str, int] = {}

    async def __call__(self, request: SamplingRequest) -> SamplingAnswer:
        """Ask, then answer with the session's model; raises :class:`SamplingRefused`."""
        server = request.server
        if self.answered.get(server, 0) >= MAX_PER_SERVER:
            raise SamplingRefused(f"'{server}' already had {MAX_PER_SERVER} sampling answers this session")
        session = self.session
        model = session.model
        question = " ".join(request.text.split())
        shown = question if len(question) <= 160 else question[:157] + "..."
        ask = ApprovalRequest(
            tool_call_id=f"mcp-sampling-{next(_ids)}", tool_name=f"mcp__{server}__sampling",
            args={"server": server, "maxTokens": request.max_tokens, "systemPrompt": request.system_prompt[:500]},
            summary=f"MCP server '{server}' asks your model: {shown}", proposed_rule=None,
            reason=(f"the server wants {model.provider}/{model.id} to answer (up to {request.max_tokens} tokens, "
                    "at your cost); it gets the answer and sees nothing of this conversation"),
            diff="\n".join(f"  {line}" for line in request.text.splitlines()[:40]),
        )
        try:
            session.budget.check()  # a server's request spends the same budget as the session's own
        except BudgetExceededError as exc:
            raise SamplingRefused(str(exc)) from None
        answer = await session.permissions.ask(ask, session.abort_signal)
        if not answer.allowed:
            raise SamplingRefused(answer.reason or "the user declined")
        self.answered[server] = self.answered.get(server, 0) + 1
        from baton.providers.dispatch import complete

        context = Context(system_prompt=request.system_prompt or None,
                          messages=[UserMessage(content=list(request.content))])
        reply = await complete(model, context, api_key=session.models.api_key(model.provider),
                               max_tokens=request.max_tokens)
        session.store.append_custom(SAMPLING_ENTRY, {
            "server": server, "model": f"{model.provider}/{model.id}",
            "usage": reply.usage.model_dump(mode="json", by_alias=True)})
        session.budget.observe_result({"cost": reply.usage.cost.total})
        if reply.stop_reason in ("error", "aborted"):
            raise SamplingRefused(f"the model request failed: {reply.error_message or reply.stop_reason}")
        return SamplingAnswer("\n".join(b.text for b in reply.content if isinstance(b, TextContent)),
                              f"{model.provider}/{model.id}")

"""An MCP server's question (elicitation) in an editor.

ACP has no form of its own that baton can count on, so a yes/no question (a form without fields)
becomes ``session/request_permission`` titled with the server's name and its message ("Yes" /
"No"); a form with fields is refused with that reason (the server hears it).
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING

from baton.tools.mcp.elicitation import ElicitationAnswer, ElicitationQuestion, ElicitationRefused, Elicitor

if TYPE_CHECKING:
    from baton.tui.modes.acp.client import AcpClient

logger = logging.getLogger(__name__)
_ids = itertools.count(1)


def editor_elicitor(client: AcpClient, session_id: str) -> Elicitor:
    """An elicitor asking the editor (yes/no questions only)."""

    async def ask(question: ElicitationQuestion) -> ElicitationAnswer:
        if question.fields:
            raise ElicitationRefused("the editor (ACP) shows no forms; only yes/no questions")
        params = {
            "sessionId": session_id,
            "toolCall": {"toolCallId": f"baton-mcp-question-{next(_ids)}",
                         "title": f"MCP server '{question.server}' asks: {question.message[:200]}",
                         "kind": "other", "status": "pending",
                         "content": [{"type": "content", "content": {"type": "text", "text": question.message}}]},
            "options": [{"optionId": "accept", "name": "Yes", "kind": "allow_once"},
                        {"optionId": "decline", "name": "No", "kind": "reject_once"}],
        }
        try:
            result = await client.request("session/request_permission", params)
        except Exception as exc:  # the editor could not ask
            logger.warning("session/request_permission failed: %s", exc)
            return ElicitationAnswer("cancel")
        outcome = (result or {}).get("outcome") if isinstance(result, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return ElicitationAnswer("cancel")
        return ElicitationAnswer("accept" if outcome.get("optionId") == "accept" else "decline")

    return ask

"""Plan mode and the task list in an editor.

The model's plan (``exit_plan_mode``) is asked as ``session/request_permission``: the plan in
the tool call's content, and four options — start in auto mode, start asking for each change,
keep planning, cancel. The task list (``todo_update``) becomes ACP's ``plan`` session update,
whose entries are the tasks.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from baton.providers.json_types import JsonObject
from baton.tui.modes.acp.tool_info import text_content

if TYPE_CHECKING:
    from baton.tui.modes.acp.client import AcpClient

logger = logging.getLogger(__name__)

OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("accept_auto", "Start: edits run, commands in the sandbox (auto)", "allow_always"),
    ("accept_ask", "Start: ask before each change (ask)", "allow_once"),
    ("keep_planning", "Keep planning", "reject_once"),
    ("cancel", "Cancel", "reject_always"),
)


def plan_update(todos: Any) -> JsonObject:
    """ACP's ``plan`` update for a task list (``todo_update``'s todos)."""
    return {"sessionUpdate": "plan", "entries": [
        {"content": todo.content, "priority": "medium", "status": todo.status} for todo in todos
    ]}


def plan_permission_params(session_id: str, request: Any) -> JsonObject:
    """The ``session/request_permission`` parameters asking about a ``PlanRequest`` (the
    ``exit_plan_mode`` call the editor already shows, with the plan as its content)."""
    return {
        "sessionId": session_id,
        "toolCall": {"toolCallId": request.tool_call_id, "title": "The plan — start the work?", "kind": "think",
                     "status": "pending", "rawInput": {"plan": request.plan},
                     "content": [text_content(request.plan)]},
        "options": [{"optionId": option, "name": name, "kind": kind} for option, name, kind in OPTIONS],
    }


def plan_answer_for(outcome: Any) -> Any:
    """The session's ``PlanAnswer`` for the editor's outcome (cancelled or unknown → cancel)."""
    answer = importlib.import_module("baton.sessions.plan_mode").PlanAnswer
    option = outcome.get("optionId") if isinstance(outcome, dict) and outcome.get("outcome") == "selected" else None
    if option == "accept_auto":
        return answer("accept", "auto")
    if option == "accept_ask":
        return answer("accept", "ask")
    if option == "keep_planning":
        return answer("keep_planning")
    return answer("cancel")


def editor_plan_approver(client: AcpClient, session_id: str) -> Any:
    """A plan approver (plan → ``PlanAnswer``) that asks the editor."""

    async def approve(request: Any) -> Any:
        try:
            result = await client.request("session/request_permission", plan_permission_params(session_id, request))
        except Exception as exc:  # the editor could not ask: plan mode stays on
            logger.warning("session/request_permission failed for a plan: %s", exc)
            return plan_answer_for(None)
        return plan_answer_for((result or {}).get("outcome"))

    return approve

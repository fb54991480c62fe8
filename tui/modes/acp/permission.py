"""The session's approver in an editor: a permission question becomes ``session/request_permission``
with allow once / allow always / reject, and the editor's choice feeds the same rule store as the
TUI's approval panel (``allow_always`` saves the proposed rule)."""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from baton.tui.modes.acp.tool_info import diff_contents, text_content, tool_kind, tool_locations

if TYPE_CHECKING:
    from baton.tui.modes.acp.client import AcpClient

logger = logging.getLogger(__name__)
REJECTED = "The user rejected this tool call in the editor."


def permission_params(session_id: str, request: Any, cwd: str) -> dict[str, Any]:
    """The ``session/request_permission`` parameters for an approval request."""
    name, args = request.tool_name, request.args or {}
    unsandboxed = getattr(request, "kind", "tool") == "unsandboxed"
    content = diff_contents(name, args, cwd, None)  # a call that changes a file shows the change
    if request.reason:
        content.append(text_content(f"Why this asks: {request.reason}"))
    if unsandboxed and getattr(request, "output", None):
        content.append(text_content(f"The sandboxed run printed:\n{request.output}"))
    title = f"Run without the sandbox: {request.summary}" if unsandboxed else request.summary
    options = [{"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"}]
    if request.proposed_rule:
        options.append({"optionId": "allow_always", "name": f"Always allow {request.proposed_rule}",
                        "kind": "allow_always"})
    options.append({"optionId": "reject_once", "name": "Reject", "kind": "reject_once"})
    return {
        "sessionId": session_id,
        "toolCall": {"toolCallId": request.tool_call_id, "title": title, "kind": tool_kind(name),
                     "status": "pending", "rawInput": args, "locations": tool_locations(name, args, cwd),
                     "content": content},
        "options": options,
    }


def answer_for(outcome: Any, request: Any) -> Any:
    """The session's ``ApprovalAnswer`` for the editor's outcome (cancelled → abort)."""
    answer_type = importlib.import_module("baton.sessions.permissions.approval").ApprovalAnswer
    outcome = outcome if isinstance(outcome, dict) else {}
    if outcome.get("outcome") != "selected":
        return answer_type("abort")
    option = outcome.get("optionId")
    if option == "allow_once":
        return answer_type("allow_once")
    if option == "allow_always":
        return answer_type("allow_always", rule=request.proposed_rule)
    return answer_type("deny", reason=REJECTED)


def editor_approver(client: AcpClient, session_id: str, cwd: str) -> Any:
    """An approver (``ApprovalRequest`` → ``ApprovalAnswer``) that asks the editor."""

    async def approve(request: Any) -> Any:
        try:
            result = await client.request("session/request_permission", permission_params(session_id, request, cwd))
        except Exception as exc:  # the editor could not ask: treat it as a rejection
            logger.warning("session/request_permission failed: %s", exc)
            answer_type = importlib.import_module("baton.sessions.permissions.approval").ApprovalAnswer
            return answer_type("deny", reason=f"The editor could not ask the user: {exc}")
        return answer_for((result or {}).get("outcome"), request)

    return approve

"""Session events of the permission policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from baton.providers.json_types import JsonObject


@dataclass(slots=True)
class ToolApprovalEvent:
    """A call was checked against a rule or needed approval, and this was decided.

    ``decided_by``: ``rule``, ``hook``, ``user``, ``mode`` (or ``policy`` when approval was needed
    and nobody could be asked)."""

    tool_call_id: str
    tool_name: str
    decision: Literal["allow", "deny"]
    reason: str
    rule: str | None
    decided_by: str
    summary: str = ""
    needed_approval: bool = False
    type: Literal["tool_approval"] = "tool_approval"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "decision": self.decision,
            "reason": self.reason,
            "rule": self.rule,
            "decidedBy": self.decided_by,
        }


@dataclass(slots=True)
class ApprovalModeChangeEvent:
    """The approval mode changed (``ask``, ``auto`` or ``full``)."""

    mode: str
    type: Literal["approval_mode_change"] = "approval_mode_change"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "mode": self.mode}


def denial_line(event: ToolApprovalEvent) -> str | None:
    """The stderr line print and JSON modes write for a call denied for want of approval."""
    if event.decision != "deny" or not event.needed_approval or event.decided_by != "policy":
        return None
    return f"baton: denied {event.summary}: needs approval; use --approval full or an allow rule"

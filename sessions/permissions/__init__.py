"""Permissions: rules (Claude Code's syntax), path resolution, the policy that allows, asks or
denies each tool call, the approver interface front ends implement, and decision records.

See the README's Permissions section for the behaviour, :mod:`.policy` for the decision table.
"""

from baton.sessions.permissions.approval import ApprovalAnswer, ApprovalRequest, Approver
from baton.sessions.permissions.events import ApprovalModeChangeEvent, ToolApprovalEvent, denial_line
from baton.sessions.permissions.gate import DECISION_ENTRY, Permissions
from baton.sessions.permissions.policy import APPROVAL_MODES, ApprovalMode, Decision, Policy
from baton.sessions.permissions.rules import Rule, RuleError, RuleSet, parse_rule

__all__ = [
    "APPROVAL_MODES",
    "DECISION_ENTRY",
    "ApprovalAnswer",
    "ApprovalMode",
    "ApprovalModeChangeEvent",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "Permissions",
    "Policy",
    "Rule",
    "RuleError",
    "RuleSet",
    "ToolApprovalEvent",
    "denial_line",
    "parse_rule",
]

"""Asking the user: what a front end is shown, and what it answers.

The TUI answers with its approval panel, the ACP mode with ``session/request_permission``; a
session without an approver (print and JSON modes) cannot ask, so whatever needs approval is
denied there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from baton.providers.json_types import JsonObject

ApprovalKind: TypeAlias = Literal["tool", "unsandboxed"]
"""``tool``: may this call run? ``unsandboxed``: the sandbox blocked it; run it again without?"""
AnswerKind: TypeAlias = Literal["allow_once", "allow_always", "deny", "abort"]


@dataclass(slots=True)
class ApprovalRequest:
    """One question for the user."""

    tool_call_id: str
    tool_name: str
    args: JsonObject
    summary: str
    """One line: ``bash(rm -rf build)``, ``edit(src/app.py)``."""
    proposed_rule: str | None
    """The narrowest allow rule "allow always" would save (None: nothing sensible to save)."""
    reason: str
    """Why this asks: "edits outside the workspace", "the sandbox blocked it", ..."""
    diff: str | None = None
    """For edit/write: the change as a unified diff."""
    kind: ApprovalKind = "tool"
    output: str | None = None
    """For ``unsandboxed``: the tail of what the sandboxed run printed."""


@dataclass(slots=True)
class ApprovalAnswer:
    """The user's answer. ``rule``: the (possibly edited) rule to save with ``allow_always``;
    ``reason``: what the model is told with ``deny``."""

    kind: AnswerKind
    rule: str | None = None
    reason: str | None = None
    extra: JsonObject = field(default_factory=dict)

    @property
    def allowed(self) -> bool:
        """Allow once or always."""
        return self.kind in ("allow_once", "allow_always")


Approver: TypeAlias = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
"""What a front end implements: ask, and answer when the user has decided."""

"""What a session cost, by model and by role, from its file's entries.

Roles: ``main`` (the session's own requests), ``subagent`` and ``advisor`` (requests made for a
tool call — a ``task`` or ``ask_model`` result whose details carry ``model`` and ``usage`` in the
message model's shape), ``tool`` for any other tool that reports them. Every branch counts: money
spent on an abandoned branch was spent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from baton.providers.messages import AssistantMessage, ToolResultMessage, Usage
from baton.sessions.entries import MessageEntry, SessionEntry

ROLE_OF_TOOL = {"task": "subagent", "ask_model": "advisor"}


@dataclass(slots=True)
class CostLine:
    """The requests of one model in one role."""

    model: str
    role: str
    requests: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def cache_hit_rate(self) -> float:
        """Share of prompt tokens served from cache, 0..1."""
        prompt = self.input + self.cache_read + self.cache_write
        return self.cache_read / prompt if prompt else 0.0

    def add(self, usage: Usage) -> None:
        """Count one request."""
        self.requests += 1
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += max(usage.cost.total, 0.0)


def cost_breakdown(entries: Iterable[SessionEntry]) -> list[CostLine]:
    """One line per (model, role), the costliest first."""
    lines: dict[tuple[str, str], CostLine] = {}

    def line(model: str, role: str) -> CostLine:
        return lines.setdefault((model, role), CostLine(model, role))

    for entry in entries:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, AssistantMessage):
            line(f"{message.provider}/{message.model}", "main").add(message.usage)
        elif isinstance(message, ToolResultMessage) and isinstance(message.details, Mapping):
            reported = _reported_usage(message.details)
            if reported is not None:
                model, usage = reported
                line(model, ROLE_OF_TOOL.get(message.tool_name, "tool")).add(usage)
    return sorted(lines.values(), key=lambda item: (-item.cost, item.model, item.role))


def _reported_usage(details: Mapping[object, object]) -> tuple[str, Usage] | None:
    model, usage = details.get("model"), details.get("usage")
    if not isinstance(model, str) or not isinstance(usage, Mapping):
        return None
    try:
        return model, Usage.model_validate(usage)
    except ValueError:
        return None

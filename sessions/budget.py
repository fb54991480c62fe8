"""A spending limit: the session stops before a request that would start past its budget.

Two limits may apply, the tighter one deciding: ``budget.sessionUsd`` counts everything the
session has cost (its file's requests included, when resumed) and ``--max-cost`` what this
process spends on it. Costs come from each response's usage priced by the catalog (cache reads
and writes included). A model without a price cannot be counted: the first such answer says so,
once. The stop is a request not sent: its error says why, the run ends, and the session stays
resumable (a larger budget goes on from there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.agent.messages import AgentMessage
from baton.providers.errors import BatonError
from baton.providers.messages import AssistantMessage

if TYPE_CHECKING:
    from baton.sessions.options import SessionOptions
    from baton.sessions.settings import Settings
    from baton.sessions.store import SessionStore

ContextHook = Callable[[list[AgentMessage], asyncio.Event], Awaitable[list[AgentMessage]]]

BUDGET_STOP = "Not sent: the session has spent ${spent:.4f}, its budget is ${limit:.2f} ({source}); raise it to go on"
"""The error of a request the budget stopped (no retry or failover phrase in it: nothing retries it)."""


class BudgetExceededError(BatonError):
    """A request was not sent because the budget is spent."""


@dataclass
class SessionBudget:
    """What the session may spend and what it has spent (see the module docstring)."""

    session_usd: float | None = None
    """``budget.sessionUsd``: the most the whole session may cost."""
    process_usd: float | None = None
    """``--max-cost``: the most this process may spend on the session."""
    spent_before: float = 0.0
    """What the session had cost when it was opened."""
    spent_now: float = 0.0
    """What this process has spent on it."""
    unpriced: str | None = None
    """The first model that answered without a price (its requests are not counted)."""

    @property
    def limited(self) -> bool:
        """Whether any limit applies."""
        return self.session_usd is not None or self.process_usd is not None

    def observe(self, message: AssistantMessage, priced: bool) -> str | None:
        """Count one answer's cost; returns a warning the first time an answer cannot be priced
        (``priced``: its model has prices in the catalog)."""
        self.spent_now += max(message.usage.cost.total, 0.0)
        used_tokens = message.usage.input + message.usage.output + message.usage.cache_read
        if priced or not used_tokens or self.unpriced is not None or not self.limited:
            return None
        self.unpriced = f"{message.provider}/{message.model}"
        return (f"{self.unpriced} has no price in the catalog: its requests are not counted against the budget "
                "(set its cost in models.json to count them)")

    def observe_result(self, details: object) -> None:
        """Count what a tool spent on models for its result (a subagent, the advisor: their
        details carry ``cost`` in US dollars)."""
        if isinstance(details, dict):
            cost = details.get("cost")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
                self.spent_now += float(cost)

    def check(self) -> None:
        """Raise :class:`BudgetExceededError` when a limit has been reached."""
        total = self.spent_before + self.spent_now
        if self.process_usd is not None and self.spent_now >= self.process_usd:
            raise BudgetExceededError(BUDGET_STOP.format(spent=self.spent_now, limit=self.process_usd,
                                                         source="--max-cost"))
        if self.session_usd is not None and total >= self.session_usd:
            raise BudgetExceededError(BUDGET_STOP.format(spent=total, limit=self.session_usd,
                                                         source="budget.sessionUsd"))


def open_budget(settings: Settings, options: SessionOptions, store: SessionStore) -> SessionBudget:
    """The budget of a session being opened (what its file already cost counts when
    ``budget.sessionUsd`` is set)."""
    session_usd = settings.budget.session_usd
    spent_before = 0.0
    if session_usd is not None:
        from baton.sessions.stats import session_stats

        spent_before = session_stats(store, None).cost
    return SessionBudget(session_usd=session_usd, process_usd=options.max_cost_usd, spent_before=spent_before)


def within_budget(budget: SessionBudget, inner: ContextHook) -> ContextHook:
    """The agent's ``transform_context``: ``inner``, after checking the budget (a request past it
    is not sent: its error ends the run)."""

    async def check_then(history: list[AgentMessage], signal: asyncio.Event) -> list[AgentMessage]:
        budget.check()
        return await inner(history, signal)

    return check_then

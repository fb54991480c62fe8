"""``/cost``: what the session cost, by model and by role, with cache hit rates. RPC: ``get_cost``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonValue
from baton.tui.actions.action import AcpCommand, Action, Report, RpcCommand

if TYPE_CHECKING:
    from baton.sessions import CodingSession
    from baton.sessions.cost_report import CostLine


async def session_costs(session: CodingSession, _: None) -> list[CostLine]:
    """Every (model, role) line of the session's cost."""
    from baton.sessions.cost_report import cost_breakdown  # the entries' models: loaded when asked

    return cost_breakdown(session.store.entries)


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def cost_report(lines: list[CostLine]) -> Report:
    """A small table: model, role, requests, tokens in/out, cache hit rate, cost."""
    if not lines:
        return Report("Nothing spent yet in this session.")
    total = sum(line.cost for line in lines)
    rows = [f"Session cost: ${total:.4f}"]
    for line in lines:
        rows.append(f"  {line.model} ({line.role}): {line.requests} requests · ↑{_tokens(line.input)} "
                    f"↓{_tokens(line.output)} · cache {line.cache_hit_rate:.0%} · ${line.cost:.4f}")
    budget_note = _budget_note(lines)
    if budget_note:
        rows.append(budget_note)
    return Report("\n".join(rows), title="Cost")


def _budget_note(lines: list[CostLine]) -> str | None:
    unpriced = [line.model for line in lines if line.cost == 0 and line.input + line.output > 0]
    return f"  no price known for: {', '.join(unpriced)}" if unpriced else None


def _reply(session: CodingSession, lines: list[CostLine]) -> JsonValue:
    return {
        "total": sum(line.cost for line in lines),
        "lines": [{"model": line.model, "role": line.role, "requests": line.requests, "input": line.input,
                   "output": line.output, "cacheRead": line.cache_read, "cacheWrite": line.cache_write,
                   "cacheHitRate": line.cache_hit_rate, "cost": line.cost} for line in lines],
    }


COST: Action[None, list[CostLine]] = Action(
    "cost", "/cost", "What the session cost, by model and role (main, subagents, advisor), with cache hit rates",
    parse=lambda session, text: None, run=session_costs, report=cost_report,
    rpc=RpcCommand("get_cost", parse=lambda session, command: None, reply=_reply),
    acp=AcpCommand(),
)

ACTIONS = (COST,)

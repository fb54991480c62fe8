"""``/agents``: the agents a ``task`` call may name (built-in, the project's, the user's), what
each runs on, and the model roles. RPC: ``get_agents``; ACP: the ``/agents`` command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject, JsonValue
from baton.tui.actions.action import AcpCommand, Action, Report, RpcCommand
from baton.tui.actions.text import shorten

if TYPE_CHECKING:
    from baton.sessions import CodingSession


@dataclass(frozen=True, slots=True)
class AgentLine:
    """One agent as listed."""

    name: str
    description: str
    source: str
    model: str
    """The spec (``inherit``, a role, ``provider/id``) and, after ``→``, what it resolves to now."""
    tools: str
    path: str | None


@dataclass(frozen=True, slots=True)
class AgentList:
    """Every agent, the roles, and the problems the agent files had."""

    agents: list[AgentLine]
    roles: list[str]
    warnings: list[str]


def _resolved(session: CodingSession, spec: str) -> str:
    from baton.sessions.roles import RoleError, resolve_model_spec

    try:
        model = resolve_model_spec(spec, session.settings, session.model, session.options.extra_models)
    except RoleError as exc:
        return f"{spec} (unusable: {exc})"
    return model.ref if spec.lower() == model.ref.lower() else f"{spec} → {model.ref}"


async def list_agents(session: CodingSession, _: None) -> AgentList:
    """The agents and roles of this session."""
    lines = [
        AgentLine(a.name, a.description, a.source, _resolved(session, a.model),
                  ", ".join(a.tools) if a.tools is not None else "the session's tools",
                  str(a.path) if a.path else None)
        for a in session.agents()
    ]
    runner = session.subagents
    warnings = list(runner.catalog.warnings) if runner is not None else ["subagents are off (subagents.maxDepth is 0)"]
    return AgentList(lines, [b.describe() for b in session.role_bindings()], warnings)


def agents_report(result: AgentList) -> Report:
    """One line per agent, then the roles and any problem."""
    lines = [f"{a.name} ({a.source}) · {a.model} · {a.tools} — {shorten(a.description, 100)}" for a in result.agents]
    lines.append("Roles: " + " · ".join(result.roles))
    lines += [f"! {w}" for w in result.warnings]
    return Report("\n".join(lines), "warning" if result.warnings else "info", title="Agents")


def _reply(session: CodingSession, result: AgentList) -> JsonValue:
    agents: list[JsonValue] = []
    for a in result.agents:
        item: JsonObject = {"name": a.name, "description": a.description, "source": a.source, "model": a.model,
                            "tools": a.tools}
        if a.path:
            item["path"] = a.path
        agents.append(item)
    roles: list[JsonValue] = list(result.roles)
    warnings: list[JsonValue] = list(result.warnings)
    return {"agents": agents, "roles": roles, "warnings": warnings}


AGENTS: Action[None, AgentList] = Action(
    "agents", "/agents", "List the subagents the task tool can start, and the model roles",
    parse=lambda session, text: None, run=list_agents, report=agents_report,
    rpc=RpcCommand("get_agents", parse=lambda session, command: None, reply=_reply),
    acp=AcpCommand(),
)
ACTIONS = (AGENTS,)

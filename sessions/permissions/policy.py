"""The permission policy: for one tool call, allow, ask or deny — and whether bash runs in the
sandbox. Pure: no I/O beyond resolving paths, no asking (see :mod:`.gate`).

Order: in ``plan`` mode a call that could change anything is refused first (see below); then a
deny rule wins; then hidden places (``$BATON_HOME``, credential stores: see
:mod:`baton.tools.hidden_paths`) and protected paths ask (every mode, ``full`` included, whatever
an allow rule says; a search whose folder holds a hidden place asks too); then ask rules; then
what a PreToolUse hook said; then allow rules; then the mode's default:

============================  ===========  =====================  ===========
call                          ``ask``      ``auto``               ``full``
============================  ===========  =====================  ===========
read/grep/find/ls inside      run          run                    run
read/... outside              ask          ask                    run
edit/write inside             ask          run                    run
edit/write outside            ask          ask                    run
bash                          ask          run in the sandbox     run
                                           (ask without one)
web_fetch (by its URL's host) ask          ask                    run
MCP and other tools           ask          ask                    run
============================  ===========  =====================  ===========

A web tool (one with a ``url_parameter``: ``web_fetch``) is judged by its URL's host:
``web_fetch(domain:docs.python.org)`` allows that host, ``web_fetch(domain:*.python.org)`` its
subdomains, a bare ``web_fetch`` every host. Whatever allows it, the tool itself refuses a host
that resolves to a loopback, private or link-local address unless an allow rule names that host
exactly (:mod:`baton.tools.web_address`).

"Inside" means the real path (symlinks resolved) lies in the workspace; reads may also go to the
temp dirs (where bash leaves its full output). Which tool is which comes from its traits
(:class:`baton.agent.tool.AgentTool`): a tool with a ``path_parameter`` is judged by the real path
of that argument, as a read (``read_only``: read, grep, find, ls) or as a change (edit, write); a
``search`` tool also asks when its folder holds a hidden place.

``plan`` mode is read-only, whatever rules and hooks say: only tools whose traits say they change
nothing (``read_only``: read, grep, find, ls, an MCP tool whose server marks it ``readOnlyHint``,
the session's own ``todo_write`` and ``exit_plan_mode``) may run, and they are then judged as in
``ask``. Everything else — edit, write, bash (a command is never proven read-only), other MCP
tools, tools no registry knows — is denied with a result saying why, even when the model calls a
tool it was not offered. A tool of kind ``think`` that is read-only changes only the session's own
state (the task list, the plan) and runs unasked in every mode.

An allow — by a rule of any source, a hook or the mode — means "don't ask", never "leave the
sandbox": every allowed bash command runs in the sandbox when there is one, except in ``full``
(the user's own choice). Only the user's answer for one command that the sandbox blocked runs it
outside (:mod:`.gate`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from baton.providers.json_types import JsonMapping
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.rules import (
    DOMAIN_PREFIX,
    MCP_PREFIX,
    McpIdentity,
    Rule,
    RuleSet,
    format_rule,
)
from baton.sessions.permissions.shell_parts import split_command
from baton.tools import tool_type
from baton.tools.hidden_paths import HiddenPaths, hidden_paths
from baton.tools.path_pins import path_argument
from baton.tools.web_address import url_host

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool

ApprovalMode: TypeAlias = Literal["plan", "ask", "auto", "full"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("plan", "ask", "auto", "full")
"""From the strictest to the loosest."""
PLAN: ApprovalMode = "plan"

Action: TypeAlias = Literal["allow", "ask", "deny"]
Source: TypeAlias = Literal["rule", "mode", "protected", "hook"]

BASH = "bash"
"""The tool whose commands run in the sandbox (its calls are judged by their command)."""


def strictness(mode: str) -> int:
    """The place of ``mode`` in :data:`APPROVAL_MODES` (0: ``plan``, the strictest); an unknown
    name counts as the loosest plus one, so it is never taken for a stricter mode."""
    return APPROVAL_MODES.index(mode) if mode in APPROVAL_MODES else len(APPROVAL_MODES)


def plan_refusal(tool: str, traits: type[AgentTool]) -> str | None:
    """Why plan mode refuses a call of ``tool`` (``None``: its traits say it changes nothing)."""
    if traits.read_only:  # bash is not: a command is never taken for read-only
        return None
    if traits.delegates:  # a subagent's own calls meet plan mode one by one: it can only read
        return None
    return (f"plan mode is read-only and {tool} can change things; it was not run. Keep to reading, then "
            "call exit_plan_mode with your plan: the user decides when the work starts")


@dataclass(slots=True)
class Decision:
    """What the policy says about one call."""

    action: Action
    source: Source
    reason: str
    summary: str
    """``bash(git status)``, ``edit(src/app.py)``: the call as a rule would name it."""
    rule: str | None = None
    """The rule that decided, when one did."""
    proposed_rule: str | None = None
    """The narrowest allow rule covering this call (for "allow always")."""
    sandbox: bool = False
    """bash only: run inside the sandbox."""
    path: str | None = None
    """File tools: the real path judged, which the tool must open and nothing else."""
    path_argument: str | None = None
    """File tools: the path argument that real path was resolved from (what the pin is keyed by)."""


@dataclass(slots=True)
class _Target:
    """A call reduced to what rules talk about: a command, a real path, or nothing; ``traits``
    is the class whose traits decide the rest (see :class:`baton.agent.tool.AgentTool`)."""

    tool: str
    traits: type[AgentTool]
    command: str | None = None
    path: str | None = None
    path_argument: str | None = None
    mcp: McpIdentity | None = None
    host: str | None = None
    """Web tools: the host of the URL (``""`` when the URL has none), which rules judge."""

    @property
    def reads(self) -> bool:
        """A read-only tool reading the file or folder at ``path``."""
        return self.path is not None and self.traits.read_only

    @property
    def writes(self) -> bool:
        """A tool changing the file at ``path``."""
        return self.path is not None and not self.traits.read_only


class _Made(Protocol):
    """Makes the :class:`Decision` for one call (:meth:`Policy.decide` builds one per call)."""

    def __call__(self, action: Action, source: Source, reason: str, rule: Rule | None = None) -> Decision: ...


class Policy:
    """Decides tool calls for one workspace, rule set and mode."""

    def __init__(
        self,
        workspace: Workspace,
        rules: RuleSet,
        mode: ApprovalMode = "auto",
        *,
        sandbox_available: bool = True,
        home: str | None = None,
        hidden: HiddenPaths | None = None,
    ) -> None:
        self.workspace = workspace
        self.rules = rules
        self.mode: ApprovalMode = mode
        self.sandbox_available = sandbox_available
        self.home = home
        self.hidden = hidden if hidden is not None else hidden_paths()
        self.mcp_identity: Callable[[str], McpIdentity | None] = lambda name: None
        """The server and tool an ``mcp__...`` tool name stands for (set by the session, which
        knows its MCP tools); without it the name is split at its first ``__``."""
        self.tool_type: Callable[[str], type[AgentTool]] = tool_type
        """The class whose traits stand for a tool name (the registry's, :func:`baton.tools.tool_type`)."""

    @property
    def sandboxes_bash(self) -> bool:
        """Whether bash commands run in the sandbox (there is one, and the mode is not ``full``)."""
        return self.sandbox_available and self.mode != "full"

    # ------------------------------------------------------------------ matching

    def _target(self, tool: str, args: JsonMapping, traits: type[AgentTool] | None = None) -> _Target:
        traits = traits or self.tool_type(tool)
        if tool.startswith(MCP_PREFIX):
            return _Target(tool, traits, mcp=self.mcp_identity(tool) or _split_mcp_name(tool))
        if tool == BASH:
            return _Target(tool, traits, command=str(args.get("command", "")))
        if traits.url_parameter is not None:
            return _Target(tool, traits, host=url_host(str(args.get(traits.url_parameter, ""))) or "")
        parameter = traits.path_parameter
        if parameter is not None:
            argument = path_argument(args.get(parameter.name))
            real = self.workspace.resolve(argument, must_exist=parameter.must_exist)
            return _Target(tool, traits, path=real, path_argument=argument)
        return _Target(tool, traits)

    def _first_match(self, kind: Literal["allow", "deny", "ask"], target: _Target) -> Rule | None:
        """The rule of ``kind`` that decides ``target`` (for a compound command allowed by several
        rules, a rule naming them all)."""
        if target.mcp is not None:
            found = self.rules.for_mcp(kind, target.mcp)
            return found[0] if found else None
        if target.host is not None:
            return self.rules.for_host(kind, target.tool, target.host)
        matcher = self.rules.matcher(kind, target.tool, self.workspace.root, self.home)
        if not matcher.rules:
            return None
        if target.command is not None:
            found = matcher.match_command(target.command, split_command(target.command), every=kind == "allow")
            if len(found) > 1:
                return Rule(BASH, None, " + ".join(str(r) for r in found))
            return found[0] if found else None
        return matcher.match_path(target.path, self.workspace.root, self.home)

    def match(self, kind: Literal["allow", "deny", "ask"], tool: str, args: JsonMapping) -> Rule | None:
        """The ``kind`` rule matching this call, if any."""
        return self._first_match(kind, self._target(tool, args))

    # ------------------------------------------------------------------ deciding

    def decide(
        self, tool: str, args: JsonMapping, hint: str | None = None, *, traits: type[AgentTool] | None = None
    ) -> Decision:
        """The decision for calling ``tool`` with ``args`` (``hint``: a hook's allow/ask;
        ``traits``: the class of the tool that will run, else :attr:`tool_type`'s for the name)."""
        target = self._target(tool, args, traits)
        shown = self.workspace.display(target.path) if target.path is not None else None
        summary = self._summary(target, shown)
        proposed = self._proposal(target, shown)

        def made(action: Action, source: Source, reason: str, rule: Rule | None = None) -> Decision:
            sandbox = action == "allow" and target.command is not None and self.sandboxes_bash
            return Decision(action, source, reason, summary, str(rule) if rule else None, proposed, sandbox,
                            target.path, target.path_argument)

        if self.mode == PLAN:
            refusal = plan_refusal(tool, target.traits)
            if refusal is not None:
                return made("deny", "mode", refusal)
        deny = self._first_match("deny", target)
        if deny is not None:
            return made("deny", "rule", f"denied by the rule {deny}", deny)
        hidden = self._hidden(target)
        if hidden is not None:
            return made("ask", "protected", hidden)
        protected = self._protected(target)
        if protected is not None:
            return made("ask", "protected", f"touches {protected}, which is always protected")
        ask = self._first_match("ask", target)
        if ask is not None:
            return made("ask", "rule", f"the rule {ask} says to ask", ask)
        if hint == "ask":
            return made("ask", "hook", "a PreToolUse hook asked for approval")
        if hint == "allow":
            return made("allow", "hook", "allowed by a PreToolUse hook")
        allow = self._first_match("allow", target)
        if allow is not None:
            return made("allow", "rule", f"allowed by the rule {allow}", allow)
        return self._by_mode(target, made)

    def _by_mode(self, target: _Target, made: _Made) -> Decision:
        mode = self.mode
        tool = target.tool
        if mode == "full":
            return made("allow", "mode", "approval mode full")
        if target.traits.read_only and target.traits.kind == "think" and target.mcp is None and target.path is None:
            return made("allow", "mode", "changes only the session's own state")
        if target.traits.session_only and target.mcp is None:
            return made("allow", "mode", "reaches only what this session started")
        if target.command is not None:
            if mode == "auto" and self.sandbox_available:
                return made("allow", "mode", "runs in the sandbox")
            if mode == "auto":
                return made("ask", "mode", "the sandbox is unavailable, so commands ask")
            return made("ask", "mode", "approval mode ask: every command asks")
        if target.host is not None:
            return made("ask", "mode", f"no rule allows fetching from {target.host or 'this URL'}")
        if target.reads and target.path is not None:
            if self.workspace.readable(target.path):
                return made("allow", "mode", "reads inside the workspace")
            return made("ask", "mode", "reads outside the workspace")
        if target.writes and target.path is not None:
            inside = self.workspace.contains(target.path)
            if inside and mode == "auto":
                return made("allow", "mode", "changes inside the workspace")
            where = "inside" if inside else "outside"
            return made("ask", "mode", f"changes a file {where} the workspace")
        if target.traits.delegates:
            return made("allow", "mode", f"{tool} only starts calls that are judged one by one")
        if target.traits.consults_configured_model:
            return made("allow", "mode", f"{tool} only asks the model you configured for it")
        if target.traits.kind == "fetch":
            return made("ask", "mode", f"{tool} reaches the network and no rule allows it")
        if target.traits.read_only:
            return made("ask", "mode", f"{tool} reads from outside the workspace (a server or another place)")
        return made("ask", "mode", f"{tool} is not known to be read-only")

    def _hidden(self, target: _Target) -> str | None:
        """Why a file tool's call touches a hidden place (None when it does not)."""
        if target.path is None:
            return None
        place = self.hidden.match(target.path)
        if place is not None:
            return f"touches {self.workspace.display(place)}, which holds credentials and is hidden from the agent"
        if target.traits.kind == "search":  # reads what lies below its folder, hidden places included
            below = self.hidden.below(target.path)
            if below is not None:
                shown = self.workspace.display(below)
                return f"would search {shown}, which holds credentials and is hidden from the agent"
        return None

    def _protected(self, target: _Target) -> str | None:
        if target.writes and target.path is not None:
            place = self.workspace.protected_match(target.path)
            return self.workspace.display(place) if place else None
        if target.command is not None:
            return self.workspace.mentions_protected(target.command)
        return None

    def _summary(self, target: _Target, shown: str | None) -> str:
        if target.mcp is not None:
            return _mcp_rule_text(target.mcp)
        if target.command is not None:
            return format_rule(BASH, target.command)
        if target.host:
            return format_rule(target.tool, f"{DOMAIN_PREFIX}{target.host}")
        if target.path is not None and shown is not None:
            return format_rule(target.tool, shown)
        return target.tool

    def _proposal(self, target: _Target, shown: str | None) -> str | None:
        if target.mcp is not None:
            return _mcp_rule_text(target.mcp)
        if target.command is not None:
            return format_rule(BASH, " ".join(target.command.split())) if target.command.strip() else None
        if target.host is not None:
            return format_rule(target.tool, f"{DOMAIN_PREFIX}{target.host}") if target.host else None
        if target.path is not None and shown is not None:
            if target.reads:
                return format_rule(target.tool, _dir_glob(shown, target.path))
            return format_rule(target.tool, shown)
        return target.tool


def _dir_glob(shown: str, real: str) -> str:
    """A read of one file proposes its directory (``/etc/**``); a directory itself likewise."""
    import os

    base = shown if os.path.isdir(real) else os.path.dirname(shown)
    return f"{base.rstrip('/')}/**" if base else "**"


def _split_mcp_name(name: str) -> McpIdentity:
    """``mcp__server__tool`` split at its first ``__`` after the prefix."""
    server, _, tool = name[len(MCP_PREFIX):].partition("__")
    return McpIdentity(server, tool)


def _mcp_rule_text(identity: McpIdentity) -> str:
    """``mcp__server__tool``: the rule naming exactly this tool (never a truncated tool name)."""
    import re

    def clean(part: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]", "_", part)

    return f"{MCP_PREFIX}{clean(identity.server)}__{clean(identity.tool)}"


def mcp_identity_lookup(tools: Callable[[], Iterable[AgentTool]]) -> Callable[[str], McpIdentity | None]:
    """The :attr:`Policy.mcp_identity` of a session whose tools ``tools()`` lists: an MCP tool
    knows its server connection and the server's own name for it."""

    def lookup(name: str) -> McpIdentity | None:
        for tool in tools():
            if tool.name == name:
                connection, server_tool = getattr(tool, "connection", None), getattr(tool, "server_tool", None)
                if connection is not None and server_tool is not None:
                    return McpIdentity(str(connection.name), str(server_tool.name))
        return None

    return lookup

"""Wiring the permission policy into a coding session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonArray, JsonMapping, JsonSequence
from baton.sessions.permissions.gate import DECISION_ENTRY, Permissions
from baton.sessions.permissions.paths import Workspace
from baton.sessions.permissions.persist import keep_trust_with_rule
from baton.sessions.permissions.policy import APPROVAL_MODES, ApprovalMode, Policy, mcp_identity_lookup, strictness
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.web_access import PolicyWebAccess
from baton.sessions.settings import Settings
from baton.tools.bash import BashTool
from baton.tools.hidden_paths import HiddenPaths, hidden_paths
from baton.tools.sandbox import Sandbox, SandboxStatus, probe

if TYPE_CHECKING:
    from baton.sessions.extension_host import SessionHost
    from baton.sessions.store import SessionStore

MODE_ENTRY = "approval_mode"
"""``custom_type`` of the session entries recording a change of approval mode (``{"mode": ...}``)."""

def effective_mode(settings: Settings, override: str | None = None) -> ApprovalMode:
    """The mode to start in: ``override`` (``--approval``) when given, else the setting.

    A project's ``.baton/settings.json`` can make the mode stricter but never looser, trusted or
    not (:mod:`baton.sessions.setting_trust`): ``full`` comes only from the user."""
    if override is None:
        return settings.approval
    chosen = next((mode for mode in APPROVAL_MODES if mode == override), None)
    if chosen is None:
        raise ValueError(f"unknown approval mode {override!r}: use plan, ask, auto or full")
    return chosen


def recorded_mode(store: SessionStore) -> ApprovalMode | None:
    """The last approval mode the current branch of ``store`` records (``None``: none)."""
    for entry in reversed(store.branch_path()):
        if getattr(entry, "custom_type", None) == MODE_ENTRY:
            data = getattr(entry, "data", None)
            mode = data.get("mode") if isinstance(data, dict) else None
            return next((m for m in APPROVAL_MODES if m == mode), None)
    return None


def resumed_mode(start: ApprovalMode, store: SessionStore, override: str | None) -> ApprovalMode:
    """The mode a resumed session starts in: the one its file last recorded when that is
    stricter than ``start`` (a session file is history, never authority: it can put a session
    back in plan mode, never loosen what the settings say); ``--approval`` always wins."""
    if override is not None:
        return start
    recorded = recorded_mode(store)
    return recorded if recorded is not None and strictness(recorded) < strictness(start) else start


def sandbox_wanted(settings: Settings) -> tuple[bool, bool]:
    """``(enabled, network)``; a project's settings may turn the sandbox on or the network off,
    never the reverse (:mod:`baton.sessions.setting_trust`)."""
    return settings.sandbox.enabled, settings.sandbox.network


def hidden_places(settings: Settings) -> tuple[HiddenPaths, list[str]]:
    """What the sandbox hides and file tools never read unasked: the defaults, changed by the
    user's ``sandbox.hiddenPaths`` (``"!path"`` removes one), plus what the project's adds; and a
    warning for each removal a project tried."""
    project = _hidden_entries(settings.project_data)
    # The merged value is the user's own unless the project set the list (then it replaced it).
    own: JsonSequence = (_hidden_entries(settings.global_data) or []) if project is not None \
        else settings.sandbox.hidden_paths
    added: list[str] = []
    removed: list[str] = []
    problems: list[str] = []
    for entries, is_own in ((own, True), (project or [], False)):
        for entry in (e.strip() for e in entries if isinstance(e, str)):
            if not entry.lstrip("!").strip():
                continue
            if not entry.startswith("!"):
                added.append(entry)
            elif is_own:
                removed.append(entry[1:].strip())
            else:
                problems.append(f"ignored the project's sandbox.hiddenPaths entry {entry!r}: only your own "
                                "settings can unhide a place")
    return hidden_paths(added, removed), problems


def _hidden_entries(data: JsonMapping) -> JsonArray | None:
    section = data.get("sandbox")
    if not isinstance(section, dict):
        return None
    entries = section.get("hiddenPaths", section.get("hidden_paths"))
    return entries if isinstance(entries, list) else None


def install_permissions(session: SessionHost, mode: str | None = None) -> Permissions:
    """Build the session's :class:`Permissions`, register its gates and hook it into bash."""
    settings = session.settings
    approval = resumed_mode(effective_mode(settings, mode), session.store, mode)
    rules = RuleSet.parse(settings.permissions.allow, settings.permissions.deny, settings.permissions.ask)
    enabled, network = sandbox_wanted(settings)
    status = SandboxStatus(False, "the sandbox is turned off (sandbox.enabled: false)")
    if enabled:
        status = probe()
    workspace = Workspace.for_dir(str(session.cwd))
    hidden, hidden_problems = hidden_places(settings)
    sandbox = None
    if status.available:
        sandbox = Sandbox(str(session.cwd), network=network, hidden=hidden, bwrap=status.bwrap or "bwrap",
                          socket_filter=status.socket_filter)
    policy = Policy(workspace, rules, approval, sandbox_available=sandbox is not None, hidden=hidden)
    if settings.project_trusted and settings.project_trust is not None:
        protect_pinned_scripts(policy, sandbox, settings.project_trust.pinned_paths())
    policy.mcp_identity = mcp_identity_lookup(lambda: list(session.agent.tools))
    permissions = Permissions(
        policy,
        sandbox=sandbox,
        sandbox_status=status,
        project_dir=session.cwd,
        hints=session.permission_hints,
        events=session.events,
        record=lambda data: session.store.append_custom(DECISION_ENTRY, data),
        tools=lambda: list(session.agent.tools),
        abort=session.abort,
        record_mode=lambda chosen: session.store.append_custom(MODE_ENTRY, {"mode": chosen}),
    )
    permissions.warnings.extend(rules.problems)
    permissions.on_rule_saved = lambda rule: keep_trust_with_rule(session.cwd, session.settings, rule)
    permissions.warnings.extend(hidden_problems)
    if sandbox is not None and status.warning:
        permissions.warnings.append(status.warning)
    if sandbox is None and approval == "auto":
        permissions.warnings.append(f"no sandbox: {status.reason}; bash commands will ask for approval")
    recorded = recorded_mode(session.store)
    if recorded != approval and (recorded is not None or approval == "plan"):  # so `baton -c` comes back in it
        session.store.append_custom(MODE_ENTRY, {"mode": approval})
    session.tool_gates.add_before("permissions", permissions.before)
    session.tool_gates.add_after("permissions", permissions.after)
    for tool in session.agent.tools:
        if isinstance(tool, BashTool):
            tool.command_launcher = permissions.launch_command
        url_parameter = type(tool).url_parameter
        if url_parameter is not None and hasattr(tool, "access"):  # web tools: which hosts the rules name
            tool.access = PolicyWebAccess(policy, tool.name, url_parameter)
        if hasattr(tool, "pins"):  # file tools open the path the policy judged, not a new resolution
            tool.pins = permissions.pins
    return permissions


def protect_pinned_scripts(policy: Policy, sandbox: Sandbox | None, paths: list[str]) -> None:
    """Keep the workspace scripts a trusted hook or server runs out of the model's reach: the
    sandbox mounts them read-only (so a command cannot swap one between its pin check and its
    start outside the sandbox) and a file tool's write to one always asks."""
    if not paths:
        return
    policy.workspace = policy.workspace.protecting(paths)
    if sandbox is not None:
        sandbox.read_only.extend(p for p in paths if p not in sandbox.read_only)

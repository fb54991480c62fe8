"""Opening a session: what it is built from, and the settings that apply when the project is trusted.

:func:`read_parts` reads everything a :class:`~sessions.coding_session.CodingSession` starts with —
the branch in the session file, the model and thinking level, the tools, the context files and
prompt library, the system prompt — and the per-session state its commands run with: the
environment pass list (``bash.passEnv``) and the process-slot limit (``tools.maxProcesses``).
Each session has its own; nothing of one session's settings is written into the process, so a
process hosting several sessions (ACP) keeps each one's rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic.alias_generators import to_snake

from baton.agent.messages import AgentMessage
from baton.agent.tool import AgentTool
from baton.providers.models import Model, ThinkingLevel, clamp_thinking_level
from baton.sessions.context_files import ContextFile, load_append_system_md, load_context_files, load_system_md
from baton.sessions.models import parse_thinking_level
from baton.sessions.options import SessionOptions, read_text_or_file
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.setup import protect_pinned_scripts
from baton.sessions.plan_mode import planning_tool_names
from baton.sessions.prompt_commands import PromptCommands
from baton.sessions.resume import resolve_model
from baton.sessions.settings import Settings
from baton.sessions.skills import skills_prompt_section
from baton.sessions.store import SessionStore
from baton.sessions.system_prompt import build_system_prompt
from baton.sessions.web_search import default_tool_names
from baton.tools import with_companions
from baton.tools.background import BackgroundProcesses
from baton.tools.bash import BashTool
from baton.tools.bash_output import BashOutputTool
from baton.tools.kill_shell import KillShellTool
from baton.tools.process_slots import ProcessSlots
from baton.tools.tool_env import ToolEnvironment

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

AT_START_ONLY = ("default_model", "checkpoints", "mcp")
"""Project settings a session reads only as it opens: trusted later, they apply from the next start."""


@dataclass(frozen=True, slots=True)
class SessionParts:
    """What a session is built from (see :func:`read_parts`)."""

    options: SessionOptions
    settings: Settings
    store: SessionStore
    cwd: Path
    session_dir: Path
    model: Model
    thinking: ThinkingLevel
    """The level in effect (clamped to the model)."""
    requested_thinking: ThinkingLevel
    """The level asked for, before clamping to what the model supports."""
    messages: list[AgentMessage]
    tool_names: list[str]
    tools: list[AgentTool]
    system_prompt: str
    context_files: list[ContextFile]
    prompt_library: PromptCommands
    tool_env: ToolEnvironment
    """The environment this session's commands, hooks and servers start in."""
    process_slots: ProcessSlots
    """How many of this session's commands may run at once."""
    background: BackgroundProcesses
    """This session's background commands (shared by bash, bash_output and kill_shell)."""


def read_parts(
    options: SessionOptions, settings: Settings, store: SessionStore, cwd: Path, session_dir: Path
) -> SessionParts:
    """Read what a session opened with ``options`` on ``store`` starts with."""
    ctx = store.build_context()
    model = options.model or resolve_model(ctx.model, settings, options.extra_models)
    requested: ThinkingLevel = (
        options.thinking or parse_thinking_level(ctx.thinking_level) or settings.default_thinking_level or "off"
    )
    tool_env = ToolEnvironment(settings.bash.pass_env)
    slots = ProcessSlots(settings.tools.max_processes)
    background = BackgroundProcesses(settings.tools.max_background)
    tool_names = with_companions(default_tool_names() if options.tools is None else list(options.tools))
    if options.tools is None and settings.models.advisor:
        tool_names.append("ask_model")  # a second opinion, only where an advisor is configured
    tools = _make_tools([*tool_names, *planning_tool_names(tool_names)], cwd, tool_env, slots, background)
    refused: list[str] = []  # project files not read (symlinked out, FIFOs, devices): one line each
    library = PromptCommands.load(cwd) if options.prompt_commands else PromptCommands([], [], [])
    offered = [t for t in tools if t.name in tool_names]  # plan mode's extra tools are not in the prompt
    prompt, files = build_session_prompt(options, cwd, offered, library, refused)
    library.warnings[:0] = refused  # the library's warnings are the prompt's files' warnings
    return SessionParts(
        options=options, settings=settings, store=store, cwd=cwd, session_dir=session_dir,
        model=model, thinking=clamp_thinking_level(model, requested), requested_thinking=requested,
        messages=ctx.messages, tool_names=tool_names, tools=tools, system_prompt=prompt,
        context_files=files, prompt_library=library, tool_env=tool_env, process_slots=slots,
        background=background,
    )


def _make_tools(names: list[str], cwd: Path, environment: ToolEnvironment, slots: ProcessSlots,
                background: BackgroundProcesses) -> list[AgentTool]:
    """The tools named, bash running its commands with the session's environment and slots, and
    the background tools sharing the session's background commands."""
    if not names:
        return []
    from baton.tools import tools_by_name

    tools = list(tools_by_name(names, str(cwd)))
    for tool in tools:
        if isinstance(tool, BashTool):
            tool.environment, tool.slots = environment, slots
        if isinstance(tool, BashTool | BashOutputTool | KillShellTool):
            tool.background = background
    return tools


def build_session_prompt(options: SessionOptions, cwd: Path, tools: list[AgentTool], library: PromptCommands,
                         refused: list[str]) -> tuple[str, list[ContextFile]]:
    """The system prompt a session in ``cwd`` gets (context files read now) and those files;
    files not read add a line each to ``refused``."""
    files = load_context_files(cwd, warnings=refused) if options.context_files else []
    custom = read_text_or_file(options.system_prompt) or load_system_md(cwd, warnings=refused)
    appends = [a for a in (load_append_system_md(cwd, warnings=refused),
                           read_text_or_file(options.append_system_prompt)) if a]
    prompt = build_system_prompt(
        cwd=cwd,
        tools=[t.name for t in tools],
        tool_descriptions={t.name: t.description for t in tools},
        custom_prompt=custom,
        append="\n\n".join(appends) or None,
        context_files=files,
        skills_section=skills_prompt_section(library.skills),
    )
    return prompt, files


def adopt_trusted_settings(session: CodingSession) -> None:
    """The user trusted the project: the settings that waited apply to ``session`` from now —
    its allow rules, its pass list and process limit (those read only at start-up from the next
    start, which a notice says)."""
    held = session.settings.held
    session.settings = session.settings.with_trust()
    trust = session.settings.project_trust
    if trust is not None:
        protect_pinned_scripts(session.permissions.policy, session.permissions.sandbox, trust.pinned_paths())
    section = held.get("permissions")
    allow = section.get("allow") if isinstance(section, dict) else None
    rules = RuleSet.parse([a for a in allow if isinstance(a, str)] if isinstance(allow, list) else [])
    for rule in rules.allow:
        session.permissions.policy.rules.add("allow", rule)
    session.permissions.warnings.extend(rules.problems)
    session.tool_env.pass_env = frozenset(session.settings.bash.pass_env)
    session.process_slots.set_limit(session.settings.tools.max_processes)
    if session.subagents is not None:
        session.subagents.reload()  # the project's agents are read now
    session.background.registry.set_limit(session.settings.tools.max_background)
    later = [key for key in held if to_snake(key) in AT_START_ONLY]
    if later:
        session.events.notice("trust", "info", f"{', '.join(later)} from the project apply from the next start")

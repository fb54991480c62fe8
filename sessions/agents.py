"""Agent definitions for subagents, in Claude Code's format.

An agent is a Markdown file with YAML front matter — ``name``, ``description``, ``tools`` (a
comma-separated list or a YAML list, Claude Code's names or baton's; absent: every tool the
session has) and ``model`` (``provider/id``, a role, a Claude Code alias or ``inherit``, see
:mod:`sessions.roles`) — whose body is the subagent's system prompt. They are found in the
project's ``.baton/agents/`` and ``.claude/agents/``, then ``$BATON_HOME/agents/`` and
``~/.claude/agents/``; the first of a name wins, and a later one is a warning. Two are built in:
``explore`` (read-only tools, the ``fast`` role) and ``general`` (the session's tools, its model).

A project's agents come from the repository, so they are text and nothing more:

- they are read as project files are (:mod:`baton.tools.project_files`: not through a symlink
  leading out of the project, bounded, regular files only) and, while the project waits for the
  user's trust, not loaded at all;
- their tools never go beyond the session's (:func:`allowed_tools`); every call still meets the
  permission policy and the sandbox;
- their ``model`` may only be ``inherit`` or a role: the roles are the user's settings, so a
  repository cannot send the conversation to a provider of its choosing. Another name is
  reported and the agent runs on the calling agent's model.

Tools an agent names that baton does not have are reported once, in :attr:`AgentCatalog.warnings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from baton.providers.paths import baton_home
from baton.sessions.frontmatter import read_front_matter_file
from baton.sessions.roles import INHERIT, ROLES
from baton.tools.project_files import ProjectFiles

AgentSource: TypeAlias = Literal["built-in", "project", "user"]
MAX_AGENT_BYTES = 256 * 1024
MAX_DESCRIPTION_CHARS = 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

EXPLORE_PROMPT = (
    "You are the explore subagent: a fast, read-only researcher. Search and read the code to "
    "answer the task you were given; you cannot change anything. Be thorough but brief: end "
    "with a concise report of what you found, naming files and line numbers."
)
GENERAL_PROMPT = (
    "You are a general-purpose subagent. Carry out the task you were given with the tools you "
    "have, then end with a concise report of what you did and found: it is the only thing the "
    "caller will read."
)


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One agent a ``task`` call may name."""

    name: str
    description: str
    prompt: str
    """The system prompt's own text (the body of the file)."""
    tools: tuple[str, ...] | None
    """baton tool names; ``None``: every tool the session has."""
    model: str
    """``inherit``, a role or ``provider/id`` (see :mod:`sessions.roles`)."""
    source: AgentSource
    path: Path | None = None
    read_only: bool = False
    """Built-in ``explore``: only read-only tools, whatever the session has."""


BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (
    AgentDefinition("general", "General-purpose agent for multi-step tasks: research, changes, reviews "
                    "(the session's tools and model)", GENERAL_PROMPT, None, INHERIT, "built-in"),
    AgentDefinition("explore", "Fast read-only agent for finding files, searching code and answering "
                    "questions about the codebase (the fast role's model)", EXPLORE_PROMPT,
                    ("read", "grep", "find", "ls"), "fast", "built-in", read_only=True),
)


@dataclass(slots=True)
class AgentCatalog:
    """The agents of one working directory, built-ins first; problems one line each."""

    agents: dict[str, AgentDefinition]
    warnings: list[str] = field(default_factory=list)
    held: int = 0
    """Project agents not loaded because the project waits for the user's trust."""

    def get(self, name: str | None) -> AgentDefinition | None:
        """The agent ``name`` (case-insensitive; ``None``/empty: ``general``)."""
        wanted = (name or "general").strip().lower()
        return next((a for key, a in self.agents.items() if key.lower() == wanted), None)

    def summary(self) -> str:
        """One line per agent for the ``task`` tool's description: ``- explore: ...``."""
        return "\n".join(f"- {a.name}: {a.description}" for a in self.agents.values())


def agent_dirs(cwd: Path, home: Path | None = None) -> list[tuple[Path, AgentSource]]:
    """Where agent files are looked for, in precedence order."""
    user_home = home or Path.home()
    return [
        (cwd / ".baton" / "agents", "project"),
        (cwd / ".claude" / "agents", "project"),
        (baton_home() / "agents", "user"),
        (user_home / ".claude" / "agents", "user"),
    ]


def load_agents(cwd: Path, *, project_trusted: bool = True, home: Path | None = None) -> AgentCatalog:
    """The built-in agents and those found for ``cwd`` (never raises). With ``project_trusted``
    false the project's own agent files are counted in :attr:`AgentCatalog.held`, not read."""
    catalog = AgentCatalog({a.name: a for a in BUILTIN_AGENTS})
    files = ProjectFiles.for_dir(cwd, home=home)
    seen: set[Path] = set()
    for folder, source in agent_dirs(cwd, home):
        for path in _markdown_files(folder):
            try:
                real = path.resolve()
            except OSError:
                continue
            if real in seen:
                continue
            seen.add(real)
            if source == "project" and not files.is_users(path) and not project_trusted:
                catalog.held += 1
                continue
            agent = _read_agent(path, source, catalog.warnings, files)
            if agent is None:
                continue
            if agent.name.lower() in (k.lower() for k in catalog.agents):
                other = catalog.get(agent.name)
                where = other.path if other is not None and other.path else "baton (built in)"
                catalog.warnings.append(f"agent '{agent.name}' in {path} ignored: already defined in {where}")
                continue
            catalog.agents[agent.name] = agent
    if catalog.held:
        catalog.warnings.append(
            f"{catalog.held} project agent file(s) not loaded: the project waits for your trust")
    return catalog


def _markdown_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and not p.name.startswith("."))
    except OSError:
        return []


def _read_agent(path: Path, source: AgentSource, warnings: list[str], files: ProjectFiles) -> AgentDefinition | None:
    doc = read_front_matter_file(path, MAX_AGENT_BYTES, "agent", warnings, files if source == "project" else None)
    if doc is None:
        return None
    name = doc.meta.get("name", path.stem)
    description = doc.meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        warnings.append(f"agent {path} ignored: 'name' must be letters, digits, '-', '_' or '.' (at most 64)")
        return None
    if not isinstance(description, str) or not description.strip():
        warnings.append(f"agent {path} ignored: front matter needs a 'description'")
        return None
    tools = _tool_names(doc.meta.get("tools"), path, warnings)
    model = _model(doc.meta.get("model"), source, path, warnings)
    body = doc.body.strip()
    return AgentDefinition(name.strip(), " ".join(description.split())[:MAX_DESCRIPTION_CHARS], body, tools,
                           model, source, path)


def _model(value: object, source: AgentSource, path: Path, warnings: list[str]) -> str:
    if value is None:
        return INHERIT
    text = str(value).strip()
    if not text:
        return INHERIT
    if source == "project" and text.lower() not in (INHERIT, *ROLES):
        warnings.append(f"agent {path}: model {text!r} ignored: a project's agent may only name a role "
                        f"({', '.join(ROLES)}) or inherit; it runs on the caller's model")
        return INHERIT
    return text


def _tool_names(value: object, path: Path, warnings: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    items: Sequence[object]
    if isinstance(value, str):
        items = [part for part in value.split(",")]
    elif isinstance(value, list):
        items = value
    else:
        warnings.append(f"agent {path}: 'tools' must be a list or a comma-separated string; no tools given")
        return ()
    names: list[str] = []
    unknown: list[str] = []
    for item in items:
        text = str(item).strip()
        if not text:
            continue
        name = baton_tool_name(text)
        if name is None:
            unknown.append(text)
        elif name not in names:
            names.append(name)
    if unknown:
        warnings.append(f"agent {path}: unknown tool(s) ignored: {', '.join(sorted(set(unknown)))}")
    return tuple(names)


def baton_tool_name(name: str) -> str | None:
    """baton's name for a tool named the baton way (``read``) or Claude Code's (``Read``,
    ``Glob``); ``None`` when no registered tool answers to it."""
    from baton.tools import TOOL_MODULES, tool_class

    lowered = name.strip().lower()
    if lowered in TOOL_MODULES:
        return lowered
    for key in TOOL_MODULES:
        cc = tool_class(key).claude_code_name
        if cc is not None and cc.lower() == lowered:
            return key
    return None


def allowed_tools(agent: AgentDefinition, session_tools: Iterable[str], *, can_delegate: bool) -> list[str]:
    """The tools a subagent of ``agent`` gets: the ones it names (all when it names none) among
    the session's tools, plus the read-only built-ins it names (reading never widens what can
    change; the permission policy still judges every path); ``task`` only with ``can_delegate``.
    ``explore`` keeps only read-only tools."""
    from baton.tools import TOOL_MODULES, tool_class

    have = [t for t in session_tools if t in TOOL_MODULES]
    wanted = list(agent.tools) if agent.tools is not None else have
    out: list[str] = []
    for name in wanted:
        if name not in TOOL_MODULES:
            continue
        read_only = tool_class(name).read_only
        if agent.read_only and not read_only:
            continue
        if name == "task" and not can_delegate:
            continue
        if (name in have or read_only) and name not in out:
            out.append(name)
    return out

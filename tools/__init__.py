"""The coding tools: read, bash, edit, write (the default set) and grep, find, ls.

Every tool is an :class:`agent.tool.AgentTool` bound to a working directory: paths are relative to
it, ``~`` expands, a leading ``@`` is dropped. ``content`` is what the model reads, ``details``
what the UI renders (each tool module documents its details; ``tools/details.py`` has the typed
views). Each tool class declares what the rest of baton needs to know about it (name, prompt
summary, details view, kind, path parameter, read-only, Claude Code's name, the title of a call);
:data:`TOOL_MODULES` is the one registry every name list and every lookup by name derives from,
and the classes are imported on first use. Adding a tool: docs/architecture.md, "Adding a tool".
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import TYPE_CHECKING

from baton.providers.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool, ToolKind
    from baton.tools.bash import BashTool
    from baton.tools.edit import EditTool
    from baton.tools.find import FindTool
    from baton.tools.grep import GrepTool
    from baton.tools.ls import LsTool
    from baton.tools.read import ReadTool
    from baton.tools.sanitize import strip_control_sequences
    from baton.tools.write import WriteTool

TOOL_MODULES: dict[str, tuple[str, str]] = {
    "read": ("baton.tools.read", "ReadTool"),
    "bash": ("baton.tools.bash", "BashTool"),
    "edit": ("baton.tools.edit", "EditTool"),
    "write": ("baton.tools.write", "WriteTool"),
    "grep": ("baton.tools.grep", "GrepTool"),
    "find": ("baton.tools.find", "FindTool"),
    "ls": ("baton.tools.ls", "LsTool"),
    "web_fetch": ("baton.tools.web_fetch", "WebFetchTool"),
    "web_search": ("baton.tools.web_search", "WebSearchTool"),
    "task": ("baton.tools.task", "TaskTool"),
    "ask_model": ("baton.tools.ask_model", "AskModelTool"),
    "todo_write": ("baton.tools.todo_write", "TodoWriteTool"),
    "exit_plan_mode": ("baton.tools.exit_plan_mode", "ExitPlanModeTool"),
    "bash_output": ("baton.tools.bash_output", "BashOutputTool"),
    "kill_shell": ("baton.tools.kill_shell", "KillShellTool"),
}
"""The registry: every tool baton makes by name -> (module, class), in the order the system
prompt lists them. A tool is registered by one line here."""
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_MODULES)
"""The built-in tools."""
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "web_fetch", "task", "todo_write")
"""The tools a session has unless told otherwise."""
COMPANIONS: dict[str, tuple[str, ...]] = {"bash": ("bash_output", "kill_shell")}
"""Tools that come with another: a session with bash can read and end its background commands."""

MCP_PREFIX = "mcp__"

# Imported on first use: the package is entered by light modules too (the UI's text cleaning
# imports ``baton.tools.sanitize``), which must not pay for every tool and the agent runtime.
_LAZY = {cls: module for module, cls in TOOL_MODULES.values()} | {"strip_control_sequences": "baton.tools.sanitize"}


__getattr__ = lazy_exports(__name__, globals(), _LAZY)


def tool_class(name: str) -> type[AgentTool]:
    """The class of the registered tool ``name`` (its module is imported now); KeyError if unknown."""
    module, cls = TOOL_MODULES[name]
    tool: type[AgentTool] = getattr(importlib.import_module(module), cls)
    return tool


def tool_type(name: str) -> type[AgentTool]:
    """The class whose traits stand for the tool ``name``: the registered tool's, else a stand-in
    with the cautious defaults (a tool of an MCP server not connected now, or one an older
    version had) that never runs. Calls the model made are named by it, so it is never trusted
    beyond that: an unknown name is never read-only and opens no path."""
    return tool_class(name) if name in TOOL_MODULES else _stand_in(name)


def guess_kind(name: str) -> ToolKind:
    """The kind of a tool known only by its name (MCP tools): ``fetch`` for web fetchers, else ``other``."""
    lowered = name.lower()
    return "fetch" if "fetch" in lowered or "web" in lowered or "http" in lowered else "other"


def mcp_title(name: str) -> str | None:
    """``mcp__github__create_issue`` shown as ``github › create_issue`` (``None``: not an MCP name)."""
    if not name.startswith(MCP_PREFIX) or name.count("__") < 2:
        return None
    server, _, tool = name[len(MCP_PREFIX):].partition("__")
    return f"{server} › {tool}"


@lru_cache(maxsize=256)
def _stand_in(name: str) -> type[AgentTool]:
    from baton.tools.unknown import UnknownTool

    label = mcp_title(name) or name
    return type(f"Unknown_{name}", (UnknownTool,), {"name": name, "label": label, "kind": guess_kind(name)})


def tool_summary(name: str) -> str:
    """The system prompt's one-line summary of the registered tool ``name`` ("" when not registered)."""
    return tool_class(name).prompt_summary if name in TOOL_MODULES else ""


def details_type_for(name: str) -> type | None:
    """The typed view of the registered tool ``name``'s details (``None``: none, or not registered)."""
    return tool_class(name).details_type if name in TOOL_MODULES else None


def read_only_tool_names() -> tuple[str, ...]:
    """The registered tools that read and change nothing (read, grep, find, ls, web_fetch,
    web_search), in registry order; the session's own tools (kind ``think``: the task list, the
    plan; ``session_only``: a background command's output) are left out."""
    return tuple(name for name in TOOL_MODULES if tool_class(name).read_only and tool_class(name).kind != "think"
                 and not tool_class(name).session_only)


def with_companions(names: list[str]) -> list[str]:
    """``names`` with the :data:`COMPANIONS` of each appended (once, after the rest)."""
    out = list(dict.fromkeys(names))
    for name in list(out):
        out += [c for c in COMPANIONS.get(name, ()) if c not in out]
    return out


def _make(name: str, cwd: str, images: bool) -> AgentTool:
    if name == "read":
        from baton.tools.read import ReadTool

        return ReadTool(cwd, images=images)
    if name == "web_fetch":
        from baton.tools.web_fetch import WebFetchTool

        return WebFetchTool(cwd, images=images)
    return tool_class(name)(cwd)  # type: ignore[call-arg]


def tools_by_name(names: list[str], cwd: str, *, images: bool = True) -> list[AgentTool]:
    """Tools for ``names`` (in that order, duplicates dropped), e.g. from ``--tools read,grep``.

    Raises ValueError naming the unknown tools and the valid names."""
    cleaned = [name.strip() for name in names if name.strip()]
    unknown = [name for name in cleaned if name not in TOOL_MODULES]
    if unknown:
        raise ValueError(
            f"Unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. "
            f"Valid tools: {', '.join(TOOL_MODULES)}"
        )
    return [_make(name, cwd, images) for name in dict.fromkeys(cleaned)]


def default_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """read, bash, edit, write, web_fetch, task, todo_write."""
    return tools_by_name(list(DEFAULT_TOOL_NAMES), cwd, images=images)


def read_only_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """The read-only tools: read, grep, find, ls, web_fetch, web_search."""
    return tools_by_name(list(read_only_tool_names()), cwd, images=images)


def all_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """Every registered tool: read, bash, edit, write, grep, find, ls, web_fetch, web_search, task,
    ask_model, todo_write, exit_plan_mode."""
    return tools_by_name(list(TOOL_MODULES), cwd, images=images)


__all__ = [
    "COMPANIONS",
    "DEFAULT_TOOL_NAMES",
    "MCP_PREFIX",
    "TOOL_MODULES",
    "TOOL_NAMES",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "WriteTool",
    "all_tools",
    "default_tools",
    "details_type_for",
    "guess_kind",
    "mcp_title",
    "read_only_tool_names",
    "read_only_tools",
    "strip_control_sequences",
    "tool_class",
    "tool_summary",
    "tool_type",
    "tools_by_name",
]

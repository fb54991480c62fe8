"""The coding tools: read, bash, edit, write (the default set) and grep, find, ls.

Every tool is an :class:`agent.tool.AgentTool` bound to a working directory: paths are relative to
it, ``~`` expands, a leading ``@`` is dropped. ``content`` is what the model reads, ``details``
what the UI renders (each tool module documents its details; ``tools/details.py`` has the typed
views). Each tool class declares its own metadata (name, system-prompt summary, details view);
:data:`TOOL_MODULES` is the one registry every name list derives from, and the classes are
imported on first use. Adding a tool: docs/architecture.md, "Adding a tool".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool
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
}
"""Every built-in tool: name -> (module, class), in the order the system prompt lists them."""
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_MODULES)
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "find", "ls")

# Imported on first use: the package is entered by light modules too (the UI's text cleaning
# imports ``baton.tools.sanitize``), which must not pay for every tool and the agent runtime.
_LAZY = {cls: module for module, cls in TOOL_MODULES.values()} | {"strip_control_sequences": "baton.tools.sanitize"}


__getattr__ = lazy_exports(__name__, globals(), _LAZY)


def tool_class(name: str) -> type[AgentTool]:
    """The class of the built-in tool ``name`` (its module is imported now); KeyError if unknown."""
    tool: type[AgentTool] = __getattr__(TOOL_MODULES[name][1])
    return tool


def tool_summary(name: str) -> str:
    """The system prompt's one-line summary of the built-in tool ``name`` ("" when not a built-in)."""
    return tool_class(name).prompt_summary if name in TOOL_MODULES else ""


def details_type_for(name: str) -> type | None:
    """The typed view of the built-in tool ``name``'s details (``None``: none, or not a built-in)."""
    return tool_class(name).details_type if name in TOOL_MODULES else None


def _make(name: str, cwd: str, images: bool) -> AgentTool:
    if name == "read":
        from baton.tools.read import ReadTool

        return ReadTool(cwd, images=images)
    return tool_class(name)(cwd)  # type: ignore[call-arg]


def tools_by_name(names: list[str], cwd: str, *, images: bool = True) -> list[AgentTool]:
    """Tools for ``names`` (in that order, duplicates dropped), e.g. from ``--tools read,grep``.

    Raises ValueError naming the unknown tools and the valid names."""
    cleaned = [name.strip() for name in names if name.strip()]
    unknown = [name for name in cleaned if name not in TOOL_NAMES]
    if unknown:
        raise ValueError(
            f"Unknown tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}. "
            f"Valid tools: {', '.join(TOOL_NAMES)}"
        )
    return [_make(name, cwd, images) for name in dict.fromkeys(cleaned)]


def default_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """read, bash, edit, write."""
    return tools_by_name(list(DEFAULT_TOOL_NAMES), cwd, images=images)


def read_only_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """read, grep, find, ls."""
    return tools_by_name(list(READ_ONLY_TOOL_NAMES), cwd, images=images)


def all_tools(cwd: str, *, images: bool = True) -> list[AgentTool]:
    """Every tool: read, bash, edit, write, grep, find, ls."""
    return tools_by_name(list(TOOL_NAMES), cwd, images=images)


__all__ = [
    "DEFAULT_TOOL_NAMES",
    "READ_ONLY_TOOL_NAMES",
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
    "read_only_tools",
    "strip_control_sequences",
    "tool_class",
    "tool_summary",
    "tools_by_name",
]

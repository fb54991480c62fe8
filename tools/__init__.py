"""The coding tools: read, bash, edit, write (the default set) and grep, find, ls.

Every tool is an :class:`agent.tool.AgentTool` bound to a working directory: paths are relative to
it, ``~`` expands, a leading ``@`` is dropped. ``content`` is what the model reads, ``details``
what the UI renders (each tool module documents its details; ``tools/details.py`` has the typed
views). Each tool class declares its own metadata (name, system-prompt summary, details view);
:data:`TOOL_CLASSES` is the one registry every name list derives from. Adding a tool:
docs/architecture.md, "Adding a tool".
"""

from __future__ import annotations

from baton.agent.tool import AgentTool
from baton.tools.bash import BashTool
from baton.tools.edit import EditTool
from baton.tools.find import FindTool
from baton.tools.grep import GrepTool
from baton.tools.ls import LsTool
from baton.tools.read import ReadTool
from baton.tools.sanitize import strip_control_sequences
from baton.tools.write import WriteTool

TOOL_CLASSES: dict[str, type[AgentTool]] = {
    tool.name: tool for tool in (ReadTool, BashTool, EditTool, WriteTool, GrepTool, FindTool, LsTool)
}
"""Every built-in tool by name, in the order the system prompt lists them."""
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_CLASSES)
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "find", "ls")
TOOL_SUMMARIES: dict[str, str] = {name: tool.prompt_summary for name, tool in TOOL_CLASSES.items()}
"""The system prompt's one-line summary of each built-in tool."""


def _make(name: str, cwd: str, images: bool) -> AgentTool:
    return ReadTool(cwd, images=images) if name == "read" else TOOL_CLASSES[name](cwd)  # type: ignore[call-arg]


def details_type_for(name: str) -> type | None:
    """The typed view of the built-in tool ``name``'s details (``None``: none, or not a built-in)."""
    tool = TOOL_CLASSES.get(name)
    return tool.details_type if tool is not None else None


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
    "TOOL_CLASSES",
    "TOOL_NAMES",
    "TOOL_SUMMARIES",
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
    "tools_by_name",
]

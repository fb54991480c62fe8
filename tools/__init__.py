"""The coding tools: read, bash, edit, write (the default set) and grep, find, ls.

Every tool is an :class:`agent.tool.AgentTool` bound to a working directory: paths are relative to
it, ``~`` expands, a leading ``@`` is dropped. ``content`` is what the model reads, ``details``
what the UI renders (each tool module documents its details).
"""

from __future__ import annotations

from collections.abc import Callable
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

TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")
DEFAULT_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES: tuple[str, ...] = ("read", "grep", "find", "ls")

# Imported on first use: the package is entered by light modules too (the UI's text cleaning
# imports ``baton.tools.sanitize``), which must not pay for every tool and the agent runtime.
_LAZY = {
    "BashTool": "baton.tools.bash",
    "EditTool": "baton.tools.edit",
    "FindTool": "baton.tools.find",
    "GrepTool": "baton.tools.grep",
    "LsTool": "baton.tools.ls",
    "ReadTool": "baton.tools.read",
    "WriteTool": "baton.tools.write",
    "strip_control_sequences": "baton.tools.sanitize",
}


__getattr__ = lazy_exports(__name__, globals(), _LAZY)


def _factories() -> dict[str, Callable[[str, bool], AgentTool]]:
    from baton.tools.bash import BashTool
    from baton.tools.edit import EditTool
    from baton.tools.find import FindTool
    from baton.tools.grep import GrepTool
    from baton.tools.ls import LsTool
    from baton.tools.read import ReadTool
    from baton.tools.write import WriteTool

    return {
        "read": lambda cwd, images: ReadTool(cwd, images=images),
        "bash": lambda cwd, _: BashTool(cwd),
        "edit": lambda cwd, _: EditTool(cwd),
        "write": lambda cwd, _: WriteTool(cwd),
        "grep": lambda cwd, _: GrepTool(cwd),
        "find": lambda cwd, _: FindTool(cwd),
        "ls": lambda cwd, _: LsTool(cwd),
    }


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
    factories = _factories()
    return [factories[name](cwd, images) for name in dict.fromkeys(cleaned)]


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
    "read_only_tools",
    "strip_control_sequences",
    "tools_by_name",
]

"""The real path the permission check approved for each file-tool call, handed to the tool.

The check resolves a call's ``path`` once (:func:`baton.tools.paths.tool_real_path`) and judges
that real path; the session pins it here under the call's id and path argument, and the tool
opens exactly the pinned path (walking it without following symlinks, :mod:`tools.anchored`)
instead of resolving the argument a second time, when a symlink swapped in meanwhile would lead
elsewhere. A tool with pins installed refuses a call that has no pin (one the check never saw,
or a second call reusing another's id); a tool without pins (no permission check in front of it)
resolves the path itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.agent.tool import ToolError
from baton.tools.paths import tool_real_path

if TYPE_CHECKING:
    from baton.agent.tool import AgentTool


def path_argument(raw: object) -> str:
    """A call's ``path`` argument as both the check and the tool read it (missing or blank: ``.``)."""
    return raw.strip() if isinstance(raw, str) and raw.strip() else "."


class PathPins:
    """(call id, path argument) -> approved real path, for one session (calls run in parallel).

    A pin left by a call that never ran (blocked by a later gate) is replaced by the next check
    of that id, so it can never be taken by another call."""

    def __init__(self) -> None:
        self._pins: dict[str, tuple[str, str]] = {}

    def pin(self, call_id: str, path: object, real_path: str) -> None:
        """Record the real path approved for ``call_id`` whose argument was ``path``."""
        self._pins[call_id] = (path_argument(path), real_path)

    def take(self, call_id: str, path: object) -> str | None:
        """The approved real path of ``call_id`` for this ``path`` argument (forgotten once
        taken), or None."""
        pinned = self._pins.get(call_id)
        if pinned is None or pinned[0] != path_argument(path):
            return None
        del self._pins[call_id]
        return pinned[1]


def target_for(pins: PathPins | None, tool: AgentTool, call_id: str, path: str | None, cwd: str) -> str:
    """The real path ``tool`` opens for this call: the pinned one when pins are installed (a call
    without a pin is refused), else ``path`` resolved now as the tool's path parameter says."""
    if pins is None:
        must_exist = tool.path_parameter is not None and tool.path_parameter.must_exist
        return tool_real_path(path_argument(path), cwd, must_exist=must_exist)
    pinned = pins.take(call_id, path)
    if pinned is None:
        shown = path_argument(path)
        raise ToolError(f"Not run: the permission check did not approve {tool.name}({shown}) for this call.")
    return pinned

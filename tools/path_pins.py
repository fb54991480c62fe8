"""The real path the permission check approved for each file-tool call, handed to the tool.

The check resolves a call's ``path`` once (:func:`baton.tools.paths.tool_real_path`) and judges
that real path; the session pins it here under the call's id, and the tool opens exactly the
pinned path (walking it without following symlinks, :mod:`tools.anchored`) instead of
resolving the argument a second time, when a symlink swapped in meanwhile would lead elsewhere.
A tool without pins (no permission check in front of it) resolves the path itself.
"""

from __future__ import annotations

from baton.tools.paths import tool_real_path


class PathPins:
    """Call id -> approved real path (one per session; calls run in parallel)."""

    def __init__(self) -> None:
        self._pins: dict[str, str] = {}

    def pin(self, call_id: str, real_path: str) -> None:
        """Record the real path approved for ``call_id``."""
        self._pins[call_id] = real_path

    def take(self, call_id: str) -> str | None:
        """The approved real path of ``call_id`` (forgotten once taken), or None."""
        return self._pins.pop(call_id, None)

    def drop(self, call_id: str) -> None:
        """Forget ``call_id``'s pin (a call that never ran)."""
        self._pins.pop(call_id, None)


def target_for(pins: PathPins | None, tool: str, call_id: str, path: str, cwd: str) -> str:
    """The real path ``tool`` opens for this call: the pinned one, else ``path`` resolved now."""
    pinned = pins.take(call_id) if pins is not None else None
    return pinned if pinned is not None else tool_real_path(tool, path, cwd)

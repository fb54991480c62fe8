"""What a command the sandbox blocked was trying to touch, read from what it printed.

The question "run it again without the sandbox?" and the note the model reads name the places —
``.git/hooks/pre-commit``, ``.git/index.lock``, the network — rather than "outside the
workspace": running a command outside the sandbox is only an informed answer when the user sees
what it would change.
"""

from __future__ import annotations

import os
import re

from baton.sessions.permissions.paths import Workspace

_READ_ONLY = re.compile(
    r"""'(?P<quoted>[^'\n]{1,400})'(?::|\s)\s*Read-only\ file\ system      # touch: cannot touch 'x': ...
      | (?P<bare>[^\s:'"`]{1,400}):\s*Read-only\ file\ system                # bash: x: Read-only file system
      | Read-only\ file\ system:\ '(?P<python>[^'\n]{1,400})'               # [Errno 30] ...: 'x'
    """,
    re.VERBOSE,
)
_NETWORK = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution|"
    r"Name or service not known|Connection refused|Couldn't connect to server|\[Errno 101\]",
    re.IGNORECASE,
)
MAX_NAMED = 5


def blocked_places(output: str, command: str, workspace: Workspace) -> list[str]:
    """The places the command was kept from: written paths (relative to the workspace when inside
    it), a protected place the command names, and ``the network``."""
    places: list[str] = []
    for match in _READ_ONLY.finditer(output):
        raw = match.group("quoted") or match.group("bare") or match.group("python") or ""
        if raw in ("bash", "sh"):
            continue
        path = os.path.normpath(os.path.join(workspace.given, raw))
        shown = workspace.display(os.path.realpath(path)) if workspace.contains(os.path.realpath(path)) else path
        if shown not in places:
            places.append(shown)
    protected = workspace.mentions_protected(command)
    if protected is not None and not any(p.startswith(protected) for p in places):
        places.append(protected)
    if _NETWORK.search(output):
        places.append("the network")
    return places[:MAX_NAMED] + ([f"{len(places) - MAX_NAMED} more"] if len(places) > MAX_NAMED else [])


def blocked_reason(places: list[str]) -> str:
    """``it would write .git/index.lock, which the sandbox keeps read-only`` (or a general one)."""
    paths = [p for p in places if p != "the network"]
    parts: list[str] = []
    if paths:
        parts.append(f"it would write {', '.join(paths)}, which the sandbox keeps read-only")
    if "the network" in places:
        parts.append("it needs the network, which the sandbox keeps off")
    return "; ".join(parts) or "the sandbox seems to have blocked it"

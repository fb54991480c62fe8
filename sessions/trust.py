"""Trusting a project's commands: its ``.mcp.json`` servers and the hooks in ``.baton/settings.json``.

Both run commands on the user's machine, so they are used only once the user has trusted them.
The decision is remembered per project directory by a digest of exactly what was trusted, in
``$BATON_HOME/trusted-projects.json``: a changed ``.mcp.json`` or changed hooks ask again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
from baton.providers.json_depth import load_config_json
from baton.providers.paths import baton_home
from baton.tools.project_files import ProjectFiles

TRUST_FILE = "trusted-projects.json"
PROJECT_MCP_FILE = ".mcp.json"


@dataclass(frozen=True, slots=True)
class ProjectCommands:
    """What a project would run: the digest to remember and a human description."""

    project: Path
    digest: str
    what: list[str]
    """e.g. ``[".mcp.json (2 servers: db, search)", "hooks (PreToolUse, Stop)"]``."""

    def describe(self) -> str:
        """One line naming what needs trust."""
        return f"{self.project}: {' and '.join(self.what)}"


def project_commands(project: Path, project_settings: dict[str, Any]) -> ProjectCommands | None:
    """What ``project`` asks to run (``None`` when it has no ``.mcp.json`` and no hooks)."""
    mcp_bytes = b""
    what: list[str] = []
    path = project / PROJECT_MCP_FILE
    with contextlib.suppress(OSError):  # refused (a FIFO, too large, leads out): reported where it is read
        mcp_bytes = ProjectFiles.for_dir(project).read(path, MAX_CONFIG_BYTES)
    if mcp_bytes.strip():
        what.append(f"{PROJECT_MCP_FILE} ({_server_names(mcp_bytes)})")
    hooks = project_settings.get("hooks")
    hook_bytes = b""
    if isinstance(hooks, dict) and hooks:
        hook_bytes = json.dumps(hooks, sort_keys=True, ensure_ascii=False).encode()
        what.append(f"hooks ({', '.join(str(k) for k in hooks)})")
    if not what:
        return None
    digest = hashlib.sha256(mcp_bytes + b"\0" + hook_bytes).hexdigest()
    return ProjectCommands(project, digest, what)


def _server_names(data: bytes) -> str:
    try:
        servers = load_config_json(data.decode("utf-8", "replace")).get("mcpServers", {})
        names = list(servers) if isinstance(servers, dict) else []
    except (ValueError, AttributeError):
        return "not valid JSON"
    return f"{len(names)} server{'s' if len(names) != 1 else ''}: {', '.join(names[:6])}" if names else "no servers"


def trust_file() -> Path:
    """``$BATON_HOME/trusted-projects.json``."""
    return baton_home() / TRUST_FILE


def is_trusted(commands: ProjectCommands) -> bool:
    """Whether the user trusted exactly these project commands before."""
    return _load().get(str(commands.project)) == commands.digest


def remember_trust(commands: ProjectCommands) -> None:
    """Remember that the user trusts these project commands (atomic write)."""
    data = _load()
    data[str(commands.project)] = commands.digest
    target = trust_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".trusted-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _load() -> dict[str, str]:
    try:
        data = load_config_json(read_regular(trust_file(), MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

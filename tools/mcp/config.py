"""MCP server configuration: Claude Code's ``mcpServers`` format.

``{"mcpServers": {"name": {"command", "args", "env", "cwd"} | {"type": "http", "url", "headers"}}}``
from ``$BATON_HOME/mcp.json``, then the project's ``.mcp.json``, then ``--mcp-config`` files (a
later file's server replaces an earlier one of the same name). ``${VAR}`` and ``${VAR:-default}``
expand in ``command``, ``args``, ``env``, ``cwd``, ``url`` and ``headers``. Bad entries: one
problem line each, never fatal.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypeAlias, TypeGuard

from baton.providers.bounded_read import MAX_CONFIG_BYTES, FileRefusedError
from baton.providers.json_depth import load_config_json
from baton.providers.json_types import JsonObject, JsonSequence, JsonValue
from baton.tools.file_pins import FilePin
from baton.tools.project_files import ProjectFiles, read_bounded

Transport = Literal["stdio", "http"]
Source = Literal["global", "project", "cli", "client"]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One server: a command to run (stdio) or a URL (streamable HTTP)."""

    name: str
    transport: Transport
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: Source = "global"
    origin: str = ""
    """The file (or client) this entry came from."""
    pins: tuple[FilePin, ...] = ()
    """A project server: the workspace files its command runs, as the user trusted them; it does
    not start while one of them differs (the model may have rewritten it)."""

    def describe(self) -> str:
        """``command args`` or the URL, for listings."""
        return self.url if self.transport == "http" else " ".join([self.command, *self.args])


def expand_vars(value: str, env: Mapping[str, str] | None = None, missing: list[str] | None = None) -> str:
    """``${VAR}`` / ``${VAR:-default}`` replaced from ``env`` (default: the process environment);
    names of unset variables without a default are appended to ``missing`` (they expand to "")."""
    source = os.environ if env is None else env

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = source.get(name)
        if value is None or (value == "" and default is not None):
            if default is None and missing is not None:
                missing.append(name)
            return default or ""
        return value

    return _VAR.sub(replace, value)


def parse_servers(data: JsonValue, source: Source, origin: str, problems: list[str]) -> list[McpServerConfig]:
    """The servers in one configuration object (``{"mcpServers": {...}}``)."""
    if not isinstance(data, dict):
        problems.append(f"{origin}: must hold a JSON object; ignored")
        return []
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        problems.append(f"{origin}: 'mcpServers' must be an object; ignored")
        return []
    out = []
    for name, entry in servers.items():
        config = _parse_server(str(name), entry, source, origin, problems)
        if config is not None:
            out.append(config)
    return out


StringMap: TypeAlias = "dict[str, str | int | float]"


def _strings(value: JsonValue) -> TypeGuard[StringMap]:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str | int | float)
                                           for k, v in value.items())


class _EntryProblem(ValueError):
    """What is wrong with a server entry (it is ignored)."""


def _parse_server(name: str, entry: JsonValue, source: Source, origin: str,
                  problems: list[str]) -> McpServerConfig | None:
    where = f"{origin}: server '{name}'"
    missing: list[str] = []
    try:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", name):
            raise _EntryProblem("the name may only hold letters, digits, '_', '-', '.' (at most 40)")
        if not isinstance(entry, dict):
            raise _EntryProblem("must be an object")
        if entry.get("disabled") is True:
            return None
        kind = entry.get("type") or ("http" if "url" in entry else "stdio")
        if kind in ("http", "streamable-http", "streamableHttp"):
            config = _http_server(name, entry, missing)
        elif kind == "stdio":
            config = _stdio_server(name, entry, missing)
        else:
            raise _EntryProblem(f"transport '{kind}' is not supported (stdio or http)")
    except _EntryProblem as exc:
        problems.append(f"{where}: {exc}; ignored")
        return None
    for var in dict.fromkeys(missing):
        problems.append(f"{where}: ${{{var}}} is not set (expanded to an empty string)")
    return replace(config, source=source, origin=origin)


def _http_server(name: str, entry: JsonObject, missing: list[str]) -> McpServerConfig:
    url = entry.get("url")
    headers = entry.get("headers", {})
    if not isinstance(url, str) or not url.strip():
        raise _EntryProblem("needs a 'url'")
    if not _strings(headers):
        raise _EntryProblem("'headers' must map names to strings")
    return McpServerConfig(
        name, "http", url=expand_vars(url, missing=missing),
        headers={k: expand_vars(str(v), missing=missing) for k, v in headers.items()},
    )


def _stdio_server(name: str, entry: JsonObject, missing: list[str]) -> McpServerConfig:
    command = entry.get("command")
    args = entry.get("args", [])
    env = entry.get("env", {})
    cwd = entry.get("cwd")
    if not isinstance(command, str) or not command.strip():
        raise _EntryProblem("needs a 'command' (or a 'url')")
    if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
        raise _EntryProblem("'args' must be a list of strings")
    if not _strings(env):
        raise _EntryProblem("'env' must map names to strings")
    if cwd is not None and not isinstance(cwd, str):
        raise _EntryProblem("'cwd' must be a string")
    return McpServerConfig(
        name, "stdio", command=expand_vars(command, missing=missing),
        args=[expand_vars(str(a), missing=missing) for a in args],
        env={k: expand_vars(str(v), missing=missing) for k, v in env.items()},
        cwd=expand_vars(cwd, missing=missing) if cwd else None,
    )


def read_config_file(path: Path, source: Source, problems: list[str]) -> list[McpServerConfig]:
    """The servers in ``path`` (none when it does not exist). Only a regular file of at most
    1 MB is read; a project's file only as :mod:`baton.tools.project_files` allows."""
    files = ProjectFiles.for_dir(path.parent) if source == "project" else None
    try:
        text = read_bounded(path, MAX_CONFIG_BYTES, files).decode("utf-8")
    except FileNotFoundError:
        return []
    except FileRefusedError as exc:
        problems.append(f"{path}: not read: {exc}; its MCP servers are skipped")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        problems.append(f"{path}: cannot be read ({why}); its MCP servers are skipped")
        return []
    if not text.strip():
        return []
    try:
        data = load_config_json(text)
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); its MCP servers are skipped")
        return []
    return parse_servers(data, source, str(path), problems)


def merge_servers(*groups: list[McpServerConfig]) -> list[McpServerConfig]:
    """Later groups replace earlier servers of the same name; order of first appearance kept."""
    merged: dict[str, McpServerConfig] = {}
    for group in groups:
        for config in group:
            merged[config.name] = config
    return list(merged.values())


def configs_from_acp(servers: JsonSequence, problems: list[str]) -> list[McpServerConfig]:
    """Servers an ACP client passes in ``session/new`` (``{name, command, args, env: [{name,
    value}]}`` or ``{type: "http", name, url, headers: [{name, value}]}``) as configs."""
    entries: JsonObject = {}
    for server in servers:
        name = server.get("name") if isinstance(server, dict) else None
        if not isinstance(server, dict) or not isinstance(name, str):
            problems.append("ACP mcpServers: an entry without a name was ignored")
            continue
        entry: JsonObject = {k: v for k, v in server.items() if k not in ("name", "env", "headers")}
        for key in ("env", "headers"):
            pairs = server.get(key) or []
            if isinstance(pairs, list):
                entry[key] = {str(p.get("name")): p.get("value", "") for p in pairs
                              if isinstance(p, dict) and isinstance(p.get("name"), str)}
            elif isinstance(pairs, dict):
                entry[key] = pairs
        entries[name] = entry
    return parse_servers({"mcpServers": entries}, "client", "ACP session", problems)

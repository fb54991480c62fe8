"""The MCP servers an editor passes in ``session/new`` / ``session/load``, as baton's MCP config
(``{name: {"command", "args", "env"}}`` or ``{name: {"type": "http"|"sse", "url", "headers"}}``)."""

from __future__ import annotations

from typing import Any


def _pairs(items: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out[item["name"]] = str(item.get("value", ""))
    return out


def mcp_config(servers: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """ACP ``McpServer`` objects → baton's ``mcpServers`` entries (unnamed ones skipped)."""
    config: dict[str, dict[str, Any]] = {}
    for server in servers:
        name = server.get("name")
        if not isinstance(name, str) or not name:
            continue
        kind = server.get("type")
        if kind in ("http", "sse") or ("url" in server and "command" not in server):
            config[name] = {"type": kind or "http", "url": server.get("url", ""),
                            "headers": _pairs(server.get("headers"))}
        else:
            config[name] = {"command": server.get("command", ""), "args": list(server.get("args") or []),
                            "env": _pairs(server.get("env"))}
    return config

"""Plain-text lines describing MCP servers (``--list-mcp`` and ``/mcp``)."""

from __future__ import annotations

from collections.abc import Sequence

from baton.tools.mcp.manager import ServerStatus


def status_lines(statuses: Sequence[ServerStatus], *, with_tools: bool = False) -> list[str]:
    """One line per server (name, status, transport, tool count, source, last error)."""
    if not statuses:
        return ["No MCP servers configured (~/.baton/mcp.json, .mcp.json or --mcp-config FILE)."]
    width = max(len(s.name) for s in statuses)
    lines = []
    for s in statuses:
        line = f"{s.name:<{width}}  {s.status:<8}  {s.transport:<5}  {s.tool_count:>3} tools  [{s.source}] {s.target}"
        if s.error:
            line += f"\n{'':<{width}}  last error: {s.error}"
        if with_tools and s.tools:
            line += f"\n{'':<{width}}  tools: {', '.join(s.tools)}"
        lines.append(line)
    return lines

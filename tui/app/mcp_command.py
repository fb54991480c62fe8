"""``/mcp``: list the MCP servers; ``/mcp restart NAME`` restarts one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.tui.app.command_registry import command
from baton.tui.app.render import clean

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp


@command("mcp", "/mcp [restart NAME]", "List MCP servers (status, tools, last error) or restart one")
async def cmd_mcp(app: BatonApp, args: str) -> None:
    from baton.tools.mcp.listing import status_lines

    manager = app.session.mcp
    words = args.split()
    if words and words[0] == "restart":
        names = words[1:] or [s.name for s in manager.statuses() if s.status != "ready"]
        if not names:
            app.notice("Every MCP server is running; name one to restart it: /mcp restart NAME", "warning")
            return
        for name in names:
            if name not in manager.connections:
                app.notice(f"No MCP server named {clean(name)}", "error")
                continue
            app.notice(f"Restarting MCP server {clean(name)}…")
            await manager.restart(name)
            await manager.connections[name].wait_ready(manager.startup_timeout)
        app.refresh_status()
    elif words:
        app.notice("Usage: /mcp, or /mcp restart NAME", "warning")
        return
    lines = status_lines(manager.statuses(), with_tools=True)
    pending = app.session.extensions.pending_trust
    if pending is not None:
        lines.append(f"Not trusted (off): {pending.describe()}")
    app.notice(clean("\n".join(lines)))

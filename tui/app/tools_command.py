"""``/tools``: the tools the model has in this session, and which web search it has (or why none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.tui.app.command_registry import command
from baton.tui.app.render import clean

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp


@command("tools", "/tools", "List the model's tools and its web search")
async def cmd_tools(app: BatonApp, args: str) -> None:
    from baton.sessions.web_search import search_status

    session = app.session
    lines = ["Tools:"]
    for tool in session.agent.tools:
        traits = [type(tool).kind] + (["read-only"] if type(tool).read_only else [])
        lines.append(f"  {tool.name:<14} {', '.join(traits)}")
    lines.append(search_status(session))
    app.notice(clean("\n".join(lines)))

"""``/tools`` in the app: the model's tools with their traits, and which web search it has."""

from __future__ import annotations

from pathlib import Path

from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from tests.tui.app_helpers import open_session, screen_text, submit, wait_until


async def test_tools_lists_tools_and_says_why_there_is_no_web_search(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a, tools=["read", "web_fetch"])
    app = BatonApp(session)
    async with app.run_test(size=(130, 40)) as pilot:
        await submit(pilot, app, "/tools")
        await wait_until(pilot, lambda: "web search: none" in screen_text(app), what="the /tools notice")
        text = screen_text(app)
        assert "read           read, read-only" in text
        assert "web_fetch      fetch, read-only" in text
        assert "has no search of its own; set BRAVE_API_KEY" in text
    await session.close()

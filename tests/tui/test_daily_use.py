"""Rough edges of daily use in the interactive app (issue 25, items 8–14), driven with Textual's pilot."""

from __future__ import annotations

from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.tui.app.baton_app import BatonApp
from tests.tui.app_helpers import open_session, screen_text, settle

LONG_NAME = faux_model("claude-sonnet-4-5-20250929", provider="anthropic", api="faux-a", reasoning=True,
                       context_window=200_000)


async def test_the_footer_keeps_its_usage_line_after_a_resize_to_60_columns(
    project: Path, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("ok", usage={"input": 1200, "output": 30}))
    session = await open_session(project, LONG_NAME)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(pilot, app)
        await pilot.resize_terminal(60, 30)
        await pilot.pause(0.3)
        footer = screen_text(app).splitlines()[-2:]
        assert "anthropic/claude-sonnet" in footer[0]
        assert "$0.00" in footer[1] and "auto" in footer[1] and "context" in footer[1]
    await session.close()

"""``/model`` tells the user when the conversation does not fit the new model's window."""

from __future__ import annotations

from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.providers.messages import Usage
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.pickers import ConfirmScreen
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until

SMALL = faux_model("gpt-small", provider="prov-b", api="faux-b", context_window=128_000)


async def test_model_preview_says_the_context_will_be_compacted_first(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("Read it all.", usage=Usage(input=178_000, output=2_000, total_tokens=180_000)))
    session = await open_session(project, model_a, extra_models=[model_a, SMALL])
    app = BatonApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press(*"read the repo", "enter")
        await settle(pilot, app)
        await submit(pilot, app, "/model gpt-small")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the handoff preview")
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "context 180k > 128k window: will be compacted first (summarised by prov-a/model-a)" in text
        await pilot.press("escape")
    await session.close()

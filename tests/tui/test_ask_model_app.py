"""The ``ask_model`` box in the interactive app (Textual pilot): while the advisor thinks it says
whom it is consulting and for how long; once answered, the advisor's model, tokens and cost, the
question on one line and the answer drawn as Markdown, collapsed until Ctrl+O. The advisor is a
real provider over a local replay server (OpenAI Chat Completions), held until the test lets it
answer."""

from __future__ import annotations

import threading
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model, ModelCost
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.tool_call import ToolCallView
from tests.provider_scripts import text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until

QUESTION = "Should the cache key include the user id,\nor is the session id enough?"
ANSWER = "\n".join([
    "## Verdict",
    "",
    "Include the **user id**: a shared session id would leak one user's page to another.",
    "",
    *(f"- point {n}: keep `key_{n}` short" for n in range(1, 13)),
])


def _advisor(url: str, *, priced: bool) -> Model:
    cost = ModelCost(input=2.0, output=8.0) if priced else ModelCost()
    return Model(id="replay-model", name="Replay", api="openai-completions", provider="gamma",
                 baseUrl=url + "/v1", cost=cost, contextWindow=200_000, maxTokens=8192)


def _held(release: threading.Event, body: bytes) -> ReplayServer:
    """A replay server whose one answer waits for ``release`` (then streams ``body``)."""

    def reply(_request: RecordedRequest) -> Reply:
        release.wait(30)
        return Reply.sse(body)

    return ReplayServer(reply)


async def test_the_ask_model_box_shows_the_advisor_its_account_and_its_answer(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.tool_call("ask_model", {"question": QUESTION}, id="toolu_ask"),
               FauxResponse.text("Parent done."))
    release = threading.Event()
    with _held(release, text_reply("openai-completions", ANSWER)) as server:
        advisor = _advisor(server.url, priced=True)
        session = await open_session(project, model_a, extra_models=[model_a, advisor], tools=["ask_model"],
                                     settings={"models": {"advisor": advisor.ref}})
        app = BatonApp(session)
        try:
            async with app.run_test(size=(120, 50)) as pilot:
                await submit(pilot, app, "design the cache")
                await wait_until(pilot, lambda: "consulting gamma/replay-model …" in screen_text(app), timeout=15,
                                 what="the box saying whom it consults")
                text = screen_text(app)
                assert "ask_model Should the cache key include the user id, or is the session id enough?" in text
                release.set()
                await settle(pilot, app, timeout=20)
                await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
                text = screen_text(app)
                (box,) = [v for v in app.transcript.views_of(ToolCallView) if v.tool_name == "ask_model"]
                assert box.state == "done"
                (account,) = [line for line in text.splitlines() if "gamma/replay-model ·" in line] or [text]
                assert "↑12 ↓" in account and "$0.0" in account, account
                assert "consulting" not in text
                assert "Verdict" in text and "## Verdict" not in text, "the answer is drawn as Markdown"
                assert "• point 1: keep key_1 short" in text and "**" not in text and "`" not in text
                assert "point 12" not in text and "more lines (Ctrl+O to expand)" in text
                await pilot.press("ctrl+o")
                await wait_until(pilot, lambda: "point 12: keep key_12 short" in screen_text(app),
                                 what="the whole answer with Ctrl+O")
        finally:
            release.set()
            await session.close()


async def test_an_unpriced_advisor_says_its_cost_is_unknown(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.tool_call("ask_model", {"question": "Is this safe?"}, id="toolu_ask"),
               FauxResponse.text("Parent done."))
    release = threading.Event()
    release.set()
    with _held(release, text_reply("openai-completions", "Yes.")) as server:
        advisor = _advisor(server.url, priced=False)
        session = await open_session(project, model_a, extra_models=[model_a, advisor], tools=["ask_model"],
                                     settings={"models": {"advisor": advisor.ref}})
        app = BatonApp(session)
        try:
            async with app.run_test(size=(120, 30)) as pilot:
                await submit(pilot, app, "check it")
                await settle(pilot, app, timeout=20)
                await wait_until(pilot, lambda: "Parent done." in screen_text(app), what="the parent's answer")
                accounts = [line for line in screen_text(app).splitlines() if "gamma/replay-model ·" in line]
                assert len(accounts) == 1, screen_text(app)
                assert "cost unknown" in accounts[0] and "$" not in accounts[0], accounts[0]
        finally:
            await session.close()


def test_details_from_a_session_file_show_as_plain_text() -> None:
    from baton.tools.details import ModelCallDetails
    from baton.tui.app.widgets.model_call import usage_facts
    from baton.tui.app.widgets.tool_render import running_status

    details = {"model": "\x1b[31mevil\x1b[0m [bold]x[/bold]\nsecond line", "usage": {"input": 5, "output": 2},
               "cost": 0}
    assert usage_facts(ModelCallDetails.from_dict(details)).plain == "evil [bold]x[/bold] · ↑5 ↓2 · cost unknown"
    assert running_status("ask_model", details, 3.0).plain == "consulting evil [bold]x[/bold] … 3.0s"
    assert running_status("bash", details, 3.0).plain == "running… 3.0s"

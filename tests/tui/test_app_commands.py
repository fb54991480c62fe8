"""Pilot tests of slash commands and keys that change the session (real CodingSession, faux models)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events

from baton.providers.faux import FauxProvider, FauxResponse, faux_text
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import NoticeView, UserMessageView
from baton.tui.app.widgets.pickers import ListPicker
from tests.tui.app_helpers import open_session, screen_text, settle, stored_entries, submit, views, wait_until


async def test_compact_replaces_history_with_a_summary(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(*(FauxResponse.text(f"Answer number {i}. " + "detail " * 40) for i in range(4)))
    faux_a.add(FauxResponse.text("## Goal\nSummarised conversation."), FauxResponse.text("## Turn\nPrefix."))
    session = await open_session(project, model_a, settings={"compaction": {"keepRecentTokens": 50}})
    path = session.session_file
    assert path is not None
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        for i in range(4):
            await submit(pilot, app, f"question {i}")
            await settle(pilot, app)
        await submit(pilot, app, "/compact keep the numbers")
        await wait_until(pilot, lambda: "summarised" in screen_text(app), what="the compaction notice")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Earlier conversation compacted" in text
        assert "Answer number 0." not in text
    await session.close()
    assert any(e["type"] == "compaction" for e in stored_entries(path))
    assert any("keep the numbers" in str(request.messages[-1].content) for request in faux_a.requests[4:])


async def test_compact_with_nothing_to_compact_says_why(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: "Nothing to compact (" in screen_text(app), what="the notice")
        notice = [v for v in views(app, NoticeView) if "Nothing to compact" in v.plain_text][-1]
        assert notice.level == "info", "nothing to do is not a failure"
        assert "Compaction failed" not in screen_text(app) and "Compacting" not in screen_text(app)
        assert app.is_running
    await session.close()


async def test_tree_navigation_puts_message_back(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Reply one."), FauxResponse.text("Reply two."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        for text in ("alpha", "beta"):
            await submit(pilot, app, text)
            await settle(pilot, app)
        await submit(pilot, app, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the tree picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        await pilot.press(*"beta")
        await pilot.pause(0.05)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.editor.text == "beta", what="the message in the editor")
        await pilot.pause(0.1)
        assert [v.text for v in views(app, UserMessageView)] == ["alpha"]
        assert "Reply two." not in screen_text(app)
    await session.close()


async def test_resume_picker_switches_session(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("From the first session."))
    first = await open_session(project, model_a)
    await first.prompt("remember this")
    await first.close()
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the session picker")
        assert "remember this" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "From the first session." in screen_text(app), what="the resumed session")
    await session.close()


async def test_ctrl_p_cycles_models_and_says_so(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    session = await open_session(project, model_a, extra_models=[model_a, model_b],
                                 settings={"favoriteModels": ["prov-a/model-a", "prov-b/model-b"]})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: session.model.id == "model-b", what="the next model")
        await pilot.pause(0.05)
        assert "prov-a/model-a → prov-b/model-b" in screen_text(app)
    await session.close()


async def test_thinking_command_sets_and_reports(project: Path, model_a: Model, model_b: Model,
                                                 faux_b: FauxProvider) -> None:
    session = await open_session(project, model_a, extra_models=[model_a, model_b])
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/thinking high")
        await wait_until(pilot, lambda: session.thinking_level == "high", what="the level")
        await submit(pilot, app, "/thinking loud")
        await wait_until(pilot, lambda: "Unknown thinking level" in screen_text(app), what="the error")
        await app.switch_model(model_b, None)
        await submit(pilot, app, "/thinking medium")
        await wait_until(pilot, lambda: "cannot do medium" in screen_text(app), what="the clamp notice")
    await session.close()


async def test_multiline_paste_stays_in_the_editor(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        app.post_message(events.Paste("line one\nline two\nline three"))
        await pilot.pause(0.05)
        assert app.editor.text == "line one\nline two\nline three"
        assert faux_a.calls == 0
    await session.close()


async def test_model_picker_transforms_each_target_once_per_opening(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import baton.sessions.handoff as handoff
    from baton.providers.faux import faux_model, faux_thinking

    model_c = faux_model("model-c", provider="prov-c", api="faux-b", context_window=100_000)
    faux_a.add(FauxResponse(content=[faux_thinking("Considering.", "sig-1"), faux_text("Hi from A.")]))
    session = await open_session(project, model_a, extra_models=[model_a, model_b, model_c])
    transformed: list[str] = []
    real = handoff.transform_messages

    def counted(messages: Any, model: Model, *args: Any, **kwargs: Any) -> Any:
        transformed.append(model.ref)
        return real(messages, model, *args, **kwargs)

    monkeypatch.setattr(handoff, "transform_messages", counted)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        await submit(pilot, app, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the model picker")
        for key in ("down", "down", "up", "down", "up"):  # b, c, b, c, b: each row shows its handoff
            await pilot.press(key)
            await pilot.pause(0.05)
            assert "Handoff (compared with now): " in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.model.ref == "prov-b/model-b", what="the switch")
        await pilot.pause(0.05)
        assert "handoff:" in screen_text(app)  # the notice says what the switch changed
    await session.close()
    # the current model once (the baseline), then each target the first time it was shown
    assert sorted(transformed) == ["prov-a/model-a", "prov-b/model-b", "prov-c/model-c"]

"""Regression tests for the second QA pass of the interactive app (pilot, faux and replay models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.demo import plan_turn
from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import Context, TextContent, ToolResultMessage, UserMessage
from baton.providers.models import Model
from baton.sessions import CodingSession
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import AssistantMessageView, NoticeView
from baton.tui.app.widgets.pickers import ListPicker
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply
from tests.replay_session import open_replay_session, overloaded_reply
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until


async def test_provider_retry_notice_sits_above_the_answer_that_followed(project: Path) -> None:
    busy = Reply.json_error(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
                            headers={"retry-after-ms": "10"})
    with ReplayServer([busy, Reply.sse(text_reply("anthropic-messages", "Made it after all."))]) as server:
        session = await open_replay_session(project, server)
        app = BatonApp(session)
        async with app.run_test(size=(110, 30)) as pilot:
            await submit(pilot, app, "hello")
            await settle(pilot, app)
            order = [w for w in app.transcript.mounted_views if isinstance(w, NoticeView | AssistantMessageView)]
            kinds = ["retry" if isinstance(w, NoticeView) and "Retrying" in w.plain_text else type(w).__name__
                     for w in order]
            assert kinds.index("retry") < kinds.index("AssistantMessageView"), kinds
            text = screen_text(app)
            assert text.index("Retrying") < text.index("Made it after all.")
        await session.close()


async def test_tree_onto_a_model_change_keeps_the_previous_reply(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("Answer from A."))
    faux_b.add(FauxResponse.text("Answer from B."))
    session = await open_session(project, model_a, extra_models=[model_a, model_b])
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "one")
        await settle(pilot, app)
        await app.switch_model(model_b, None)
        await submit(pilot, app, "two")
        await settle(pilot, app)
        target = [n for n in session.tree() if n.kind == "model_change"][-1]
        await submit(pilot, app, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the tree picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        picker.dismiss(target.id)
        await wait_until(pilot, lambda: "Moved to the selected point" in screen_text(app), what="the move")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "Answer from A." in text
        assert "Answer from B." not in text
    await session.close()


async def test_retries_of_a_dead_provider_are_numbered_as_one_sequence(project: Path) -> None:
    with ReplayServer(lambda _request: overloaded_reply()) as server:
        session = await open_replay_session(project, server, {"retry": {"baseDelayMs": 1, "maxRetries": 2}})
        app = BatonApp(session)
        async with app.run_test(size=(110, 40)) as pilot:
            for _ in range(2):  # a second prompt counts from 1 again
                await submit(pilot, app, "hello")
                await settle(pilot, app)
                notices = [w.plain_text for w in app.transcript.mounted_views
                           if isinstance(w, NoticeView) and "Retrying" in w.plain_text]
                assert [n.split("(attempt ")[1].split(")")[0] for n in notices[-4:]] == ["1/5", "2/5", "3/5", "4/5"]
            assert "Retries exhausted" in screen_text(app)
        await session.close()


def test_demo_greeting_names_the_real_baton_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("BATON_HOME", str(tmp_path / "elsewhere" / "conf"))
    turn = plan_turn(Context(messages=[UserMessage(content="hi")]))
    assert "~/elsewhere/conf/models.json" in turn.text
    assert "~/.baton" not in turn.text
    monkeypatch.setenv("BATON_HOME", "/opt/baton-home")
    assert "/opt/baton-home/models.json" in plan_turn(Context(messages=[UserMessage(content="hi")])).text


def test_demo_does_not_repeat_tool_output_the_tool_box_shows() -> None:
    output = "\n".join(f"file_{i}.py" for i in range(30))
    result = ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text=output)], is_error=False)
    turn = plan_turn(Context(messages=[UserMessage(content="list files"), result]))
    assert "30 lines" in turn.text and "`file_0.py`" in turn.text
    assert "file_5.py" not in turn.text and "file_29.py" not in turn.text and "```" not in turn.text


async def test_resume_after_tree_navigation_restores_the_thinking_level_the_footer_showed(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("First."), FauxResponse.text("Second."))
    session = await open_session(project, model_a)
    session.models.set_thinking("high")
    await session.prompt("one")
    session.models.set_thinking("low")
    await session.prompt("two")
    high_point = next(n for n in session.tree() if n.kind == "assistant")
    session.navigate(high_point.id)  # that branch point was recorded with "high"
    assert session.thinking_level == "low"  # what the footer shows
    path = session.session_file
    await session.close()
    assert path is not None
    resumed = await open_session(project, model_a, session=str(path))
    assert resumed.thinking_level == "low"
    assert [m.role for m in resumed.messages] == ["user", "assistant"]
    await resumed.close()


async def test_handoff_preview_counts_only_what_the_switch_loses(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider
) -> None:
    # A turn that failed is skipped for every model, the current one included: switching
    # loses nothing more, so the preview is empty and /model switches without asking.
    faux_a.add(FauxResponse.error("server exploded"), FauxResponse.text("Fine now."))
    session = await open_session(project, model_a, extra_models=[model_a, model_b],
                                 settings={"retry": {"enabled": False}})
    await session.prompt("first")
    await session.prompt("second")
    assert session.models.handoff_preview(model_b).is_empty
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/model model-b")
        await wait_until(pilot, lambda: session.model.ref == model_b.ref, what="the switch without a question")
        assert "handoff:" not in screen_text(app)
    await session.close()


async def test_read_box_does_not_claim_more_lines_than_it_shows(project: Path, model_a: Model,
                                                               faux_a: FauxProvider) -> None:
    (project / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 201)))
    faux_a.add(FauxResponse.tool_call("read", {"path": "notes.txt"}), FauxResponse.text("Read it."))
    session = await open_session(project, model_a, tools=["read"])
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await submit(pilot, app, "read notes")
        await settle(pilot, app)
        text = screen_text(app)
        assert "lines 1-200 of 200" in text
        assert "more lines" not in text
        assert "Ctrl+O shows the 200 lines" in text
    await session.close()


async def test_model_command_names_the_missing_key(project: Path, model_a: Model,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(150, 40)) as pilot:
        await submit(pilot, app, "/model openai/gpt-4o")
        await wait_until(pilot, lambda: "needs an API key" in screen_text(app), what="the missing-key notice")
        assert "OPENAI_API_KEY" in screen_text(app)
        assert session.model.ref == model_a.ref
    await session.close()


async def test_model_picker_lists_keyless_models_dimmed_in_columns(project: Path, model_a: Model,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(150, 40)) as pilot:
        await submit(pilot, app, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the model picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        rows = [item.label.plain for item in picker.items]
        assert rows[0].startswith("● prov-a/model-a")
        keyless = [r for r in rows if r.rstrip().endswith("no key") and "openai/" in r]
        assert keyless, "models without a key are listed and marked"
        # columns: the context column starts at the same offset on every row
        offsets = {r.index(" ctx") for r in rows}
        assert len(offsets) == 1, offsets
        await pilot.press(*"gpt-4o")
        await wait_until(pilot, lambda: "set OPENAI_API_KEY" in screen_text(app), what="the detail line")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "needs an API key" in screen_text(app), what="the refusal")
        assert session.model.ref == model_a.ref
    await session.close()


async def test_context_command_shows_what_fills_the_window(project: Path, model_a: Model,
                                                          faux_a: FauxProvider) -> None:
    (project / "notes.txt").write_text("alpha beta gamma\n" * 400)
    faux_a.add(FauxResponse.tool_call("read", {"path": "notes.txt"}), FauxResponse.text("Read it."))
    session = await open_session(project, model_a, tools=["read", "bash"])
    await session.prompt("read notes")
    breakdown = session.context_breakdown()
    parts = {p.label: p.tokens for p in breakdown.parts}
    assert parts["Tool results"] > parts["User messages"] > 0
    assert parts["Tool definitions"] > 0 and parts["System prompt"] > 0
    assert breakdown.total == sum(parts.values()) and breakdown.window == model_a.context_window
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await submit(pilot, app, "/context")
        await wait_until(pilot, lambda: "Tool definitions" in screen_text(app), what="the breakdown")
        text = screen_text(app)
        for label in ("System prompt", "Tool results", "User messages", "Free"):
            assert label in text
        assert "/ 200k" in text
    await session.close()


def test_write_shows_the_end_of_the_file_while_its_arguments_stream() -> None:
    from baton.tui.app.widgets.tool_render import WRITE_PREVIEW_LINES, args_body

    content = "".join(f"def f{i}():\n    return {i}\n" for i in range(20))
    body = args_body("write", {"path": "gen.py", "content": content})
    assert body is not None
    lines = body.plain.split("\n")
    assert lines[0] == f"… {41 - WRITE_PREVIEW_LINES} lines above"
    assert lines[-2:] == ["    return 19", ""] or lines[-1] == "    return 19"
    assert body.spans, "the code is syntax-highlighted"
    assert args_body("write", {"path": "gen.py"}) is None  # nothing streamed yet


async def test_answer_links_show_their_address_and_quotes_do_not_look_like_prompts(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("See [the docs](https://example.com/guide) and <https://x.org>.\n\n> quoted words"))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "links?")
        await settle(pilot, app)
        text = screen_text(app)
        assert "the docs (https://example.com/guide)" in text
        assert "https://x.org (https://x.org)" not in text
        lines = app.transcript._lines
        quote = next(line for line in lines if "quoted words" in line.text)
        prompt = next(line for line in lines if "links?" in line.text)
        quote_styles = [seg.style for seg in quote if seg.style is not None and seg.text.strip()]
        # A prompt sits on a raised background behind a bar; a quote is muted italic text on none.
        assert any(style.bgcolor is not None for style in (seg.style for seg in prompt) if style)
        assert all(style.bgcolor is None for style in quote_styles)
        assert any(style.italic for style in quote_styles if "quoted" in quote.text)
    await session.close()


async def test_theme_setting_applies_and_theme_command_saves(project: Path, model_a: Model,
                                                             baton_home: Path) -> None:
    import json

    session = await open_session(project, model_a, settings={"theme": "light"})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause(0.05)
        assert app.theme == "textual-light"
        await submit(pilot, app, "/theme dark")
        await wait_until(pilot, lambda: app.theme == "textual-dark", what="the dark theme")
        await submit(pilot, app, "/theme nord")
        await wait_until(pilot, lambda: app.theme == "nord", what="a Textual theme")
        await submit(pilot, app, "/theme no-such-theme")
        await wait_until(pilot, lambda: "Unknown theme" in screen_text(app), what="the refusal")
    await session.close()
    assert json.loads((baton_home / "settings.json").read_text())["theme"] == "nord"


async def test_the_editor_takes_keys_before_the_session_is_open_and_the_prompt_waits(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    import asyncio

    faux_a.add(FauxResponse.text("Answered after start-up."))
    release = asyncio.Event()
    opened: list[CodingSession] = []

    async def opener(picked: Path | None) -> CodingSession:
        await release.wait()
        session = await open_session(project, model_a)
        opened.append(session)
        return session

    app = BatonApp(opener=opener, cwd=project)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press(*"typed early")
        await pilot.pause(0.05)
        assert not app.is_open and app.editor.text == "typed early"
        assert "baton" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "waiting for start-up" in screen_text(app), what="the queued prompt")
        release.set()
        await wait_until(pilot, lambda: "Answered after start-up." in screen_text(app), what="the answer")
        assert faux_a.calls == 1
    for session in opened:
        await session.close()


async def test_a_failure_to_open_the_session_ends_the_app_with_the_error(project: Path) -> None:
    async def opener(picked: Path | None) -> CodingSession:
        raise ValueError("the session file is broken")

    app = BatonApp(opener=opener, cwd=project)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(pilot, lambda: app.open_error is not None, what="the failure")
    assert isinstance(app.open_error, ValueError) and app.return_code == 2

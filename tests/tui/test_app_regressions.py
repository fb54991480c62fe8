"""Regression tests for bugs found using the app as a demanding user would (pilot, faux models)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.providers.messages import Context
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import BashExecutionView, UserMessageView
from tests.tui.app_helpers import (
    one_view,
    open_session,
    screen_text,
    settle,
    stored_messages,
    submit,
    views,
    wait_until,
)

PROSE = " ".join(f"word{i}" for i in range(120))


async def test_tab_queues_a_follow_up_while_the_agent_works(project: Path, model_a: Model) -> None:
    # Terminals without the kitty keyboard protocol deliver Alt+Enter as Enter (a steer): Tab
    # is the follow-up key that works everywhere. The first reply waits for the follow-up to be
    # queued, so the run is still going when Tab is pressed however slow the machine is.
    queued = asyncio.Event()

    async def reply(context: Context, model: Model) -> FauxResponse:
        if len(context.messages) == 1:
            await queued.wait()
            return FauxResponse.text("First answer " + PROSE)
        return FauxResponse.text("Follow-up answer.")

    with FauxProvider("faux-a", reply, chunk_size=8) as faux:
        session = await open_session(project, model_a)
        app = BatonApp(session)
        async with app.run_test(size=(110, 40)) as pilot:
            await submit(pilot, app, "first")
            await wait_until(pilot, lambda: "Tab queues a follow-up" in screen_text(app), what="the working line")
            app.editor.set_text("then do Y\nand Z")
            assert app.is_busy
            await pilot.press("tab")
            await wait_until(pilot, lambda: bool(app.activity.queue), what="the queued follow-up")
            assert app.activity.queue == [("follow-up", "then do Y\nand Z")]
            await wait_until(pilot, lambda: "follow-up: then do Y (+1 line)" in screen_text(app),
                             what="the queue line")
            assert app.editor.text == ""
            queued.set()
            await settle(pilot, app, timeout=20)
            assert "First answer" in screen_text(app) and "Follow-up answer." in screen_text(app)
            assert [v.text for v in views(app, UserMessageView)] == ["first", "then do Y\nand Z"]
            await pilot.press(*"idle", "tab")
            await pilot.pause(0.05)
            assert app.editor.text == "idle" and faux.calls == 2, "idle: Tab does not send"
        await session.close()
    assert session.session_file is not None
    assert [m["role"] for m in stored_messages(session.session_file)] == ["user", "assistant", "user", "assistant"]


async def test_sending_while_scrolled_up_jumps_to_the_answer(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("\n\n".join(f"Paragraph {i}." for i in range(80))),
               FauxResponse.text("The fresh answer."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"long please", "enter")
        await settle(pilot, app)
        transcript = app.transcript
        await pilot.press("pageup", "pageup", "pageup")
        await pilot.pause(0.05)
        page = transcript.scrollable_content_region.height
        assert transcript.max_scroll_y - transcript.scroll_y == 3 * page, "each Page Up moves a whole page"
        await pilot.press(*"next", "enter")
        await settle(pilot, app)
        assert "The fresh answer." in screen_text(app)
        assert transcript.scroll_y == transcript.max_scroll_y
    await session.close()


async def test_aborted_shell_command_says_aborted(project: Path, model_a: Model) -> None:
    pid_file = project / "pid"
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, f"!echo $$ > {pid_file}; echo started; sleep 30")
        await wait_until(pilot, lambda: "started" in screen_text(app), what="the command's output")
        await pilot.press("escape")
        await settle(pilot, app)
        view = one_view(app, BashExecutionView)
        text = screen_text(app)
        assert "aborted" in text
        assert "failed" not in text and "cancelled" not in text, text
        assert view is not None
    pid = int(pid_file.read_text().strip())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    await session.close()


async def test_startup_shows_session_warnings(project: Path, model_a: Model, tmp_path: Path) -> None:
    path = tmp_path / "damaged.jsonl"
    lines = [
        {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": str(project)},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "kept question", "timestamp": 1}},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n{this is not json\n", encoding="utf-8")
    session = await open_session(project, model_a, session=str(path))
    assert session.warnings, "the broken line is reported by the session"
    app = BatonApp(session)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "kept question" in text
        assert f"⚠ {session.warnings[0]}"[:50] in text, text
    await session.close()


async def test_a_model_without_api_key_is_pointed_out(
    project: Path, faux_a: FauxProvider, monkeypatch: object
) -> None:
    model = faux_model("remote", provider="nokeyprov", api="faux-a").model_copy(
        update={"base_url": "https://api.nokeyprov.invalid/v1"})
    session = await CodingSession.open(SessionOptions(
        cwd=project, model=model, tools=[], session="none", context_files=False,
        settings=validate_settings({}),
    ))
    app = BatonApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause(0.05)
        assert "No API key for nokeyprov: set NOKEYPROV_API_KEY" in screen_text(app)
    await session.close()


async def test_compaction_is_announced_once_with_its_gist(project: Path, model_a: Model,
                                                          faux_a: FauxProvider) -> None:
    faux_a.add(*(FauxResponse.text(f"Answer number {i}. " + "detail " * 40) for i in range(3)))
    faux_a.add(FauxResponse.text("## Goal\nKeep the numbers straight."), FauxResponse.text("## Turn\nPrefix."))
    session = await open_session(project, model_a, settings={"compaction": {"keepRecentTokens": 50}})
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        for i in range(3):
            await submit(pilot, app, f"question {i}")
            await settle(pilot, app)
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: "summarised" in screen_text(app), what="the compaction notice")
        await settle(pilot, app)
        text = screen_text(app)
        assert text.count("Earlier conversation compacted") == 1, text
        assert "Keep the numbers straight." in text
    await session.close()


async def test_two_quick_enters_queue_the_second_message(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    # A paste in a terminal without bracketed paste (or fast typing) sends lines back to back:
    # the second must be queued for the run the first starts, not fail with "the session is
    # already running".
    faux_a.add(FauxResponse.text("First answer " + PROSE, delay=0.005), FauxResponse.text("Second answer."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        from baton.tui.app.widgets.editor import PromptEditor

        app.post_message(PromptEditor.Submitted("one"))
        app.post_message(PromptEditor.Submitted("two"))
        await pilot.pause(0.05)
        await settle(pilot, app, timeout=20)
        text = screen_text(app)
        assert "Could not send" not in text
        assert [v.text for v in views(app, UserMessageView)] == ["one", "two"]
        assert app.activity.queue == []
    await session.close()
    sent = [str(m.content) for m in faux_a.requests[0].messages]
    assert any("'one'" in m for m in sent) and any("'two'" in m for m in sent)


class _Suspension:
    """Stands in for ``App.suspend`` in a headless test, with Textual's semantics: the app
    resumes only when the ``with`` block ends normally."""

    def __init__(self) -> None:
        self.suspended = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        self.suspended = True
        yield
        self.suspended = False


async def test_ctrl_g_edits_in_editor_and_survives_a_broken_one(
    project: Path, model_a: Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = project / "fake-editor.sh"
    script.write_text('#!/bin/sh\nprintf " and more\\nsecond line\\n" >> "$1"\n', encoding="utf-8")
    script.chmod(0o755)
    failing = project / "failing-editor.sh"
    failing.write_text("#!/bin/sh\necho junk > \"$1\"\nexit 1\n", encoding="utf-8")
    failing.chmod(0o755)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    suspension = _Suspension()
    async with app.run_test(size=(120, 30)) as pilot:
        monkeypatch.setattr(app, "suspend", suspension)
        monkeypatch.setenv("EDITOR", str(script))
        await pilot.press(*"draft", "ctrl+g")
        await wait_until(pilot, lambda: "second line" in app.editor.text, what="the edited text")
        assert app.editor.text == "draft and more\nsecond line"
        monkeypatch.setenv("EDITOR", str(project / "no-such-editor"))
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "Cannot open $EDITOR" in screen_text(app), what="the notice")
        assert not suspension.suspended, "the app must come back after an editor that cannot start"
        assert app.editor.text == "draft and more\nsecond line"
        monkeypatch.setenv("EDITOR", str(failing))
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: "exited with status 1" in screen_text(app), what="the notice")
        assert app.editor.text == "draft and more\nsecond line", "a failed edit keeps the prompt"
    await session.close()


async def test_an_open_sessions_prompts_are_in_the_history_once(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("One."), FauxResponse.text("Two."))
    session = await open_session(project, model_a)
    await session.prompt("first question")
    await session.prompt("second question")
    app = BatonApp(session)  # given a session that is open already (as `baton -c` and /resume do)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        assert app.editor.prompt_history == ["first question", "second question"]
        await pilot.press("up")
        assert app.editor.text == "second question"
        await pilot.press("up")
        assert app.editor.text == "first question"
    await session.close()

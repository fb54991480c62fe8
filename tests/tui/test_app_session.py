"""Pilot tests of the interactive app driving a real CodingSession on faux models."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, faux_text, faux_thinking, faux_tool_call, hold_at
from baton.providers.messages import UserMessage
from baton.providers.models import Model
from baton.tui.app.baton_app import QUIT_WINDOW, BatonApp
from baton.tui.app.widgets.messages import AssistantMessageView, UserMessageView, user_text
from baton.tui.app.widgets.pickers import ConfirmScreen
from baton.tui.app.widgets.tool_call import ToolCallView
from tests.tui.app_helpers import (
    one_view,
    open_session,
    screen_text,
    settle,
    stored_entries,
    stored_messages,
    submit,
    views,
    wait_until,
)

PROSE = " ".join(f"word{i}" for i in range(120))


async def test_a_prompt_streams_text(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    partial_seen = asyncio.Event()
    faux_a.add(FauxResponse.text("First part of the answer. " + PROSE + " THE END", hold=hold_at(20, partial_seen)))
    session = await open_session(project, model_a)
    path = session.session_file
    assert path is not None
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"hello there", "enter")
        await wait_until(pilot, lambda: "First part of the answer." in screen_text(app), what="partial text")
        assert session.is_running, "the text should appear while the model is still streaming"
        assert "THE END" not in screen_text(app)
        partial_seen.set()
        await settle(pilot, app)
        text = screen_text(app)
        assert "hello there" in text
        assert "THE END" in text
        assert app.editor.text == ""
    await session.close()
    stored = stored_messages(path)
    assert [m["role"] for m in stored] == ["user", "assistant"]


async def test_tool_call_renders_args_live_then_result(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    target = project / "notes.txt"
    target.write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    args_seen = asyncio.Event()  # the arguments stop streaming half-way until the test saw them
    faux_a.add(
        FauxResponse(content=[faux_tool_call("edit", {"path": "notes.txt", "oldText": "beta\n",
                                                      "newText": "BETA-CHANGED\n" + "x" * 300 + "\n"})],
                     chunk_size=4, hold=hold_at(30, args_seen)),
        FauxResponse.text("Edited."),
    )
    session = await open_session(project, model_a, tools=["read", "edit", "write", "bash"])
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"change beta", "enter")
        await wait_until(pilot, lambda: "- beta" in screen_text(app), what="the diff forming")
        calls = views(app, ToolCallView)
        assert calls and calls[0].state == "streaming", "args are shown while they still stream"
        assert "edit notes.txt" in screen_text(app)
        args_seen.set()
        await settle(pilot, app)
        view = one_view(app, ToolCallView)
        assert view.state == "done"
        text = screen_text(app)
        assert "✓ edit notes.txt" in text
        assert "BETA-CHANGED" in text
        assert "Edited." in text
        # the result diff carries line numbers from the tool's details
        assert any(line.strip().startswith(("+ 2", "+2")) for line in text.splitlines()), text
    assert target.read_text(encoding="utf-8").startswith("alpha\nBETA-CHANGED\n")
    await session.close()


async def test_bash_output_shown_with_exit_code(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.tool_call("bash", {"command": "for i in 1 2 3; do echo line$i; done; exit 3"}),
               FauxResponse.text("It failed."))
    session = await open_session(project, model_a, tools=["bash"])
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"run", "enter")
        await settle(pilot, app)
        text = screen_text(app)
        assert "$ for i in 1 2 3" in text
        assert "line3" in text
        assert "exit 3" in text
        assert one_view(app, ToolCallView).state == "error"
    await session.close()


async def test_ctrl_c_mid_stream_aborts_and_keeps_partial(project: Path, model_a: Model,
                                                          faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Partial answer begins here. " + PROSE * 5, hold=hold_at(20, asyncio.Event())))
    session = await open_session(project, model_a)
    path = session.session_file
    assert path is not None
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"tell me everything", "enter")
        await wait_until(pilot, lambda: "Partial answer begins here." in screen_text(app), what="partial text")
        await pilot.press("ctrl+c")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Aborted" in text
        assert "Partial answer begins here." in text
        assert app.is_running, "Ctrl+C during a run aborts; it does not quit"
        view = views(app, AssistantMessageView)[-1]
        assert view.message is not None and view.message.stop_reason == "aborted"
    await session.close()
    assistant = [m for m in stored_messages(path) if m["role"] == "assistant"]
    assert assistant[-1]["stopReason"] == "aborted"
    saved_text = "".join(b.get("text", "") for b in assistant[-1]["content"])
    assert saved_text.startswith("Partial answer begins here.")


async def test_escape_aborts_a_run(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Streaming slowly " + PROSE * 5, hold=hold_at(20, asyncio.Event())))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: "Streaming slowly" in screen_text(app), what="partial text")
        await pilot.press("escape")
        await settle(pilot, app)
        assert "Aborted" in screen_text(app)
    await session.close()


async def test_model_switch_across_apis_shows_handoff_then_answers(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    faux_a.add(FauxResponse(content=[faux_thinking("Let me think about it.", "sig-1"), faux_text("Answer from A.")]))
    faux_b.add(FauxResponse.text("Answer from B."))
    session = await open_session(project, model_a, extra_models=[model_a, model_b])
    path = session.session_file
    assert path is not None
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"first question", "enter")
        await settle(pilot, app)
        assert "Answer from A." in screen_text(app)

        await submit(pilot, app, "/model model-b")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the handoff preview")
        assert "1 thinking block sent as text" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.model.id == "model-b", what="the switch")
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "prov-a/model-a → prov-b/model-b" in text
        assert "prov-b/model-b" in text.splitlines()[-2], "the status bar shows the new model"

        await pilot.press(*"second question", "enter")
        await settle(pilot, app)
        assert "Answer from B." in screen_text(app)
    await session.close()
    # model B received the whole conversation, thinking sent as text
    request = faux_b.requests[0]
    sent = [m.role for m in request.messages]
    assert sent == ["user", "assistant", "user"]
    assert "Let me think about it." in str(request.messages[1].content)
    entries = stored_entries(path)
    assert any(e["type"] == "model_change" and e["modelId"] == "model-b" for e in entries)


async def test_model_picker_shows_preview_for_highlighted_model(
    project: Path, model_a: Model, model_b: Model, faux_a: FauxProvider, faux_b: FauxProvider
) -> None:
    faux_a.add(FauxResponse(content=[faux_thinking("Hmm.", "sig"), faux_text("A says hi.")]))
    session = await open_session(project, model_a, extra_models=[model_a, model_b])
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(pilot, app)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: "Switch model" in screen_text(app), what="the picker")
        assert "(current model)" in screen_text(app)
        await pilot.press(*"model-b")
        await pilot.pause(0.05)
        assert "1 thinking block sent as text" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: session.model.id == "model-b", what="the switch")
    await session.close()


async def test_steering_message_is_queued_visible_then_delivered(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    steer_queued = asyncio.Event()
    faux_a.add(FauxResponse.text("Working on the first request " + PROSE * 4, hold=hold_at(20, steer_queued)),
               FauxResponse.text("Steered answer."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: "Working on the first" in screen_text(app), what="streaming")
        await submit(pilot, app, "please also do X")
        await pilot.pause(0.05)
        assert app.activity.queue == [("steer", "please also do X")]
        assert "steer: please also do X" in screen_text(app)
        steer_queued.set()
        await settle(pilot, app, timeout=20)
        assert app.activity.queue == []
        text = screen_text(app)
        assert "Steered answer." in text
        users = [v.text for v in views(app, UserMessageView)]
        assert users == ["first", "please also do X"]
    await session.close()
    assert any("please also do X" in str(m.content) for m in faux_a.requests[1].messages)


async def test_alt_up_pulls_queued_messages_back(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Long running " + PROSE * 5, hold=hold_at(20, asyncio.Event())))
    session = await open_session(project, model_a)
    path = session.session_file
    assert path is not None
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: "Long running" in screen_text(app), what="streaming")
        await submit(pilot, app, "queued one")
        await pilot.press("alt+enter")  # empty editor: nothing to queue
        app.editor.set_text("queued two")
        await pilot.press("alt+enter")
        await pilot.pause(0.05)
        assert app.activity.queue == [("steer", "queued one"), ("follow-up", "queued two")]
        await pilot.press("alt+up")
        await pilot.pause(0.05)
        assert app.editor.text == "queued one\n\nqueued two"
        assert app.activity.queue == []
        await pilot.press("escape")
        await settle(pilot, app)
    await session.close()
    assert [m["role"] for m in stored_messages(path)] == ["user", "assistant"]


async def test_shell_command_output_added_to_context(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("I saw it."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 40)) as pilot:
        await submit(pilot, app, "!echo from-the-shell")
        await settle(pilot, app)
        assert "from-the-shell" in screen_text(app)
        await submit(pilot, app, "!!echo private")
        await settle(pilot, app)
        assert "not sent to the model" in screen_text(app)
        await pilot.press(*"what did you see", "enter")
        await settle(pilot, app)
    await session.close()
    sent = str(faux_a.requests[0].messages)
    assert "from-the-shell" in sent
    assert "private" not in sent


async def test_resume_real_pi_session_shows_recent_and_loads_earlier(
    project: Path, model_a: Model, pi_sessions: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "resumed.jsonl"
    shutil.copyfile(pi_sessions / "before-compaction.jsonl", copy)
    session = await open_session(project, model_a, session=str(copy))
    app = BatonApp(session)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.pause(0.1)
        transcript = app.transcript
        assert len(transcript.entries) > 100
        assert transcript.first_mounted > 0, "only the most recent entries are mounted"
        mounted = len(transcript.mounted_views)
        assert mounted <= transcript.PAGE * 3
        assert "earlier entries · scroll up to show" in transcript.text
        last_user = next(m for m in reversed(session.messages) if isinstance(m, UserMessage))
        last_text = user_text(last_user.content)
        assert any(isinstance(w, UserMessageView) and w.text == last_text for w in transcript.mounted_views)
        calls = [v for w in transcript.mounted_views if isinstance(w, AssistantMessageView) for v in w.tool_views]
        assert calls and all(v.header_text[0] in "✓✗–" for v in calls), [v.header_text for v in calls]
        first_before = transcript.first_mounted
        transcript.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: transcript.first_mounted < first_before, what="earlier entries")
        assert len(transcript.mounted_views) > mounted
    await session.close()


async def test_unknown_command_says_so(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, app, "/frobnicate now")
        await pilot.pause(0.1)
        assert "Unknown command: /frobnicate" in screen_text(app)
        assert faux_a.calls == 0
    await session.close()


async def test_session_and_hotkeys_commands(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Fine."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 60)) as pilot:
        await pilot.press(*"hi", "enter")
        await settle(pilot, app)
        await submit(pilot, app, "/session")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert session.session_id in text
        assert "1 user · 1 assistant" in text
        await submit(pilot, app, "/hotkeys")
        await pilot.pause(0.1)
        assert "Shift+Tab" in screen_text(app)
    await session.close()


async def test_name_copy_export(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("The answer is 42."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await pilot.press(*"question", "enter")
        await settle(pilot, app)
        await submit(pilot, app, "/name my work")
        await pilot.pause(0.1)
        assert session.session_name == "my work"
        await submit(pilot, app, "/copy")
        await pilot.pause(0.1)
        assert app.clipboard == "The answer is 42."
        await submit(pilot, app, "/export out.md")
        await wait_until(pilot, lambda: (project / "out.md").exists(), what="the export")
    assert "The answer is 42." in (project / "out.md").read_text(encoding="utf-8")
    await session.close()


async def test_new_session_clears_transcript(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Old answer."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"old", "enter")
        await settle(pilot, app)
        first_file = session.session_file
        await submit(pilot, app, "/new")
        await wait_until(pilot, lambda: session.session_file != first_file, what="a new session")
        await pilot.pause(0.1)
        assert "Old answer." not in screen_text(app)
        assert "New session started." in screen_text(app)
    await session.close()


async def test_fork_puts_message_back_in_editor(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("One."), FauxResponse.text("Two."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"first", "enter")
        await settle(pilot, app)
        await pilot.press(*"second", "enter")
        await settle(pilot, app)
        await submit(pilot, app, "/fork")
        await wait_until(pilot, lambda: "Fork from a message" in screen_text(app), what="the fork picker")
        await pilot.press("enter")  # the most recent user message is listed first
        await wait_until(pilot, lambda: app.editor.text == "second", what="the message in the editor")
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "One." in text and "Two." not in text
    await session.close()


async def test_thinking_cycle_and_toggle(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse(content=[faux_thinking("secret chain of thought"), faux_text("Visible.")]))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        before = session.thinking_level
        await pilot.press("ctrl+r")
        await pilot.pause(0.05)
        assert session.thinking_level != before
        assert f"thinking {session.thinking_level}" in screen_text(app)
        await pilot.press(*"q", "enter")
        await settle(pilot, app)
        assert "secret chain of thought" not in screen_text(app)
        assert "Thought" in screen_text(app)
        await pilot.press("ctrl+t")
        await pilot.pause(0.05)
        assert "secret chain of thought" in screen_text(app)
    await session.close()


async def test_ctrl_c_clears_then_quits(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        await pilot.pause(QUIT_WINDOW + 0.3)
        assert app.editor.text == ""
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert app.is_running, "a press after the notice is gone does not quit"
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
    assert app.return_code == 0
    await session.close()


async def test_ctrl_d_on_empty_editor_quits(project: Path, model_a: Model) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"ab", "ctrl+d")
        await pilot.pause(0.05)
        assert app.is_running, "Ctrl+D with text deletes, it does not quit"
        app.editor.set_text("")
        await pilot.press("ctrl+d")
        await pilot.pause(0.1)
    assert app.return_code == 0
    await session.close()


async def test_initial_prompt_is_sent(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Started right away."))
    session = await open_session(project, model_a)
    app = BatonApp(session, initial_prompt="kick off")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: faux_a.calls == 1, what="the initial prompt")
        await settle(pilot, app)
        text = screen_text(app)
        assert "kick off" in text and "Started right away." in text
    await session.close()


async def test_demo_model_says_so(project: Path, faux_a: FauxProvider) -> None:
    from baton.providers.faux import faux_model

    demo = faux_model("demo", provider="demo", api="faux-a")
    session = await open_session(project, demo)
    app = BatonApp(session)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "offline demo model" in text.lower()
        assert "Offline demo model: no API key" in text
    await session.close()

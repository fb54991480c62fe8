"""The app shows the session's state from the session's events (issue 24, item 2): the queue line
from ``queue_changed``, retry notices from the numbers the retry events carry, and one busy
state for prompts, agent runs, ``!commands`` and ``/compact``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse, hold_at
from baton.providers.models import Model
from baton.sessions.events import AutoRetryEndEvent, AutoRetryStartEvent, QueueChangedEvent
from baton.sessions.retry import RETRY_CANCELLED
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.messages import NoticeView, UserMessageView
from tests.replay_server import ReplayServer
from tests.replay_session import open_replay_session, overloaded_reply
from tests.tui.app_helpers import open_session, screen_text, settle, submit, views, wait_until

PROSE = " ".join(f"word{i}" for i in range(120))


def _users(app: BatonApp) -> list[str]:
    return [view.text for view in views(app, UserMessageView)]


async def test_a_steered_template_leaves_the_queue_line_when_it_is_delivered(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    # The app used to keep its own copy of the queue and strike a message off by matching the
    # delivered text with the typed one: a template (typed "/review app.py", delivered as its
    # expansion) stayed in the queue line until the whole run ended.
    prompts = project / ".baton" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file\n---\nReview $1 now.\n")
    first, second = asyncio.Event(), asyncio.Event()
    faux_a.add(FauxResponse.text("Working on it " + PROSE, hold=hold_at(20, first)),
               FauxResponse.text("Reviewing app.py " + PROSE, hold=hold_at(20, second)))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await submit(pilot, app, "start")
        await wait_until(pilot, lambda: "Working on it" in screen_text(app), what="the first answer")
        await submit(pilot, app, "/review app.py")
        await wait_until(pilot, lambda: bool(app.activity.queue), what="the queued template")
        assert app.activity.queue == [("steer", "Review app.py now.")]
        first.set()
        await wait_until(pilot, lambda: "Reviewing app.py" in screen_text(app), what="the steered answer")
        assert session.is_running, "the run goes on with the delivered message"
        assert _users(app) == ["start", "Review app.py now."]
        assert app.activity.queue == []
        assert "steer:" not in screen_text(app)
        second.set()
        await settle(pilot, app, timeout=20)
    await session.close()


async def test_steer_and_follow_up_leave_the_queue_line_as_each_is_delivered(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    first, second, third = asyncio.Event(), asyncio.Event(), asyncio.Event()
    faux_a.add(FauxResponse.text("Answer one " + PROSE, hold=hold_at(20, first)),
               FauxResponse.text("Answer two " + PROSE, hold=hold_at(20, second)),
               FauxResponse.text("Answer three " + PROSE, hold=hold_at(20, third)))
    session = await open_session(project, model_a)
    seen: list[QueueChangedEvent] = []
    session.subscribe(lambda event: seen.append(event) if isinstance(event, QueueChangedEvent) else None)
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        await submit(pilot, app, "start")
        await wait_until(pilot, lambda: "Answer one" in screen_text(app), what="the first answer")
        app.editor.set_text("later, Y")
        await pilot.press("alt+enter")  # a follow-up, typed first
        await submit(pilot, app, "now, X")  # a steering message
        await wait_until(pilot, lambda: len(app.activity.queue) == 2, what="both queued")
        assert app.activity.queue == [("steer", "now, X"), ("follow-up", "later, Y")]
        text = screen_text(app)
        assert "steer: now, X" in text and "follow-up: later, Y" in text
        first.set()
        await wait_until(pilot, lambda: "Answer two" in screen_text(app), what="the steered answer")
        assert app.activity.queue == [("follow-up", "later, Y")]
        second.set()
        await wait_until(pilot, lambda: "Answer three" in screen_text(app), what="the follow-up's answer")
        assert app.activity.queue == []
        third.set()
        await settle(pilot, app, timeout=20)
        assert _users(app) == ["start", "now, X", "later, Y"]
    await session.close()
    assert [(e.steering, e.follow_up) for e in seen] == [
        ((), ("later, Y",)), (("now, X",), ("later, Y",)), ((), ("later, Y",)), ((), ()),
    ]


async def test_retry_notices_show_the_numbers_the_retry_events_carry(project: Path) -> None:
    with ReplayServer(lambda _request: overloaded_reply()) as server:
        session = await open_replay_session(project, server, {"retry": {"baseDelayMs": 1, "maxRetries": 2}})
        starts: list[AutoRetryStartEvent] = []
        session.subscribe(lambda event: starts.append(event) if isinstance(event, AutoRetryStartEvent) else None)
        app = BatonApp(session)
        async with app.run_test(size=(110, 40)) as pilot:
            await submit(pilot, app, "hello")
            await settle(pilot, app)
            notices = [v.plain_text for v in app.transcript.mounted_views
                       if isinstance(v, NoticeView) and "Retrying" in v.plain_text]
        await session.close()
    # Both layers as one sequence: the adapter's three attempts, then one per session retry.
    assert [(e.source, e.attempt, e.max_attempts) for e in starts] == [
        ("provider", 1, 3), ("provider", 2, 3), ("session", 1, 2), ("session", 2, 2)]
    assert [f"{e.number}/{e.limit}" for e in starts] == ["1/5", "2/5", "3/5", "4/5"]
    assert [n.split("(attempt ")[1].split(")")[0] for n in notices] == ["1/5", "2/5", "3/5", "4/5"]


async def test_a_retry_aborted_while_waiting_says_cancelled_from_the_event(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.text("never sent"))
    session = await open_session(project, model_a, settings={"retry": {"baseDelayMs": 60_000, "maxRetries": 1}})
    ends: list[AutoRetryEndEvent] = []
    session.subscribe(lambda event: ends.append(event) if isinstance(event, AutoRetryEndEvent) else None)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "hello")
        await wait_until(pilot, lambda: "Retrying in" in screen_text(app), what="the retry notice")
        await pilot.press("escape")
        await settle(pilot, app)
        text = screen_text(app)
        assert text.count("Retry cancelled.") == 1
        assert "Retries exhausted" not in text, "attempt 1 of 1, but the user stopped it"
    await session.close()
    assert [(e.success, e.attempt, e.max_attempts, e.aborted, e.final_error) for e in ends] == [
        (False, 1, 1, True, RETRY_CANCELLED)]
    assert ends[0].to_dict() == {"type": "auto_retry_end", "success": False, "attempt": 1,
                                 "finalError": RETRY_CANCELLED}, "JSON mode prints pi's fields only"
    assert faux_a.calls == 1


async def test_a_retried_request_aborted_is_not_reported_as_retries_exhausted(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    retried = asyncio.Event()
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.text("Second try " + PROSE, hold=hold_at(20, retried)))
    session = await open_session(project, model_a, settings={"retry": {"baseDelayMs": 1, "maxRetries": 1}})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "hello")
        await wait_until(pilot, lambda: "Second try" in screen_text(app), what="the retried request")
        assert "(attempt 1/2)" in screen_text(app), "the adapter's one attempt, then the session's one retry"
        await pilot.press("escape")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Retries exhausted" not in text and "Retry cancelled" not in text
        assert app.busy.idle
    retried.set()
    await session.close()


async def test_one_busy_state_while_a_shell_command_runs(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("Sent after the command."))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "!sleep 30")
        await wait_until(pilot, lambda: "Running shell command" in screen_text(app), what="the activity line")
        assert app.is_busy and app.busy.shell_commands == 1
        assert not app.editor.running, "the agent does not work: Tab completes, it queues nothing"
        await submit(pilot, app, "a prompt")
        await wait_until(pilot, lambda: "Wait for the current command to finish" in screen_text(app),
                         what="the refusal")
        assert app.editor.text == "a prompt" and faux_a.calls == 0
        await submit(pilot, app, "/new")  # a command that waits for idle
        await wait_until(pilot, lambda: "/new is not available while" in screen_text(app), what="the refusal")
        await pilot.press("escape")  # aborts the command
        await settle(pilot, app)
        assert app.busy.idle and not app.activity.has_class("-running")
        await submit(pilot, app, "a prompt")
        await settle(pilot, app)
        assert "Sent after the command." in screen_text(app)
    await session.close()


async def test_one_busy_state_while_compacting_and_while_the_agent_works(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    summarised, answered = asyncio.Event(), asyncio.Event()
    faux_a.add(*(FauxResponse.text(f"Answer number {i}. " + "detail " * 40) for i in range(3)))
    faux_a.add(FauxResponse.text("## Goal\nKeep the numbers. " + PROSE, hold=hold_at(20, summarised)),
               FauxResponse.text("## Turn\nPrefix."))
    faux_a.add(FauxResponse.text("After compaction " + PROSE, hold=hold_at(20, answered)))
    session = await open_session(project, model_a, settings={"compaction": {"keepRecentTokens": 50}})
    app = BatonApp(session)
    async with app.run_test(size=(110, 40)) as pilot:
        for i in range(3):
            await submit(pilot, app, f"question {i}")
            await settle(pilot, app)
        assert app.busy.idle and not app.editor.running
        await submit(pilot, app, "/compact")
        await wait_until(pilot, lambda: app.busy.compacting, what="the compaction")
        assert app.is_busy and not app.editor.running, "no agent works: Tab completes"
        await submit(pilot, app, "/new")
        await wait_until(pilot, lambda: "/new is not available while" in screen_text(app), what="the refusal")
        await submit(pilot, app, "too early")  # the session is busy: it waits in the queue
        await wait_until(pilot, lambda: bool(app.activity.queue), what="the queued message")
        assert app.activity.queue == [("steer", "too early")]
        summarised.set()
        await settle(pilot, app)
        assert app.busy.idle and not app.activity.has_class("-running")
        assert app.activity.queue == [("steer", "too early")], "it goes with the next prompt"
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: not app.activity.queue, what="the queue taken back")
        assert app.editor.text == "too early"
        app.editor.set_text("")
        await submit(pilot, app, "next question")
        await wait_until(pilot, lambda: "After compaction" in screen_text(app), what="the answer")
        assert app.busy.prompting and app.busy.agent_running and app.editor.running
        await pilot.press("ctrl+c")  # aborts the run (a second press would quit)
        await settle(pilot, app)
        assert app.busy.idle and not app.editor.running and app.is_running
    answered.set()
    await session.close()

"""What a front end needs to show arrives in the session's events (issue 24, item 2): the queue
of steering and follow-up messages, and retries numbered across the adapter's and the
session's attempts."""

from __future__ import annotations

import asyncio

from baton.agent.events import MessageEndEvent, MessageStartEvent
from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import AssistantMessage, UserMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.events import AnySessionEvent, AutoRetryStartEvent, QueueChangedEvent
from baton.sessions.retry import RetryNumbering
from baton.sessions.settings import RetrySettings
from tests.sessions.conftest import quiet_settings


async def test_queue_changes_are_reported_and_nothing_else(options: SessionOptions, faux_a: FauxProvider) -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def hold(index: int) -> None:
        if index == 1:
            started.set()
            await release.wait()

    faux_a.add(FauxResponse.text("one two three four five six", hold=hold), FauxResponse.text("steered"),
               FauxResponse.text("followed"))
    session = await CodingSession.open(options)
    queues: list[QueueChangedEvent] = []
    session.subscribe(lambda e: queues.append(e) if isinstance(e, QueueChangedEvent) else None)
    run = asyncio.create_task(session.prompt("start"))
    await started.wait()
    session.steer("steer one")
    session.follow_up("follow one")
    session.steer("steer two")
    assert session.dequeue() == ["steer one", "steer two", "follow one"]
    session.dequeue()  # nothing queued: nothing to report
    session.steer("steer three")
    session.follow_up("follow two")
    release.set()
    await asyncio.wait_for(run, 10)
    await session.close()
    assert [(e.steering, e.follow_up) for e in queues] == [
        (("steer one",), ()),
        (("steer one",), ("follow one",)),
        (("steer one", "steer two"), ("follow one",)),
        ((), ()),
        (("steer three",), ()),
        (("steer three",), ("follow two",)),
        ((), ("follow two",)),  # the steering message was delivered
        ((), ()),  # then the follow-up
    ]
    assert queues[2].to_dict() == {"type": "queue_changed", "steering": ["steer one", "steer two"],
                                   "followUp": ["follow one"]}
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]


async def test_a_prompt_without_a_queue_reports_no_queue(options: SessionOptions, faux_a: FauxProvider) -> None:
    # JSON and print modes print every event: a run that queued nothing must add no line.
    faux_a.add(FauxResponse.text("hello"))
    session = await CodingSession.open(options)
    events: list[AnySessionEvent] = []
    session.subscribe(events.append)
    await session.prompt("hi")
    await session.close()
    assert not [e for e in events if isinstance(e, QueueChangedEvent)]


async def test_session_retries_carry_their_number_in_the_whole_sequence(
    options: SessionOptions, faux_a: FauxProvider
) -> None:
    options.settings = quiet_settings(retry={"maxRetries": 3, "baseDelayMs": 1})
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.error("503"), FauxResponse.text("done"),
               FauxResponse.error("overloaded"), FauxResponse.text("done again"))
    session = await CodingSession.open(options)
    starts: list[AutoRetryStartEvent] = []
    session.subscribe(lambda e: starts.append(e) if isinstance(e, AutoRetryStartEvent) else None)
    await session.prompt("first")
    await session.prompt("second")  # a new prompt counts from 1 again
    await session.close()
    assert [(e.attempt, e.max_attempts, e.number, e.limit) for e in starts] == [
        (1, 3, 1, 4), (2, 3, 2, 4), (1, 3, 1, 4)]
    assert "number" not in starts[0].to_dict() and "limit" not in starts[0].to_dict()


def test_retry_numbering_counts_both_layers_and_restarts_after_a_success() -> None:
    retry = RetrySettings(max_retries=2)
    numbering = RetryNumbering()
    assert [numbering.count("provider", 3, retry) for _ in range(2)] == [(1, 5), (2, 5)]
    assert numbering.count("session", 2, retry) == (3, 5)
    failed = AssistantMessage(api="x", provider="p", model="m", stop_reason="error", error_message="overloaded")
    numbering.observe(MessageEndEvent(message=failed))
    assert numbering.count("session", 2, retry) == (4, 5), "a failed answer continues the sequence"
    numbering.observe(MessageEndEvent(message=AssistantMessage(api="x", provider="p", model="m")))
    assert numbering.count("session", 2, retry) == (1, 3), "after a success the adapter's round is 1 again"
    numbering.observe(MessageStartEvent(message=UserMessage(content="next")))
    assert numbering.count("provider", 3, RetrySettings(enabled=False)) == (1, 3)

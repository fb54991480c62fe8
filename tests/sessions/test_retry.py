"""Auto-retry of transient provider errors: classification, backoff, cap, abort."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import AssistantMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.entries import MessageEntry
from baton.sessions.retry import is_retryable_error, retry_delay_ms, sleep_unless_aborted
from tests.sessions.conftest import quiet_settings


def _error(text: str) -> AssistantMessage:
    return AssistantMessage(api="x", provider="p", model="m", stop_reason="error", error_message=text)


@pytest.mark.parametrize(
    "text",
    [
        "529 overloaded_error: Overloaded",
        "Rate limit reached for requests",
        "429 Too Many Requests",
        "HTTP 503 Service Unavailable",
        "502 Bad Gateway",
        "Internal server error",
        "Connection reset by peer",
        "Server disconnected without sending a response.",
        "The read operation timed out",
    ],
)
def test_transient_errors_are_retryable(text: str) -> None:
    assert is_retryable_error(_error(text))


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",  # overflow: compaction's job
        "401 invalid x-api-key",
        "400 messages.0: unexpected field",
        "Your input has 500123 tokens",  # a number that merely contains 500
    ],
)
def test_other_errors_are_not_retried(text: str) -> None:
    assert not is_retryable_error(_error(text))


def test_aborted_and_successful_messages_are_not_retried() -> None:
    ok = AssistantMessage(api="x", provider="p", model="m", stop_reason="stop")
    aborted = AssistantMessage(api="x", provider="p", model="m", stop_reason="aborted", error_message="overloaded")
    assert not is_retryable_error(ok) and not is_retryable_error(aborted)


def test_backoff_doubles() -> None:
    assert [retry_delay_ms(n, 2000) for n in (1, 2, 3, 4)] == [2000, 4000, 8000, 16000]


async def test_sleep_returns_early_when_aborted() -> None:
    signal = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, signal.set)
    assert await sleep_unless_aborted(10_000, signal) is False
    assert await sleep_unless_aborted(1, asyncio.Event()) is True


async def test_retry_recovers_and_reports_attempts(options: SessionOptions, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.error("503 Service Unavailable"), FauxResponse.error("overloaded"),
               FauxResponse.text("finally"))
    session = await CodingSession.open(options)
    events: list[Any] = []
    session.subscribe(lambda e: events.append(e) if e.type.startswith("auto_retry") else None)
    await session.prompt("hi")
    assert [(e.type, e.attempt) for e in events] == [
        ("auto_retry_start", 1), ("auto_retry_start", 2), ("auto_retry_end", 2)]
    assert events[0].delay_ms == 1 and events[1].delay_ms == 2 and events[0].max_attempts == 3
    assert events[-1].success is True
    assert [m.role for m in session.messages] == ["user", "assistant"]  # the failures left the context
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == "finally"
    retried = faux_a.requests[-1].messages
    assert len(retried) == 1 and retried[0].role == "user"
    stored = [e.message.stop_reason for e in session.store.entries
              if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)]
    assert stored == ["error", "error", "stop"], "failed attempts stay in the file as history"
    await session.close()


async def test_retry_gives_up_after_max_retries(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = quiet_settings(retry={"maxRetries": 2, "baseDelayMs": 1})
    faux_a.add(*[FauxResponse.error("429 rate limit") for _ in range(3)], FauxResponse.text("never"))
    session = await CodingSession.open(options)
    events: list[Any] = []
    session.subscribe(lambda e: events.append(e) if e.type.startswith("auto_retry") else None)
    await session.prompt("hi")
    assert faux_a.calls == 3 and faux_a.remaining == 1
    end = events[-1]
    assert end.type == "auto_retry_end" and not end.success and end.attempt == 2
    assert end.final_error == "429 rate limit"
    await session.close()


async def test_abort_during_backoff_cancels_the_retry(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = quiet_settings(retry={"baseDelayMs": 60_000})
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.text("never"))
    session = await CodingSession.open(options)
    events: list[Any] = []

    def on_event(event: Any) -> None:
        if event.type == "auto_retry_start":
            asyncio.get_running_loop().call_later(0.02, session.abort)
        if event.type.startswith("auto_retry"):
            events.append(event)

    session.subscribe(on_event)
    await asyncio.wait_for(session.prompt("hi"), 5)
    assert events[-1].type == "auto_retry_end" and events[-1].final_error == "Retry cancelled"
    assert faux_a.calls == 1 and not session.is_running
    await session.close()


async def test_retry_disabled_leaves_the_error(options: SessionOptions, faux_a: FauxProvider) -> None:
    options.settings = quiet_settings(retry={"enabled": False})
    faux_a.add(FauxResponse.error("overloaded"))
    session = await CodingSession.open(options)
    await session.prompt("hi")
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error" and faux_a.calls == 1
    await session.close()

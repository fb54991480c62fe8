"""Automatic retry of transient provider errors (after the adapter's own retries gave up).

Retryable: overloaded, rate limits, 5xx / server errors, dropped connections and timeouts.
A stream that went idle is retried too. Never retried: context overflow (compaction handles
it), aborts, a ``Retry-After`` longer than ``retry.maxDelayMs`` (the adapter already failed on it
with the provider's message: retrying sooner than asked would only be refused again), a request
that ran past ``retry.requestTimeoutMs`` (the same stream would use the time up again), and
anything else (bad request, authentication, ...), which a retry cannot fix.

Two layers retry: the adapter retries a request that failed before streaming (``source="provider"``);
when those attempts are spent, the session retries the turn (``source="session"``), one request per
retry. :class:`RetryNumbering` numbers both as one sequence for the retry events.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from baton.agent.events import AgentEvent, MessageEndEvent, MessageStartEvent
from baton.providers.adapter import REQUEST_TIME_LIMIT, RETRY_AFTER_TOO_LONG
from baton.providers.messages import AssistantMessage, UserMessage
from baton.providers.options import StreamOptions
from baton.providers.overflow import is_context_overflow

if TYPE_CHECKING:
    from baton.sessions.settings import RetrySettings

_RETRYABLE = re.compile(
    r"overloaded|rate.?limit|too many requests|\b(?:429|500|502|503|504|520|522|524|529)\b"
    r"|service.?unavailable|server.?error|internal.?error|bad gateway|gateway.?time.?out"
    r"|connection.?(?:error|reset|refused|closed|aborted|lost)|other side closed|fetch failed"
    r"|upstream.?connect|reset before headers|econnreset|epipe|broken pipe|remote.?protocol"
    r"|server disconnected|timed?.?out|temporarily unavailable|try again later|stream idle",
    re.IGNORECASE,
)


def is_retryable_error(message: AssistantMessage, context_window: int = 0) -> bool:
    """True when ``message`` ended in a transient error worth retrying."""
    if message.stop_reason != "error" or not message.error_message:
        return False
    if is_context_overflow(message, context_window):
        return False
    if RETRY_AFTER_TOO_LONG in message.error_message or REQUEST_TIME_LIMIT in message.error_message:
        return False
    return _RETRYABLE.search(message.error_message) is not None


def is_failover_error(message: AssistantMessage, context_window: int = 0) -> bool:
    """True when ``message`` ended in an error another provider may not have: what is retried,
    and a ``Retry-After`` longer than the session waits. Authentication errors, bad requests,
    refusals, an overflow (compaction handles it) and a request past its time limit (the same
    answer would take as long elsewhere) are not."""
    if message.stop_reason != "error" or not message.error_message:
        return False
    if RETRY_AFTER_TOO_LONG in message.error_message:
        return not is_context_overflow(message, context_window)
    return is_retryable_error(message, context_window)


def retry_delay_ms(attempt: int, base_delay_ms: int) -> int:
    """Exponential backoff: ``base``, ``2 * base``, ``4 * base``... for attempts 1, 2, 3..."""
    return base_delay_ms * 2 ** max(attempt - 1, 0)


RETRY_CANCELLED = "Retry cancelled"
"""The ``final_error`` of ``auto_retry_end`` when the wait before a retry was aborted."""


async def sleep_unless_aborted(delay_ms: int, signal: asyncio.Event) -> bool:
    """Wait ``delay_ms``; returns ``False`` at once when ``signal`` is (or gets) set."""
    if signal.is_set():
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(signal.wait(), timeout=delay_ms / 1000)
    return not signal.is_set()


def retry_stream_options(retry: RetrySettings) -> StreamOptions:
    """The stream options the ``retry`` settings set: the longest ``Retry-After`` honoured, the
    stream idle timeout and the time limit of one request (in seconds); the rest are defaults."""
    return StreamOptions(
        max_retry_delay=retry.max_delay_ms / 1000,
        idle_timeout=retry.idle_timeout_ms / 1000,
        request_timeout=retry.request_timeout_ms / 1000 if retry.request_timeout_ms else None,
    )


@dataclass
class RetryNumbering:
    """The attempt numbers of one request's retries, counted across both layers.

    Each layer counts from 1, so a user would read ``attempt 1/3, 2/3``, an error, then ``1/2``
    again; this numbers them together: ``1/5, 2/5, 3/5...`` (the adapter's attempts of the first
    request, then one per session retry)."""

    failed: int = 0
    """Failed attempts since the last request that succeeded (or the last prompt)."""
    first_round: int = 1
    """The attempts the adapter allowed the first request (it does not retry the session's)."""

    def observe(self, event: AgentEvent) -> None:
        """A new user message, or an answer that did not fail, starts the count again."""
        match event:
            case MessageStartEvent(message=UserMessage()):
                self.reset()
            case MessageEndEvent(message=AssistantMessage(stop_reason=reason)) if reason != "error":
                self.reset()

    def reset(self) -> None:
        """The next failure is attempt 1."""
        self.failed = 0
        self.first_round = 1

    def count(self, source: Literal["session", "provider"], max_attempts: int, retry: RetrySettings) -> tuple[int, int]:
        """Count one failed attempt (the event's ``source`` and ``max_attempts``, and the session's
        ``retry`` settings); returns its number and the attempts allowed in all."""
        self.failed += 1
        if source == "provider":
            self.first_round = max(self.first_round, max_attempts)
        return self.failed, self.first_round + (retry.max_retries if retry.enabled else 0)

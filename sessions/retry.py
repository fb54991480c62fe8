"""Automatic retry of transient provider errors (after the adapter's own retries gave up).

Retryable: overloaded, rate limits, 5xx / server errors, dropped connections and timeouts.
A stream that went idle is retried too. Never retried: context overflow (compaction handles
it), aborts, a ``Retry-After`` longer than ``retry.maxDelayMs`` (the adapter already failed on it
with the provider's message: retrying sooner than asked would only be refused again), a request
that ran past ``retry.requestTimeoutMs`` (the same stream would use the time up again), and
anything else (bad request, authentication, ...), which a retry cannot fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import TYPE_CHECKING

from baton.providers.adapter import REQUEST_TIME_LIMIT, RETRY_AFTER_TOO_LONG
from baton.providers.messages import AssistantMessage
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

"""What a session does when a run of the agent ends, before the prompt returns.

In order, until the abort signal is set or nothing is left to do: a request the model refused for
its size is compacted and continued (once); a transient provider error is retried after a growing
wait (``retry`` settings; :mod:`sessions.retry` says which errors); a context past the threshold is
compacted. When the retries are spent (or the error is one a retry cannot wait out) and
``fallbackModels`` names a model that can be called, the turn goes on there
(:mod:`sessions.failover`). Then the Stop hooks may send the model back to work a bounded number
of times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from baton.providers.messages import AssistantMessage
from baton.sessions.events import AutoRetryEndEvent, AutoRetryStartEvent
from baton.sessions.retry import (
    RETRY_CANCELLED,
    is_failover_error,
    is_retryable_error,
    retry_delay_ms,
    sleep_unless_aborted,
)

if TYPE_CHECKING:
    from baton.agent.agent import Agent
    from baton.sessions.coding_session import CodingSession


async def finish_run(session: CodingSession) -> None:
    """Overflow recovery, auto-retry and threshold compaction after a run ended."""
    options = session.agent.stream_options
    adapter_attempts = options.max_retries
    try:
        await _recover(session, adapter_attempts)
    finally:
        options.max_retries = adapter_attempts


async def _recover(session: CodingSession, adapter_attempts: int) -> None:
    agent, events, signal = session.agent, session.events, session.abort_signal
    overflow_retried = False
    attempt = 0
    while not signal.is_set():
        last = last_assistant(agent)
        if last is None:
            break
        if not overflow_retried and _is_own_overflow(session, last):
            overflow_retried = True
            result = await session.compaction.run("overflow", will_retry=True)
            if result is None or signal.is_set():
                break
            await agent.continue_()
            continue
        retry = session.settings.retry
        if retry.enabled and is_retryable_error(last, session.model.context_window):
            attempt += 1
            if attempt > retry.max_retries:
                await events.emit(AutoRetryEndEvent(False, attempt - 1, last.error_message,
                                                    max_attempts=retry.max_retries))
                if await _fail_over(session, last, attempt, adapter_attempts):
                    attempt, overflow_retried = 0, False
                    continue
                break
            delay = retry_delay_ms(attempt, retry.base_delay_ms)
            number, limit = session.retry_numbering.count("session", retry.max_retries, retry)
            await events.emit(AutoRetryStartEvent(attempt, retry.max_retries, delay,
                                                  last.error_message or "Unknown error", number=number, limit=limit))
            _drop_trailing_error(agent)
            if not await sleep_unless_aborted(delay, signal):
                await events.emit(AutoRetryEndEvent(False, attempt, RETRY_CANCELLED, max_attempts=retry.max_retries,
                                                    aborted=True))
                break
            # The adapter already spent its own attempts on the first failure: each retry of
            # the session is one request, or a dead network costs attempts times rounds.
            agent.stream_options.max_retries = 1
            await agent.continue_()
            continue
        # Not retried here (retries off, or a wait longer than allowed): another provider now.
        if (attempt == 0 and is_failover_error(last, session.model.context_window)
                and await _fail_over(session, last, 1, adapter_attempts)):
            overflow_retried = False
            continue
        if attempt > 0:
            ok = last.stop_reason not in ("error", "aborted")
            await events.emit(AutoRetryEndEvent(ok, attempt, None if ok else last.error_message,
                                                max_attempts=retry.max_retries, aborted=last.stop_reason == "aborted"))
        if last.stop_reason not in ("error", "aborted") and await session.compaction.over_threshold():
            await session.compaction.run("threshold", will_retry=False)
        break


async def _fail_over(session: CodingSession, failed: AssistantMessage, attempts: int, adapter_attempts: int) -> bool:
    """Continue the turn on the next fallback model (``False``: none to go to)."""
    agent = session.agent
    if not await session.failover.take_over(failed, attempts):
        return False
    _drop_trailing_error(agent)  # the failed reply stays in the session file, not in the context
    agent.stream_options.max_retries = adapter_attempts  # a new provider gets its own attempts
    await agent.continue_()
    return True


async def run_stop_hooks(session: CodingSession) -> None:
    """Stop hooks may send the model back to work (a bounded number of times)."""
    rounds = 0
    signal = session.abort_signal
    while not signal.is_set():
        last = last_assistant(session.agent)
        if last is None or last.stop_reason in ("error", "aborted"):
            return
        follow = await session.extensions.stop_continuation(rounds)
        if follow is None or signal.is_set():
            return
        rounds += 1
        await session.agent.prompt(follow)
        await finish_run(session)


def provider_retry_notifier(session: CodingSession) -> Callable[[int, int, float, str], None]:
    """The adapter's ``on_retry``: it is retrying a request that failed before streaming
    anything (an ``auto_retry_start`` event with ``source="provider"``, numbered with the
    session's own retries)."""

    def notify(attempt: int, max_attempts: int, delay: float, error: str) -> None:
        number, limit = session.retry_numbering.count("provider", max_attempts, session.settings.retry)
        session.events.emit_soon(AutoRetryStartEvent(attempt, max_attempts, round(delay * 1000), error,
                                                     source="provider", number=number, limit=limit))

    return notify


def last_assistant(agent: Agent) -> AssistantMessage | None:
    """The last message of the branch when the model wrote it."""
    messages = agent.messages
    if messages and isinstance(messages[-1], AssistantMessage):
        return messages[-1]
    return None


def _is_own_overflow(session: CodingSession, message: AssistantMessage) -> bool:
    from baton.providers.overflow import is_context_overflow

    model = session.model
    if not session.settings.compaction.enabled or message.stop_reason != "error":
        return False
    if (message.provider, message.model) != (model.provider, model.id):
        return False  # an error from a model we have since left
    return is_context_overflow(message, model.context_window)


def _drop_trailing_error(agent: Agent) -> None:
    messages = agent.messages
    if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
        agent.replace_messages(messages[:-1])

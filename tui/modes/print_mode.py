"""Print mode: run one prompt, write only the final assistant text to stdout.

Progress (tool activity, retries, compactions) goes to stderr, and only when stderr is a
terminal. Ctrl+C aborts the run cleanly: the partial message is saved and the exit code is 1.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from baton.agent.events import MessageEndEvent, ToolExecutionEndEvent, ToolExecutionStartEvent
from baton.sessions.events import AutoCompactionStartEvent, AutoRetryStartEvent
from baton.sessions.permissions.events import ToolApprovalEvent, denial_line
from baton.tui.cli.args import EXIT_OK, EXIT_RUN_FAILED
from baton.tui.modes.json_lines import silence_stdout

if TYPE_CHECKING:
    from baton.providers.messages import AssistantMessage, ImageContent
    from baton.sessions import CodingSession


def install_interrupt_handler(on_interrupt: Callable[[], None]) -> Callable[[], None]:
    """Route SIGINT to ``on_interrupt`` (a second Ctrl+C exits at once); returns an uninstaller."""
    loop = asyncio.get_running_loop()
    presses = 0

    def handler() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            raise SystemExit(130)
        on_interrupt()

    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError):  # not the main thread / no signal support
        return lambda: None

    def uninstall() -> None:
        loop.remove_signal_handler(signal.SIGINT)

    return uninstall


class RunTracker:
    """Follows one run through its events: the last message the run added (the answer, or
    whatever it stopped at) and whether Ctrl+C interrupted it.

    Judging a run by the session's last assistant message is wrong twice over: a run aborted
    while a tool ran ends on a tool result (its last assistant message asked for the tool and
    looks like a success), and a run aborted before the model answered has no assistant message
    of its own (the previous run's answer would be printed again)."""

    def __init__(self) -> None:
        self.last_message: Any = None
        self.interrupted = False
        self.plan: str | None = None
        """The plan the model proposed with ``exit_plan_mode`` (plan mode), if it did."""

    def __call__(self, event: Any) -> None:
        if isinstance(event, MessageEndEvent):
            self.last_message = event.message
        elif getattr(event, "type", None) == "plan_proposed":
            self.plan = event.plan

    def interrupt(self, abort: Callable[[], None]) -> Callable[[], None]:
        """An interrupt handler that records the interruption, then calls ``abort``."""

        def handler() -> None:
            self.interrupted = True
            abort()

        return handler

    @property
    def answer(self) -> AssistantMessage | None:
        """The run's final assistant message, when the run ended on one."""
        from baton.providers.messages import AssistantMessage

        return self.last_message if isinstance(self.last_message, AssistantMessage) else None

    def outcome(self) -> tuple[int, str | None]:
        """Exit code and error line for how the run ended."""
        answer = self.answer
        if answer is not None:
            code, error = run_outcome(answer)
            if self.interrupted and code == EXIT_OK:
                return EXIT_RUN_FAILED, "aborted"
            return code, error
        if self.interrupted:
            return EXIT_RUN_FAILED, "aborted"
        if self.last_message is None:
            return EXIT_RUN_FAILED, "the run produced no answer"
        return EXIT_RUN_FAILED, "the run ended before the model answered"


def run_outcome(message: AssistantMessage | None) -> tuple[int, str | None]:
    """Exit code and error line for a run that ended on ``message``."""
    if message is None:
        return EXIT_RUN_FAILED, "the run produced no answer"
    if message.stop_reason == "aborted":
        return EXIT_RUN_FAILED, "aborted"
    if message.stop_reason == "error":
        return EXIT_RUN_FAILED, message.error_message or "the model request failed"
    return EXIT_OK, None


class _Progress:
    """One-line progress notes on a terminal's stderr."""

    def __init__(self) -> None:
        from baton.tools import strip_control_sequences

        self._clean = strip_control_sequences

    def __call__(self, event: Any) -> None:
        match event:
            case ToolExecutionStartEvent():
                args = json.dumps(event.args, ensure_ascii=False)
                if len(args) > 120:
                    args = args[:117] + "..."
                self._note(f"→ {event.tool_name} {args}")
            case ToolExecutionEndEvent(is_error=True):
                text = " ".join(getattr(b, "text", "") for b in event.result.content)[:200]
                self._note(f"✗ {event.tool_name}: {text}")
            case AutoRetryStartEvent():
                self._note(
                    f"retrying in {event.delay_ms / 1000:.1f}s "
                    f"(attempt {event.attempt}/{event.max_attempts}): {event.error_message}"
                )
            case AutoCompactionStartEvent():
                self._note(f"compacting context ({event.reason})…")

    def _note(self, text: str) -> None:
        sys.stderr.write(self._clean(text).replace("\n", " ") + "\n")
        sys.stderr.flush()


def report_denials(event: Any) -> None:
    """Write one stderr line for each call denied because nobody could approve it."""
    if isinstance(event, ToolApprovalEvent):
        line = denial_line(event)
        if line is not None:
            from baton.tools import strip_control_sequences

            sys.stderr.write(strip_control_sequences(line).replace("\n", " ") + "\n")
            sys.stderr.flush()


def report_fallbacks(event: object) -> None:
    """Write one stderr line for each failover to another model (and the return from it)."""
    if getattr(event, "type", None) != "model_fallback":  # every event passes: no import per event
        return
    from baton.sessions.events import ModelFallbackEvent

    if isinstance(event, ModelFallbackEvent):
        from baton.tools import strip_control_sequences

        sys.stderr.write("baton: " + strip_control_sequences(event.text()).replace("\n", " ") + "\n")
        sys.stderr.flush()


async def prompt_keeping_answer(session: CodingSession, text: str, images: list[ImageContent]) -> str | None:
    """Run the prompt to its end even when the session file cannot be written (disk full, file
    size limit, read-only folder): the answer is still shown. Returns the one-line storage
    error to report on stderr (the exit code is then 1), or ``None``."""
    from baton.sessions.errors import SessionSaveError

    session.abort_on_save_error = False
    try:
        await session.prompt(text, images or None)
    except SessionSaveError as exc:
        return " ".join(str(exc).split())
    return None


def report_save_error(code: int, save_error: str | None) -> int:
    """Print the storage error (if any) and turn a successful exit code into 1."""
    if save_error is None:
        return code
    print(f"baton: {save_error}", file=sys.stderr)
    return code if code != EXIT_OK else EXIT_RUN_FAILED


async def run_print_mode(session: CodingSession, text: str, images: list[ImageContent]) -> int:
    """Run ``text`` to completion and print the final answer; returns the exit code."""
    tracker = RunTracker()
    unsubscribe_tracker = session.subscribe(tracker)
    unsubscribe_denials = session.subscribe(report_denials)
    unsubscribe_fallbacks = session.subscribe(report_fallbacks)
    unsubscribe = session.subscribe(_Progress()) if sys.stderr.isatty() else None
    uninstall = install_interrupt_handler(tracker.interrupt(session.abort))
    try:
        save_error = await prompt_keeping_answer(session, text, images)
    finally:
        uninstall()
        unsubscribe_tracker()
        unsubscribe_denials()
        unsubscribe_fallbacks()
        if unsubscribe is not None:
            unsubscribe()
    code, error = tracker.outcome()
    if tracker.plan is not None and not tracker.interrupted:  # plan mode: the plan is the run's result
        code, error = EXIT_OK, None
    if error is not None:
        print(f"baton: {error}", file=sys.stderr)
        return report_save_error(code, save_error)
    answer = tracker.plan if tracker.plan is not None else tracker.answer.text if tracker.answer else ""
    if sys.stdout.isatty():
        from baton.tools import strip_control_sequences

        answer = strip_control_sequences(answer)
    try:
        sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (``baton -p ... | head``)
        silence_stdout()
    return report_save_error(code, save_error)

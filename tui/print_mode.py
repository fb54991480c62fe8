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

from tui.cli_args import EXIT_OK, EXIT_RUN_FAILED

if TYPE_CHECKING:
    from providers.messages import AssistantMessage, ImageContent
    from sessions import CodingSession


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


def last_assistant(session: CodingSession) -> AssistantMessage | None:
    """The most recent assistant message of the session's current branch."""
    from providers.messages import AssistantMessage

    for message in reversed(session.messages):
        if isinstance(message, AssistantMessage):
            return message
    return None


def run_outcome(message: AssistantMessage | None) -> tuple[int, str | None]:
    """Exit code and error line for how a run ended."""
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
        from tools import strip_control_sequences

        self._clean = strip_control_sequences

    def __call__(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "tool_execution_start":
            args = json.dumps(event.args, ensure_ascii=False)
            if len(args) > 120:
                args = args[:117] + "..."
            self._note(f"→ {event.tool_name} {args}")
        elif kind == "tool_execution_end" and event.is_error:
            text = " ".join(getattr(b, "text", "") for b in event.result.content)[:200]
            self._note(f"✗ {event.tool_name}: {text}")
        elif kind == "auto_retry_start":
            self._note(
                f"retrying in {event.delay_ms / 1000:.1f}s "
                f"(attempt {event.attempt}/{event.max_attempts}): {event.error_message}"
            )
        elif kind == "auto_compaction_start":
            self._note(f"compacting context ({event.reason})…")

    def _note(self, text: str) -> None:
        sys.stderr.write(self._clean(text).replace("\n", " ") + "\n")
        sys.stderr.flush()


async def run_print_mode(session: CodingSession, text: str, images: list[ImageContent]) -> int:
    """Run ``text`` to completion and print the final answer; returns the exit code."""
    unsubscribe = session.subscribe(_Progress()) if sys.stderr.isatty() else None
    uninstall = install_interrupt_handler(session.abort)
    try:
        await session.prompt(text, images or None)
    finally:
        uninstall()
        if unsubscribe is not None:
            unsubscribe()
    message = last_assistant(session)
    code, error = run_outcome(message)
    if error is not None:
        print(f"baton: {error}", file=sys.stderr)
        return code
    assert message is not None
    answer = message.text
    if sys.stdout.isatty():
        from tools import strip_control_sequences

        answer = strip_control_sequences(answer)
    sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
    sys.stdout.flush()
    return code

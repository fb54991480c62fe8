"""JSON mode: one JSON object per line on stdout — the session header, then every event.

Field names are pi's. One deliberate difference keeps the output linear in the answer's length:
``message_update`` lines for ``*_delta`` events carry the delta but not the whole partial message
(pi repeats the growing partial on every delta, which is quadratic); ``*_start``/``*_end`` updates
and ``message_start``/``message_end`` carry the message as it stands.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from baton.agent.events import AgentEndEvent, AgentStartEvent, MessageUpdateEvent
from baton.providers.json_depth import MAX_VALUE_DEPTH, clamp_object
from baton.providers.messages import now_ms
from baton.sessions.events import AutoRetryStartEvent
from baton.tui.cli.args import EXIT_RUN_FAILED
from baton.tui.modes.json_lines import LineWriter, dumps
from baton.tui.modes.print_mode import (
    RunTracker,
    install_interrupt_handler,
    prompt_keeping_answer,
    report_denials,
    report_save_error,
)
from baton.tui.modes.session_features import ignored_project_notice

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent
    from baton.sessions import CodingSession

logger = logging.getLogger(__name__)

_DELTA_TYPES = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})


def event_line(event: Any) -> str:
    """The JSON line for one session/agent event; never raises.

    An event that cannot be serialised as it is goes out with its free-form values cut
    (:func:`~providers.json_depth.clamp_object`) and a ``serializationError`` saying why; if
    even that fails, as ``{"type", "serializationError"}``, so a reader still sees every event
    (``agent_end`` included) and learns what was lost."""
    try:
        return dumps(_event_dict(event))
    except (ValueError, TypeError, RecursionError) as exc:
        problem = f"this event could not be serialised as it is: {_reason(exc)}"
        logger.warning("%s event: %s", getattr(event, "type", "unknown"), problem)
        try:
            data = _event_dict(clamp_object(event))
        except (ValueError, TypeError, RecursionError):
            data = {"type": getattr(event, "type", "unknown")}
        data["serializationError"] = problem
        return dumps(data)


def _reason(exc: Exception) -> str:
    # The serialiser's own words differ between pydantic versions ("Maximum serialization depth",
    # "Circular reference detected (depth exceeded)"); the reader gets baton's, which do not.
    if isinstance(exc, RecursionError) or "depth" in str(exc).lower():
        return f"a value is nested more than {MAX_VALUE_DEPTH} levels deep (cut)"
    return str(exc)


def _event_dict(event: Any) -> dict[str, Any]:
    if isinstance(event, MessageUpdateEvent):
        from baton.providers.events import event_to_dict

        inner = event.assistant_message_event
        out: dict[str, Any] = {
            "type": "message_update",
            "assistantMessageEvent": event_to_dict(inner, include_partial=False),
        }
        if inner.type not in _DELTA_TYPES:
            out["message"] = event.message.to_json_dict()
        return out
    data: dict[str, Any] = event.to_dict()
    return data


def session_header(session: CodingSession) -> dict[str, Any]:
    """The first line: which session, where, on which model."""
    from datetime import UTC, datetime

    return {
        "type": "session",
        "version": 3,
        "id": session.session_id,
        "timestamp": datetime.fromtimestamp(now_ms() / 1000, UTC).isoformat().replace("+00:00", "Z"),
        "cwd": str(session.cwd),
        "sessionFile": str(session.session_file) if session.session_file else None,
        "provider": session.model.provider,
        "modelId": session.model.id,
        "thinkingLevel": session.thinking_level,
    }


class _AgentEndLast:
    """Writes event lines, holding each ``agent_end`` back until the agent starts again, a retry
    starts, or the run is over: the session events that end a run (``auto_retry_end``, a
    threshold compaction) come before it, so ``agent_end`` is always the last line."""

    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer
        self._held: str | None = None

    def __call__(self, event: Any) -> None:
        if isinstance(event, AgentStartEvent | AutoRetryStartEvent):
            self._release()
        line = event_line(event)
        if isinstance(event, AgentEndEvent):
            self._release()
            self._held = line
        else:
            self._writer.write(line)

    def _release(self) -> None:
        if self._held is not None:
            self._writer.write(self._held)
            self._held = None

    def finish(self) -> None:
        """The run is over: write the held ``agent_end``."""
        self._release()


async def run_json_mode(session: CodingSession, text: str, images: list[ImageContent]) -> int:
    """Run ``text`` and stream every event as a JSON line; returns the exit code.

    If stdout's reader goes away mid-run, the run is aborted (exit code 1)."""
    tracker = RunTracker()
    writer = LineWriter(sys.stdout, on_closed=session.abort)
    writer.write(dumps(session_header(session)))
    ignored = ignored_project_notice(session)
    if ignored is not None:
        writer.write(dumps(ignored))
    unsubscribe_tracker = session.subscribe(tracker)
    unsubscribe_denials = session.subscribe(report_denials)
    ordered = _AgentEndLast(writer)
    unsubscribe = session.subscribe(ordered)
    uninstall = install_interrupt_handler(tracker.interrupt(session.abort))
    save_error = None
    try:
        if writer.closed:
            return EXIT_RUN_FAILED
        save_error = await prompt_keeping_answer(session, text, images)
    finally:
        uninstall()
        unsubscribe()
        unsubscribe_tracker()
        unsubscribe_denials()
        ordered.finish()
        writer.flush()
    code, error = tracker.outcome()
    if writer.closed:
        code, error = EXIT_RUN_FAILED, "stdout was closed; the run was aborted"
    if error is not None:
        print(f"baton: {error}", file=sys.stderr)
    return report_save_error(code, save_error)

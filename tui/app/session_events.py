"""The app's subscriber to its session: what each session event changes on screen.

The transcript takes every agent event; the rest follows from the session's own events: the
busy state and the activity line (agent start and end, compaction), the queue line
(``queue_changed``), the status bar (model, thinking level, MCP servers, token counts), and the
notices (retries, compaction, hooks and MCP servers). Nothing here reads the session's state to
find out what happened: the events say it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from baton.agent.events import AgentEndEvent, AgentStartEvent, MessageEndEvent, MessageUpdateEvent
from baton.providers.messages import AssistantMessage
from baton.sessions.events import (
    AnySessionEvent,
    AutoCompactionEndEvent,
    AutoCompactionStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    BackgroundProcessesEvent,
    ExtensionNoticeEvent,
    McpStatusEvent,
    ModelChangeEvent,
    ModelFallbackEvent,
    QueueChangedEvent,
    SessionChangedEvent,
    SessionChangeReason,
    ThinkingLevelChangeEvent,
    TodoUpdateEvent,
)
from baton.sessions.permissions.events import ApprovalModeChangeEvent
from baton.tui.app import notices
from baton.tui.app.render import one_line

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp

STATUS_INTERVAL = 1.0
"""Seconds between status bar updates while the agent works (each repaint of the status line
costs a frame the whole screen's height); the end of the run shows the final figures."""


class SessionEvents:
    """Applies the session's events to the app's widgets (see the module docstring)."""

    def __init__(self, app: BatonApp) -> None:
        self.app = app
        self.compaction_reported = False
        """A compaction's end was reported (``/compact`` then says nothing more of it)."""
        self._status_shown_at = 0.0

    def __call__(self, event: AnySessionEvent) -> None:
        self.app.transcript.handle_event(event)
        if type(event) is MessageUpdateEvent:
            return  # most events of a turn: a streamed delta changes the transcript only
        match event:
            case MessageEndEvent(message=AssistantMessage()):
                self._answer_ended()
            case AgentStartEvent():
                self._agent_started()
            case AgentEndEvent():
                self._agent_ended()
            case (ModelChangeEvent() | ThinkingLevelChangeEvent() | McpStatusEvent() | ApprovalModeChangeEvent()
                  | BackgroundProcessesEvent()):
                self.app.refresh_status()
            case ModelFallbackEvent(returning=returning):
                self.app.transcript.add_notice_before_reply(event.text(), "info" if returning else "warning")
                self.app.refresh_status()
            case TodoUpdateEvent(todos=todos):
                self.app.todos.show_todos(todos)
            case ExtensionNoticeEvent(source=source, text=text, level=level):
                self.app.notice(f"{source}: {one_line(text, 300)}", level)
            case AutoCompactionStartEvent(reason=reason):
                self.app.notice(notices.compaction_started(reason))
                self.app.activity.start("Compacting")
            case AutoCompactionEndEvent():
                self._compaction_ended(event)
            case AutoRetryStartEvent():
                self.app.transcript.add_notice_before_reply(notices.retry_started(event), "warning")
            case AutoRetryEndEvent():
                if ended := notices.retry_ended(event):
                    self.app.notice(*ended)
            case QueueChangedEvent(steering=steering, follow_up=follow_up):
                self.app.activity.set_queue([*(("steer", t) for t in steering),
                                             *(("follow-up", t) for t in follow_up)])
            case SessionChangedEvent(reason=reason):
                self._session_changed(reason)

    def _answer_ended(self) -> None:
        # Token counts and cost while the agent works: at most once a second.
        now = time.monotonic()
        if now - self._status_shown_at >= STATUS_INTERVAL:
            self._status_shown_at = now
            self.app.transcript.in_next_flush(self.app.refresh_status)

    def _agent_started(self) -> None:
        self.app.notifier.run_started()
        self.app.set_busy(replace(self.app.busy, agent_running=True))
        self.app.activity.start()
        self.app.todos.set_collapsed(False)

    def _agent_ended(self) -> None:
        self.app.notifier.run_ended(f"the run in {self.app.cwd.name or self.app.cwd} ended")
        self.app.set_busy(replace(self.app.busy, agent_running=False))
        self.app.refresh_status()
        self.app.todos.set_collapsed(True)


    def _compaction_ended(self, event: AutoCompactionEndEvent) -> None:
        self.compaction_reported = True
        if event.aborted:
            self.app.notice("Compaction aborted; the conversation is unchanged.", "warning")
        elif event.error_message:
            self.app.notice(f"Compaction failed: {one_line(event.error_message, 300)}", "error")
        elif event.result is not None:
            # The rebuilt transcript starts with the compaction entry (what was summarised and
            # its gist); a second notice would only repeat it.
            self.app.reload_transcript()
        busy = self.app.busy
        if busy.agent_working:
            self.app.activity.start("Working")
        elif busy.idle:
            self.app.activity.stop()
        self.app.refresh_status()

    def _session_changed(self, reason: SessionChangeReason) -> None:
        from baton.tools.todo_write import latest_todos

        self.app.reload_transcript()
        self.app.todos.show_todos(latest_todos(self.app.session.messages) or [], collapsed=True)
        if reason == "resume":
            self.app.warn_if_no_key()

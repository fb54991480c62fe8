"""Session events: what a coding session reports besides the agent's own events.

Each is a small dataclass with a ``type`` (pi's names where pi has the event) and ``to_dict()``
(camelCase JSON, for JSON mode). Subscribers of a :class:`~sessions.coding_session.CodingSession`
receive these and every :data:`agent.events.AgentEvent`, in order.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Literal, TypeAlias

from baton.agent.events import AgentEvent, ToolExecutionEndEvent
from baton.providers.json_types import JsonObject
from baton.providers.models import Model, ThinkingLevel
from baton.sessions.compaction import CompactionResult
from baton.sessions.permissions.events import ApprovalModeChangeEvent, ToolApprovalEvent
from baton.tools.todo_write import Todo, TodoWriteTool, todos_from_details

CompactionReason: TypeAlias = Literal["threshold", "overflow", "manual"]
SessionChangeReason: TypeAlias = Literal["new", "fork", "resume", "navigate"]


@dataclass(slots=True)
class AutoCompactionStartEvent:
    """A compaction started (``manual`` for ``/compact``)."""

    reason: CompactionReason
    type: Literal["auto_compaction_start"] = "auto_compaction_start"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "reason": self.reason}


@dataclass(slots=True)
class AutoCompactionEndEvent:
    """A compaction ended: its result, or ``aborted`` / an ``error_message`` (then nothing
    changed). ``will_retry``: the failed request is retried now (overflow recovery)."""

    result: CompactionResult | None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: Literal["auto_compaction_end"] = "auto_compaction_end"

    def to_dict(self) -> JsonObject:
        out: JsonObject = {
            "type": self.type,
            "result": self.result.to_dict() if self.result else None,
            "aborted": self.aborted,
            "willRetry": self.will_retry,
        }
        if self.error_message:
            out["errorMessage"] = self.error_message
        return out


@dataclass(slots=True)
class AutoRetryStartEvent:
    """A transient provider error: retrying after ``delay_ms`` (attempt of max_attempts).

    ``source`` is ``session`` for the session's retries of a failed turn, ``provider`` for the
    adapter's own retries of a request that failed before any content streamed. Each layer counts
    its own ``attempt``/``max_attempts`` (pi's fields, as JSON mode prints them); ``number`` and
    ``limit`` count both layers as one sequence, as a user reads them (``1/5, 2/5, 3/5`` instead
    of ``1/3, 2/3``, an error, then ``1/2``): see :class:`~baton.sessions.retry.RetryNumbering`."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    source: Literal["session", "provider"] = "session"
    _: KW_ONLY
    number: int
    """This attempt's number in the sequence of retries of one request (both layers)."""
    limit: int
    """The attempts that sequence may take in all."""
    type: Literal["auto_retry_start"] = "auto_retry_start"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "attempt": self.attempt,
            "maxAttempts": self.max_attempts,
            "delayMs": self.delay_ms,
            "errorMessage": self.error_message,
            "source": self.source,
        }


@dataclass(slots=True)
class AutoRetryEndEvent:
    """Retrying ended: it worked, was cancelled, or gave up (``final_error``).

    ``max_attempts``: the retries the session allowed; ``aborted``: the user aborted the run, while
    waiting to retry (``final_error`` is then :data:`~baton.sessions.retry.RETRY_CANCELLED`) or
    during a retried request. Neither is in :meth:`to_dict` (pi's fields only)."""

    success: bool
    attempt: int
    final_error: str | None = None
    _: KW_ONLY
    max_attempts: int
    aborted: bool = False
    type: Literal["auto_retry_end"] = "auto_retry_end"

    def to_dict(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "success": self.success, "attempt": self.attempt}
        if self.final_error is not None:
            out["finalError"] = self.final_error
        return out


@dataclass(slots=True)
class ModelChangeEvent:
    """The session's model changed."""

    model: Model
    previous_model: Model | None
    type: Literal["model_change"] = "model_change"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "model": self.model.ref,
            "previousModel": self.previous_model.ref if self.previous_model else None,
        }


@dataclass(slots=True)
class ModelFallbackEvent:
    """A turn that kept failing on ``previous`` goes on on ``model`` (``fallbackModels``);
    ``returning``: the failover is over and the primary model is back (``previous`` was the
    fallback)."""

    previous: Model
    model: Model
    reason: str
    attempts: int = 0
    returning: bool = False
    type: Literal["model_fallback"] = "model_fallback"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "from": self.previous.ref, "to": self.model.ref, "reason": self.reason,
                "attempts": self.attempts, "returning": self.returning}

    def text(self) -> str:
        """One line for a person."""
        if self.returning:
            return f"Back on {self.model.ref} (the fallback {self.previous.ref} served {self.reason})."
        tries = f" after {self.attempts} {'try' if self.attempts == 1 else 'tries'}" if self.attempts else ""
        return f"{self.previous.ref} failed{tries} ({self.reason}) → continuing on {self.model.ref}"


@dataclass(slots=True)
class ThinkingLevelChangeEvent:
    """The thinking level changed (already clamped to the model)."""

    level: ThinkingLevel
    type: Literal["thinking_level_change"] = "thinking_level_change"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "level": self.level}


@dataclass(slots=True)
class SessionChangedEvent:
    """The session's history was replaced: a new session, a fork, a resumed file, or a move
    to another branch. Re-render the transcript from ``session.messages``."""

    reason: SessionChangeReason
    type: Literal["session_changed"] = "session_changed"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "reason": self.reason}


@dataclass(slots=True)
class ExtensionNoticeEvent:
    """Something a hook or an MCP server did that the user should hear about (a hook that
    timed out, a server that failed to start or was restarted). ``source``: ``hooks`` or ``mcp``."""

    source: str
    text: str
    level: Literal["info", "warning", "error"] = "warning"
    type: Literal["extension_notice"] = "extension_notice"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "source": self.source, "level": self.level, "text": self.text}


@dataclass(slots=True)
class McpStatusEvent:
    """An MCP server changed state (starting, ready, failed, crashed): ``summary`` is the footer text."""

    summary: str
    type: Literal["mcp_status"] = "mcp_status"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "summary": self.summary}


@dataclass(slots=True)
class QueueChangedEvent:
    """The messages waiting for delivery changed: one was queued (``steer`` / ``follow_up``),
    delivered to the model, or taken back (``dequeue``). ``steering`` and ``follow_up`` are their
    texts in the order they will be delivered (steering first). baton's own event: the RPC mode
    leaves it out of its output (pi's protocol has none; ``get_state`` counts the queue)."""

    steering: tuple[str, ...]
    follow_up: tuple[str, ...]
    type: Literal["queue_changed"] = "queue_changed"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "steering": list(self.steering), "followUp": list(self.follow_up)}


@dataclass(slots=True)
class SubagentEvent:
    """An event of a subagent, nested under the ``task`` call that runs it (``tool_call_id``:
    the parent's call). ``event`` is the subagent's own agent event; its streamed deltas
    (``message_update``) are not forwarded: the task call's updates report its progress."""

    tool_call_id: str
    agent: str
    event: AgentEvent
    depth: int = 1
    type: Literal["subagent_event"] = "subagent_event"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "toolCallId": self.tool_call_id, "agent": self.agent, "depth": self.depth,
                "event": self.event.to_dict()}


@dataclass(slots=True)
class PlanProposedEvent:
    """The model proposed a plan (``exit_plan_mode``); ``outcome`` is what became of it."""

    plan: str
    tool_call_id: str = ""
    outcome: str = "proposed"
    type: Literal["plan_proposed"] = "plan_proposed"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "toolCallId": self.tool_call_id, "plan": self.plan, "outcome": self.outcome}


@dataclass(slots=True)
class TodoUpdateEvent:
    """The model replaced its task list (a ``todo_write`` call that succeeded): the whole list."""

    todos: list[Todo]
    tool_call_id: str = ""
    type: Literal["todo_update"] = "todo_update"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "toolCallId": self.tool_call_id, "todos": [t.to_dict() for t in self.todos]}


def todo_update_for(event: AgentEvent) -> TodoUpdateEvent | None:
    """The ``todo_update`` a finished ``todo_write`` call makes (``None`` for any other event)."""
    if not isinstance(event, ToolExecutionEndEvent) or event.tool_name != TodoWriteTool.name or event.is_error:
        return None
    todos = todos_from_details(event.result.details)
    return TodoUpdateEvent(todos, event.tool_call_id) if todos is not None else None


@dataclass(slots=True)
class BackgroundProcessesEvent:
    """A background command started or ended (``shell_id``, its ``state`` now); ``running``:
    how many run now. baton's own event: the RPC mode leaves it out of its output."""

    running: int
    shell_id: str
    state: str
    type: Literal["background_processes"] = "background_processes"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "running": self.running, "shellId": self.shell_id, "state": self.state}


SessionEvent: TypeAlias = (
    AutoCompactionStartEvent
    | AutoCompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | ModelChangeEvent
    | ModelFallbackEvent
    | ThinkingLevelChangeEvent
    | SessionChangedEvent
    | ToolApprovalEvent
    | ApprovalModeChangeEvent
    | ExtensionNoticeEvent
    | McpStatusEvent
    | QueueChangedEvent
    | SubagentEvent
    | PlanProposedEvent
    | TodoUpdateEvent
    | BackgroundProcessesEvent
)
AnySessionEvent: TypeAlias = AgentEvent | SessionEvent
"""Everything a session subscriber receives."""

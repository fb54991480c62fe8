"""Session events: what a coding session reports besides the agent's own events.

Each is a small dataclass with a ``type`` (pi's names where pi has the event) and ``to_dict()``
(camelCase JSON, for JSON mode). Subscribers of a :class:`~sessions.coding_session.CodingSession`
receive these and every :data:`agent.events.AgentEvent`, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from baton.agent.events import AgentEvent
from baton.providers.json_types import JsonObject
from baton.providers.models import Model, ThinkingLevel
from baton.sessions.compaction import CompactionResult
from baton.sessions.permissions.events import ApprovalModeChangeEvent, ToolApprovalEvent

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
    adapter's own retries of a request that failed before any content streamed."""

    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    source: Literal["session", "provider"] = "session"
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
    """Retrying ended: it worked, was cancelled, or gave up (``final_error``)."""

    success: bool
    attempt: int
    final_error: str | None = None
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


SessionEvent: TypeAlias = (
    AutoCompactionStartEvent
    | AutoCompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | ModelChangeEvent
    | ThinkingLevelChangeEvent
    | SessionChangedEvent
    | ToolApprovalEvent
    | ApprovalModeChangeEvent
    | ExtensionNoticeEvent
    | McpStatusEvent
)
AnySessionEvent: TypeAlias = AgentEvent | SessionEvent
"""Everything a session subscriber receives."""

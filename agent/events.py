"""Agent events: what a run reports to subscribers (UI, JSON mode, session store).

Every event is a small dataclass with a ``type`` string (pi's names) and ``to_dict()`` giving
pi's JSON (camelCase keys, messages as pi JSON). Events carry live objects: a
``message_update`` holds the partial assistant message as it grows, so subscribers that keep
it must copy it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from pydantic_core import to_jsonable_python

from baton.agent.messages import AgentMessage
from baton.agent.tool import AgentToolResult
from baton.providers.events import AssistantMessageEvent, event_to_dict
from baton.providers.json_types import JsonObject
from baton.providers.messages import AssistantMessage, ToolResultMessage


def tool_result_to_dict(result: AgentToolResult) -> JsonObject:
    """pi's JSON of an ``AgentToolResult``: ``{content, details}``."""
    return {
        "content": [block.to_json_dict() for block in result.content],
        "details": to_jsonable_python(result.details, fallback=str),
    }


@dataclass(slots=True)
class AgentStartEvent:
    """A run started."""

    type: Literal["agent_start"] = "agent_start"

    def to_dict(self) -> JsonObject:
        return {"type": self.type}


@dataclass(slots=True)
class AgentEndEvent:
    """A run ended; ``messages`` are the messages it added to the history."""

    messages: list[AgentMessage] = field(default_factory=list)
    type: Literal["agent_end"] = "agent_end"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "messages": [m.to_json_dict() for m in self.messages]}


@dataclass(slots=True)
class TurnStartEvent:
    """A turn (one model call and its tool batch) started."""

    type: Literal["turn_start"] = "turn_start"

    def to_dict(self) -> JsonObject:
        return {"type": self.type}


@dataclass(slots=True)
class TurnEndEvent:
    """A turn ended: the assistant message and the tool results it produced."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage] = field(default_factory=list)
    type: Literal["turn_end"] = "turn_end"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "message": self.message.to_json_dict(),
            "toolResults": [m.to_json_dict() for m in self.tool_results],
        }


@dataclass(slots=True)
class MessageStartEvent:
    """A message is being added to the history (assistant messages: streaming starts)."""

    message: AgentMessage
    type: Literal["message_start"] = "message_start"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "message": self.message.to_json_dict()}


@dataclass(slots=True)
class MessageUpdateEvent:
    """A streaming assistant message grew; ``assistant_message_event`` is the provider event."""

    message: AssistantMessage
    assistant_message_event: AssistantMessageEvent
    type: Literal["message_update"] = "message_update"

    def to_dict(self, *, include_partial: bool = True) -> JsonObject:
        return {
            "type": self.type,
            "message": self.message.to_json_dict(),
            "assistantMessageEvent": event_to_dict(
                self.assistant_message_event, include_partial=include_partial
            ),
        }


@dataclass(slots=True)
class MessageEndEvent:
    """A message is complete and in the history."""

    message: AgentMessage
    type: Literal["message_end"] = "message_end"

    def to_dict(self) -> JsonObject:
        return {"type": self.type, "message": self.message.to_json_dict()}


@dataclass(slots=True)
class ToolExecutionStartEvent:
    """A tool call is about to run (or be answered without running)."""

    tool_call_id: str
    tool_name: str
    args: JsonObject
    type: Literal["tool_execution_start"] = "tool_execution_start"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": self.args,
        }


@dataclass(slots=True)
class ToolExecutionUpdateEvent:
    """Streaming progress from a running tool."""

    tool_call_id: str
    tool_name: str
    args: JsonObject
    partial_result: AgentToolResult
    type: Literal["tool_execution_update"] = "tool_execution_update"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "args": self.args,
            "partialResult": tool_result_to_dict(self.partial_result),
        }


@dataclass(slots=True)
class ToolExecutionEndEvent:
    """A tool call finished (``is_error``: the model reads it as a failure)."""

    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    type: Literal["tool_execution_end"] = "tool_execution_end"

    def to_dict(self) -> JsonObject:
        return {
            "type": self.type,
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "result": tool_result_to_dict(self.result),
            "isError": self.is_error,
        }


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)
"""An agent event; dispatch on its class (or ``event.type``)."""

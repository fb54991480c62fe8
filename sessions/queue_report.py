"""The messages waiting for delivery, reported to the session's subscribers when they change.

Steering and follow-up messages wait in the agent's queues until the agent delivers them. The
session asks :class:`QueueReport` after every change it makes (queued, taken back) and at every
message the agent starts (one may have been delivered); subscribers get a
:class:`~baton.sessions.events.QueueChangedEvent` only when the queue differs from the last one
reported, so a front end shows the queue without keeping a copy of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from baton.agent.agent import Agent
from baton.agent.messages import AgentMessage
from baton.providers.messages import TextContent, UserMessage
from baton.sessions.events import QueueChangedEvent


def queued_text(message: AgentMessage) -> str:
    """The text of a queued message (its text blocks; other kinds of message have none)."""
    if not isinstance(message, UserMessage):
        return ""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def _texts(messages: Iterable[AgentMessage]) -> tuple[str, ...]:
    return tuple(queued_text(message) for message in messages)


class QueueReport:
    """Remembers the queue last reported, to tell when it changed."""

    def __init__(self) -> None:
        self._last = QueueChangedEvent((), ())

    def changed(self, agent: Agent) -> QueueChangedEvent | None:
        """The agent's queue now, when it differs from the one last reported; else None."""
        now = QueueChangedEvent(_texts(agent.steering_queue), _texts(agent.follow_up_queue))
        if now == self._last:
            return None
        self._last = now
        return now

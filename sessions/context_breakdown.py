"""What fills the context window (``/context``): the system prompt, tool definitions, context
files and the conversation by kind, in tokens.

Counts are the same estimates compaction uses (tiktoken once loaded, else characters / 4); the
parts add up to what the next request would hold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from baton.providers.messages import AssistantMessage, ToolResultMessage, UserMessage
from baton.sessions.tokens import count_text_tokens, estimate_message_tokens

if TYPE_CHECKING:
    from baton.agent.messages import AgentMessage
    from baton.providers.messages import Tool


@dataclass(frozen=True, slots=True)
class ContextPart:
    """One kind of content and the tokens it takes."""

    label: str
    tokens: int


@dataclass(slots=True)
class ContextBreakdown:
    """The parts of the context, largest kinds first as the request orders them, and the window."""

    window: int
    parts: list[ContextPart] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Tokens used by every part together."""
        return sum(p.tokens for p in self.parts)

    @property
    def free(self) -> int:
        """Tokens left in the window (never negative)."""
        return max(0, self.window - self.total)


def context_breakdown(
    *,
    system_prompt: str,
    context_texts: Sequence[str],
    tool_schemas: Sequence[Tool],
    messages: Sequence[AgentMessage],
    window: int,
) -> ContextBreakdown:
    """Split the context into its parts. ``context_texts`` are the loaded context files (part of
    the system prompt, shown on their own); ``tool_schemas`` are the tools' JSON-able schemas."""
    files = sum(count_text_tokens(text) for text in context_texts)
    system = max(0, count_text_tokens(system_prompt) - files)
    tools = sum(count_text_tokens(json.dumps(schema.model_dump(by_alias=True, exclude_none=True), ensure_ascii=False))
                for schema in tool_schemas)
    by_kind = {"user": 0, "assistant": 0, "results": 0, "other": 0}
    for message in messages:
        tokens = estimate_message_tokens(message)
        if isinstance(message, UserMessage):
            by_kind["user"] += tokens
        elif isinstance(message, AssistantMessage):
            by_kind["assistant"] += tokens
        elif isinstance(message, ToolResultMessage):
            by_kind["results"] += tokens
        else:
            by_kind["other"] += tokens
    parts = [
        ContextPart("System prompt", system),
        ContextPart("Tool definitions", tools),
        ContextPart("Context files", files),
        ContextPart("User messages", by_kind["user"]),
        ContextPart("Assistant messages", by_kind["assistant"]),
        ContextPart("Tool results", by_kind["results"]),
        ContextPart("Shell runs and summaries", by_kind["other"]),
    ]
    return ContextBreakdown(window, parts)


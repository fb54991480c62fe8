"""The provider-neutral message model, wire-compatible with pi's JSON.

Attributes are snake_case; JSON names are pi's camelCase aliases, so a pi message validates
unchanged and ``model_dump(mode="json", by_alias=True, exclude_none=True)`` gives it back.
Optional fields absent in the input stay absent on output, and unknown extra keys on blocks and
messages survive the round trip.

Messages are mutable (adapters grow the partial assistant message in place while streaming), but
once a message is complete every layer treats it as immutable: ``transform_messages`` may return
an unchanged message object as is instead of copying it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field, PrivateAttr, TypeAdapter

from baton.providers.wire_model import _Wire


def now_ms() -> int:
    """Current time in milliseconds since the epoch (pi's message timestamps)."""
    return int(time.time() * 1000)


# ---------------------------------------------------------------------------------------------
# Content blocks


class TextContent(_Wire):
    """Plain text. ``text_signature`` is provider metadata valid only for the same model."""

    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = Field(default=None, alias="textSignature")


class ThinkingContent(_Wire):
    """Model reasoning. ``thinking_signature`` is opaque provider state (e.g. Anthropic's
    signature or an OpenAI Responses reasoning item as JSON) replayed only to the same model."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = Field(default=None, alias="thinkingSignature")
    redacted: bool | None = None


class ImageContent(_Wire):
    """A base64-encoded image."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str = Field(alias="mimeType")


class ToolCall(_Wire):
    """A tool invocation requested by the model."""

    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    thought_signature: str | None = Field(default=None, alias="thoughtSignature")
    _argument_error: str | None = PrivateAttr(default=None)

    @property
    def argument_error(self) -> str | None:
        """Why the arguments were refused as they arrived (they are then ``{}``): the call is
        answered with this error instead of running. Never stored or sent."""
        private = self.__pydantic_private__  # None on copies made without validation
        return private.get("_argument_error") if private else None

    def refuse_arguments(self, reason: str) -> None:
        """Drop the arguments and record why (see :attr:`argument_error`)."""
        self.arguments = {}
        self._argument_error = reason


UserContentBlock: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContentBlock: TypeAlias = Annotated[
    TextContent | ThinkingContent | ToolCall, Field(discriminator="type")
]
ToolResultContentBlock: TypeAlias = UserContentBlock

# ---------------------------------------------------------------------------------------------
# Usage

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
ABORTED_MESSAGE = "Request was aborted"
"""The ``errorMessage`` of an assistant message whose request was aborted (pi's words)."""


class Cost(_Wire):
    """Cost in US dollars, per token kind."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = Field(default=0.0, alias="cacheRead")
    cache_write: float = Field(default=0.0, alias="cacheWrite")
    total: float = 0.0


class Usage(_Wire):
    """Token usage of one request. ``input`` excludes cached tokens (pi's convention)."""

    input: int = 0
    output: int = 0
    cache_read: int = Field(default=0, alias="cacheRead")
    cache_write: int = Field(default=0, alias="cacheWrite")
    total_tokens: int | None = Field(default=None, alias="totalTokens")
    cost: Cost = Field(default_factory=Cost)

    @property
    def context_tokens(self) -> int:
        """Tokens the request occupied in the context window (prompt incl. cache, plus output)."""
        return self.input + self.cache_read + self.cache_write + self.output

    @property
    def cache_hit_rate(self) -> float:
        """Share of prompt tokens served from cache, 0..1 (0 when there was no prompt)."""
        prompt = self.input + self.cache_read + self.cache_write
        return self.cache_read / prompt if prompt else 0.0


# ---------------------------------------------------------------------------------------------
# Messages


class UserMessage(_Wire):
    """A message from the user: a string or text/image blocks."""

    role: Literal["user"] = "user"
    content: str | list[UserContentBlock]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(_Wire):
    """A model's reply, with the api/provider/model that produced it."""

    role: Literal["assistant"] = "assistant"
    content: list[AssistantContentBlock] = Field(default_factory=list)
    api: str
    provider: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    stop_reason: StopReason = Field(default="stop", alias="stopReason")
    error_message: str | None = Field(default=None, alias="errorMessage")
    timestamp: int = Field(default_factory=now_ms)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [b for b in self.content if isinstance(b, ToolCall)]


class ToolResultMessage(_Wire):
    """The result of one tool call. ``details`` is for the UI and never sent to a model."""

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str = Field(alias="toolName")
    content: list[ToolResultContentBlock] = Field(default_factory=list)
    details: Any | None = None
    is_error: bool = Field(default=False, alias="isError")
    timestamp: int = Field(default_factory=now_ms)


Message: TypeAlias = Annotated[
    UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="role")
]
"""Any LLM message, discriminated by ``role``. Other roles (pi's ``bashExecution``...) are agent
messages and are refused here with a validation error naming the tag."""

MESSAGE_ADAPTER: TypeAdapter[UserMessage | AssistantMessage | ToolResultMessage] = TypeAdapter(Message)


def message_from_dict(data: Mapping[str, object]) -> UserMessage | AssistantMessage | ToolResultMessage:
    """Validate a pi message dict into the matching message class."""
    return MESSAGE_ADAPTER.validate_python(data)


# ---------------------------------------------------------------------------------------------
# Requests


class Tool(_Wire):
    """A tool the model may call: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class Context(_Wire):
    """What one request sends: the system prompt (kept apart), messages and tools."""

    system_prompt: str | None = Field(default=None, alias="systemPrompt")
    messages: list[Message] = Field(default_factory=list)
    tools: list[Tool] | None = None
    _wire_slots: list[Any] | None = PrivateAttr(default=None)
    """Set by :func:`providers.dispatch.prepare_context`: a :class:`providers.wire_cache.WireSlot`
    (or ``None``) per message, where adapters keep each message's encoded form between requests.
    An adapter uses a slot only while it still holds the very message at its place."""
    _wire_memo: Any = PrivateAttr(default=None)
    """Set with ``_wire_slots``: the :class:`providers.wire_cache.WireMemo` of this request."""

"""App messages (``AgentMessage``): the LLM messages plus the runtime's own message types.

The history the agent keeps holds the three LLM roles of :mod:`providers.messages` and app
messages registered by role (pi's ``bashExecution``, ``custom``, ``compactionSummary``,
``branchSummary``, or any type added with :func:`register_message_type`), so a session file
round-trips them. :func:`convert_to_llm` projects a history onto what a model may read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from baton.providers.errors import BatonError
from baton.providers.json_types import JsonObject
from baton.providers.messages import (
    AssistantMessage,
    TextContent,
    ToolResultMessage,
    UserContentBlock,
    UserMessage,
    _Wire,
    message_from_dict,
    now_ms,
)

LlmMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""A message a model reads (``user``, ``assistant`` or ``toolResult``)."""

LLM_ROLES: frozenset[str] = frozenset({"user", "assistant", "toolResult"})

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


class UnknownMessageRoleError(BatonError, ValueError):
    """A message dict whose ``role`` names no known message type."""


class AppMessage(_Wire):
    """Base of app-defined message types. Subclasses set ``role`` to a ``Literal`` default and
    override :meth:`to_llm` when the model should see them (the default: UI only, dropped)."""

    role: str
    timestamp: int = Field(default_factory=now_ms)

    def to_llm(self) -> LlmMessage | None:
        """What a model reads for this message, or ``None`` to leave it out of the context."""
        return None


AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | AppMessage
"""Anything the agent's history may hold."""


def _text_user_message(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


class BashExecutionMessage(AppMessage):
    """A shell command the user ran with ``!cmd`` (``!!cmd``: excluded from the context)."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = Field(default=None, alias="exitCode")
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = Field(default=None, alias="fullOutputPath")
    exclude_from_context: bool | None = Field(default=None, alias="excludeFromContext")

    def to_json_dict(self) -> JsonObject:
        """pi's JSON; an explicit ``exitCode: null`` (a killed command) survives the round trip."""
        out = super().to_json_dict()
        if self.exit_code is None and "exit_code" in self.model_fields_set:
            out["exitCode"] = None
        return out

    def to_llm(self) -> LlmMessage | None:
        if self.exclude_from_context:
            return None
        return _text_user_message(bash_execution_to_text(self), self.timestamp)


class CustomMessage(AppMessage):
    """A message injected by the application or an extension (``display``: show it in the UI)."""

    role: Literal["custom"] = "custom"
    custom_type: str = Field(alias="customType")
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any | None = None

    def to_llm(self) -> LlmMessage | None:
        content = self.content
        if isinstance(content, str):
            return _text_user_message(content, self.timestamp)
        return UserMessage(content=list(content), timestamp=self.timestamp)


class CompactionSummaryMessage(AppMessage):
    """The summary that replaces the history before a compaction point."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = Field(default=0, alias="tokensBefore")

    def to_llm(self) -> LlmMessage | None:
        text = COMPACTION_SUMMARY_PREFIX + self.summary + COMPACTION_SUMMARY_SUFFIX
        return _text_user_message(text, self.timestamp)


class BranchSummaryMessage(AppMessage):
    """The summary of a branch the conversation came back from."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str = Field(alias="fromId")

    def to_llm(self) -> LlmMessage | None:
        text = BRANCH_SUMMARY_PREFIX + self.summary + BRANCH_SUMMARY_SUFFIX
        return _text_user_message(text, self.timestamp)


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """The user-message text a model reads for a ``!cmd`` run (pi's ``bashExecutionToText``)."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


_REGISTRY: dict[str, type[AppMessage]] = {}


def register_message_type(cls: type[AppMessage]) -> type[AppMessage]:
    """Register an :class:`AppMessage` subclass under its ``role`` default (usable as a
    decorator). Registering a role again replaces the earlier class."""
    field = cls.model_fields.get("role")
    role = field.default if field is not None else None
    if not isinstance(role, str) or not role:
        raise TypeError(f"{cls.__name__} must give 'role' a string default to be registered")
    if role in LLM_ROLES:
        raise ValueError(f"role {role!r} belongs to an LLM message and cannot be registered")
    _REGISTRY[role] = cls
    return cls


for _cls in (BashExecutionMessage, CustomMessage, CompactionSummaryMessage, BranchSummaryMessage):
    register_message_type(_cls)


def registered_roles() -> list[str]:
    """Every role :func:`agent_message_from_dict` accepts."""
    return sorted(LLM_ROLES | _REGISTRY.keys())


def agent_message_from_dict(data: Mapping[str, object]) -> AgentMessage:
    """Validate a pi message dict (any registered role) into its message class.

    Raises :class:`UnknownMessageRoleError` for an unknown role and pydantic's
    ``ValidationError`` for a malformed message of a known role."""
    if not isinstance(data, dict):
        raise TypeError(f"a message must be a JSON object, got {type(data).__name__}")
    role = data.get("role")
    if role in LLM_ROLES:
        return message_from_dict(data)
    cls = _REGISTRY.get(role) if isinstance(role, str) else None
    if cls is None:
        raise UnknownMessageRoleError(
            f"Unknown message role {role!r}; known roles: {', '.join(registered_roles())}"
        )
    return cls.model_validate(data)


def agent_message_to_dict(message: AgentMessage) -> JsonObject:
    """pi's JSON form of any agent message."""
    return message.to_json_dict()


LLM_MESSAGE_TYPES: frozenset[type] = frozenset({UserMessage, AssistantMessage, ToolResultMessage})
"""The model message classes themselves (not subclasses): checking a whole history against this
set runs in C, several times faster than an ``isinstance`` per message (this runs every turn)."""


def is_llm_message(message: AgentMessage) -> bool:
    """True for ``user``, ``assistant`` and ``toolResult`` messages."""
    return isinstance(message, UserMessage | AssistantMessage | ToolResultMessage)


def convert_to_llm(messages: list[AgentMessage]) -> list[LlmMessage]:
    """The default projection of a history onto model messages (pi's ``convertToLlm``).

    LLM messages pass unchanged; ``bashExecution`` becomes a user message describing the
    command and its output (unless ``excludeFromContext``); ``custom`` becomes a user message;
    summaries become user messages wrapped in pi's summary prefix and suffix; other app
    messages use their :meth:`AppMessage.to_llm` (dropped by default). Never mutates input."""
    if LLM_MESSAGE_TYPES.issuperset(map(type, messages)):  # the usual history: a copy will do
        return list(messages)  # type: ignore[arg-type]  # every item's type was just checked
    out: list[LlmMessage] = []
    for message in messages:
        if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
            out.append(message)
        elif isinstance(message, AppMessage):
            converted = message.to_llm()
            if converted is not None:
                out.append(converted)
    return out


def coerce_message(value: AgentMessage | BaseModel | Mapping[str, object]) -> AgentMessage:
    """An :data:`AgentMessage` from a message object or a pi message dict."""
    if isinstance(value, UserMessage | AssistantMessage | ToolResultMessage | AppMessage):
        return value
    if isinstance(value, dict):
        return agent_message_from_dict(value)
    raise TypeError(f"not an agent message: {type(value).__name__}")

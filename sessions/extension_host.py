"""What a session's extensions — permissions, checkpoints, hooks and MCP servers — may use of it.

An extension is given a :class:`SessionHost`, not the :class:`~sessions.coding_session.CodingSession`:
the place it works in, the session file, the tool gates it registers, the events it sends and
hears, and the few actions it needs. The coding session is one; a test may bring another.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from baton.agent.messages import AgentMessage
    from baton.agent.tool import AgentTool
    from baton.sessions.event_hub import EventHub
    from baton.sessions.settings import Settings
    from baton.sessions.store import SessionStore
    from baton.sessions.tool_gates import ToolGates


class ToolHolder(Protocol):
    """What an extension sees of the agent: its tools (MCP tools join this list)."""

    tools: list[AgentTool]


class SessionHost(Protocol):
    """The part of a session its extensions use (see the module docstring)."""

    @property
    def cwd(self) -> Path:
        """The working directory (the project)."""
        ...

    @property
    def settings(self) -> Settings:
        """The settings in effect (replaced when the user trusts the project)."""
        ...

    @property
    def store(self) -> SessionStore:
        """The session file (replaced by a new session, a fork or a resume)."""
        ...

    @property
    def events(self) -> EventHub:
        """Subscribe to the session's events, emit events and notices."""
        ...

    @property
    def tool_gates(self) -> ToolGates:
        """The checks around every tool call, where an extension registers its own."""
        ...

    @property
    def permission_hints(self) -> dict[str, str]:
        """Tool call id → ``allow`` / ``ask``: what a PreToolUse hook said about a call."""
        ...

    @property
    def agent(self) -> ToolHolder:
        """The agent's tool list."""
        ...

    @property
    def session_id(self) -> str:
        """The session's id."""
        ...

    @property
    def session_file(self) -> Path | None:
        """The session file's path (``None`` while it exists only in memory)."""
        ...

    @property
    def messages(self) -> list[AgentMessage]:
        """The current branch."""
        ...

    @property
    def is_running(self) -> bool:
        """Whether a prompt (or a compaction) runs."""
        ...

    def abort(self) -> None:
        """Abort whatever runs."""
        ...

    def navigate(self, entry_id: str) -> str | None:
        """Move to another point of the session tree (see ``CodingSession.navigate``)."""
        ...

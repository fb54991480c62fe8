"""What an action is: one thing a user asks of a session, defined once for every front end.

An :class:`Action` holds its slash-command name, usage and description, how its arguments are
read from a slash command's text, the session operation itself (``run``), whether it may run while
the agent works, and what the user is told afterwards (``report``). Its bindings say how the other
front ends reach it: :class:`RpcCommand` (a command of pi's RPC protocol: its name, how the
command object's fields become the arguments, what the response's ``data`` holds) and, for ACP,
:class:`AcpCommand` (a slash command the editor lists) or :class:`AcpOption` (a session config
option, such as the model selector). The app's pickers and dialogs stay in ``tui/app``: they are
the app's way of asking for the arguments (``tui/app/command_registry.py``, ``binds``).

Availability: the app refuses an action with ``while_running=False`` while the agent works, and
ACP takes no prompt (so no slash command) while one runs. pi's RPC protocol runs every command as
it arrives; the session itself refuses what it cannot do during a run (compacting, rewinding) and
stops the run for what replaces the conversation (a new, resumed or forked session).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

from baton.providers.errors import BatonError
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions import CodingSession

A = TypeVar("A")
"""The action's arguments, as every front end parses them."""
R = TypeVar("R")
"""What the session operation returns."""

Level = Literal["info", "success", "warning", "error"]


class ActionError(BatonError):
    """The action cannot be done as asked (bad arguments, an unknown model): the message is
    for the user, as the front end shows errors (a notice, an RPC error, an ACP error)."""

    def __init__(self, message: str, level: Level = "error") -> None:
        super().__init__(message)
        self.level: Level = level


class ActionCancelled(ActionError):
    """The user aborted the action while it ran; nothing was changed (ACP answers ``cancelled``)."""


class NoData:
    """The RPC response carries no ``data`` field (pi's shape for commands that return nothing)."""

    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA = NoData()


@dataclass(frozen=True, slots=True)
class Report:
    """What the user is told when an action is done: ``text`` and its ``level`` (the app's
    notice); ACP shows it as a finished card titled ``title``, with ``meta`` as ``_meta.baton``.
    Plain text: each front end cleans and styles it as it shows untrusted text."""

    text: str
    level: Level = "info"
    title: str = ""
    meta: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RpcCommand(Generic[A, R]):
    """The action as a command of pi's RPC protocol: ``{"type": name, ...fields}``."""

    name: str
    parse: Callable[[CodingSession, JsonMapping], A]
    """The command object's fields as the arguments (:class:`ActionError` for a bad field)."""
    reply: Callable[[CodingSession, R], JsonValue | NoData]
    """The response's ``data`` (:data:`NO_DATA`: none)."""


@dataclass(frozen=True, slots=True)
class AcpCommand:
    """The action as a slash command an ACP editor lists (``available_commands_update``) and
    sends as a prompt (``/name args``); its report becomes a card in the thread."""

    hint: str | None = None
    """What the arguments are, for the editor's input hint (``None``: it takes none)."""
    description: str | None = None
    """The editor's wording, when it differs from the slash command's description."""


@dataclass(frozen=True, slots=True)
class AcpOption(Generic[A]):
    """The action as an ACP session config option (a select the editor shows)."""

    id: str
    parse: Callable[[CodingSession, JsonValue], A]
    """The value the editor chose as the arguments."""
    describe: Callable[[CodingSession, Sequence[Model]], JsonObject]
    """The option as ACP sends it (id, name, category, current value, choices), given the
    models available now."""
    notice_kind: str | None = None
    """The ACP tool kind of the card that reports a change (``None``: no card)."""


class SessionAction(Protocol):
    """An action whatever its argument and result types: what the front ends use."""

    @property
    def name(self) -> str:
        """The slash command's name (``/name``)."""

    @property
    def usage(self) -> str:
        """``/name [args]``."""

    @property
    def description(self) -> str:
        """One line."""

    @property
    def while_running(self) -> bool:
        """False: refused while the agent works."""

    @property
    def rpc_name(self) -> str | None:
        """The RPC command's name, when RPC has it."""

    @property
    def acp_command(self) -> AcpCommand | None:
        """The ACP slash command, when ACP lists it."""

    @property
    def acp_option(self) -> str | None:
        """The ACP config option's id, when it is one."""

    @property
    def option_notice(self) -> str | None:
        """The kind of card that reports an option change (``None``: none)."""

    async def from_text(self, session: CodingSession, text: str) -> Report | None:
        """Run from a slash command's arguments; what to tell the user."""

    async def from_rpc(self, session: CodingSession, command: JsonMapping) -> JsonValue | NoData:
        """Run from an RPC command object; the response's ``data``."""

    async def from_option(self, session: CodingSession, value: JsonValue) -> Report | None:
        """Run from an ACP config option's new value; what to tell the user."""

    def describe_option(self, session: CodingSession, models: Sequence[Model]) -> JsonObject:
        """The ACP config option as ACP sends it."""


@dataclass(frozen=True, slots=True)
class Action(Generic[A, R]):
    """One action, with its bindings (see the module's documentation)."""

    name: str
    usage: str
    description: str
    parse: Callable[[CodingSession, str], A]
    """A slash command's arguments (the text after ``/name``) as the arguments."""
    run: Callable[[CodingSession, A], Awaitable[R]]
    """The session operation."""
    report: Callable[[R], Report | None]
    """What to tell the user about the result (``None``: nothing)."""
    while_running: bool = True
    rpc: RpcCommand[A, R] | None = None
    acp: AcpCommand | AcpOption[A] | None = None

    @property
    def rpc_name(self) -> str | None:
        """The RPC command's name, when RPC has it."""
        return self.rpc.name if self.rpc is not None else None

    @property
    def acp_command(self) -> AcpCommand | None:
        """The ACP slash command, when ACP lists it."""
        return self.acp if isinstance(self.acp, AcpCommand) else None

    @property
    def acp_option(self) -> str | None:
        """The ACP config option's id, when it is one."""
        return self.acp.id if isinstance(self.acp, AcpOption) else None

    @property
    def option_notice(self) -> str | None:
        """The kind of card that reports an option change (``None``: none)."""
        return self.acp.notice_kind if isinstance(self.acp, AcpOption) else None

    async def from_text(self, session: CodingSession, text: str) -> Report | None:
        """Run from a slash command's arguments; what to tell the user."""
        return self.report(await self.run(session, self.parse(session, text)))

    async def from_rpc(self, session: CodingSession, command: JsonMapping) -> JsonValue | NoData:
        """Run from an RPC command object; the response's ``data``."""
        if self.rpc is None:
            raise ActionError(f"/{self.name} is not an RPC command")
        result = await self.run(session, self.rpc.parse(session, command))
        return self.rpc.reply(session, result)

    async def from_option(self, session: CodingSession, value: JsonValue) -> Report | None:
        """Run from an ACP config option's new value; what to tell the user."""
        if not isinstance(self.acp, AcpOption):
            raise ActionError(f"/{self.name} is not a config option")
        return self.report(await self.run(session, self.acp.parse(session, value)))

    def describe_option(self, session: CodingSession, models: Sequence[Model]) -> JsonObject:
        """The ACP config option as ACP sends it."""
        if not isinstance(self.acp, AcpOption):
            raise ActionError(f"/{self.name} is not a config option")
        return self.acp.describe(session, models)

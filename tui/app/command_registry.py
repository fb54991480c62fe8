"""The slash-command registry: :data:`COMMANDS` and the :func:`command` decorator.

A module of its own so that commands kept in other modules (``tui/app/mcp_command.py``,
``tui/app/rewind.py``) register here without importing ``tui/app/commands.py``, which imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp

Action = Callable[["BatonApp", str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A command: its name, argument syntax, one-line description and action."""

    name: str
    usage: str
    description: str
    action: Action
    while_running: bool = True


COMMANDS: dict[str, SlashCommand] = {}


def command(name: str, usage: str, description: str, *, while_running: bool = True) -> Callable[[Action], Action]:
    """Register an action as ``/name``."""

    def register(action: Action) -> Action:
        COMMANDS[name] = SlashCommand(name, usage, description, action, while_running)
        return action

    return register

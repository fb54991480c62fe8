"""The app's slash commands: :data:`COMMANDS`, :func:`command` for the app's own commands and
:func:`binds` for the app's flow of a shared action (``tui/actions``).

A shared action (``/model``, ``/compact``, ``/rewind``...) is a slash command here without
anything in this package: :func:`find_command` and :func:`slash_commands` give it the default
flow — its arguments parsed from the text, the session operation run, its report shown as a
notice. :func:`binds` replaces that flow where the app asks with pickers and dialogs or shows the
result its own way (:func:`bind` keeps the default flow but places the command in the list);
the name, usage, description and availability stay the action's.

A module of its own so that commands kept in other modules (``tui/app/mcp_command.py``,
``tui/app/rewind.py``) register here without importing ``tui/app/commands.py``, which imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from baton.tui.app.render import clean

if TYPE_CHECKING:
    from baton.tui.actions.action import Action, Report, SessionAction
    from baton.tui.app.baton_app import BatonApp

A = TypeVar("A")
R = TypeVar("R")
Flow = Callable[["BatonApp", str], Awaitable[None]]
"""What the app does for ``/name args``: the app and the text after the name."""


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A command: its name, argument syntax, one-line description and action."""

    name: str
    usage: str
    description: str
    action: Flow
    while_running: bool = True


COMMANDS: dict[str, SlashCommand] = {}
"""The app's own commands and its flows of shared actions, in the order ``/hotkeys`` lists them."""


def command(name: str, usage: str, description: str, *, while_running: bool = True) -> Callable[[Flow], Flow]:
    """Register an app-only command as ``/name``."""

    def register(action: Flow) -> Flow:
        COMMANDS[name] = SlashCommand(name, usage, description, action, while_running)
        return action

    return register


def binds(action: SessionAction) -> Callable[[Flow], Flow]:
    """Register the app's flow for the shared ``action`` (its pickers and dialogs)."""

    def register(flow: Flow) -> Flow:
        COMMANDS[action.name] = SlashCommand(action.name, action.usage, action.description, flow,
                                             action.while_running)
        return flow

    return register


def bind(action: SessionAction) -> None:
    """Register the shared ``action`` with the default flow, here in the order of the list."""
    COMMANDS[action.name] = _shared(action)


def _shared(action: SessionAction) -> SlashCommand:
    async def flow(app: BatonApp, args: str) -> None:
        show_report(app, await action.from_text(app.session, args))

    return SlashCommand(action.name, action.usage, action.description, flow, action.while_running)


def find_command(name: str) -> SlashCommand | None:
    """The command ``/name``: the app's, else a shared action's with the default flow."""
    spec = COMMANDS.get(name)
    if spec is not None:
        return spec
    from baton.tui.actions.registry import find_action

    action = find_action(name)
    return _shared(action) if action is not None else None


def slash_commands() -> list[SlashCommand]:
    """Every command: the app's, then the shared actions it has no flow of its own for."""
    from baton.tui.actions.registry import actions

    return [*COMMANDS.values(), *(_shared(a) for a in actions() if a.name not in COMMANDS)]


def show_report(app: BatonApp, report: Report | None) -> None:
    """Show what an action reports as a notice, and the status bar as the action left it."""
    if report is not None:
        app.notice(clean(report.text), report.level)
    app.refresh_status()


async def perform(app: BatonApp, action: Action[A, R], args: A) -> R:
    """Run ``action`` with the arguments a flow asked for; show its report; its result."""
    result = await action.run(app.session, args)
    show_report(app, action.report(result))
    return result

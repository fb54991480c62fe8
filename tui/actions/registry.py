"""Every action by name: the front ends find theirs here (the app's slash commands, RPC's
commands, ACP's slash commands and config options).

The built-in actions live in this package's modules by topic; each lists its actions in a
module-level ``ACTIONS`` tuple, read on the first lookup (so no front end loads them before it
needs one). Anything else — an extension, a test — adds one with :func:`register`.
"""

from __future__ import annotations

from typing import TypeVar

from baton.tui.actions.action import Action, SessionAction

A = TypeVar("A")
R = TypeVar("R")

ACTIONS: dict[str, SessionAction] = {}
"""Every registered action by name, in registration order (the built-in ones first)."""
_builtin_loaded = False


def register(action: Action[A, R]) -> Action[A, R]:
    """Add ``action``; its name and its RPC command must not be taken."""
    _load_builtin()
    _add(action)
    return action


def _add(action: SessionAction) -> None:
    if action.name in ACTIONS:
        raise ValueError(f"an action named {action.name!r} is registered already")
    rpc = action.rpc_name
    if rpc is not None and any(other.rpc_name == rpc for other in ACTIONS.values()):
        raise ValueError(f"the RPC command {rpc!r} belongs to another action")
    option = action.acp_option
    if option is not None and any(other.acp_option == option for other in ACTIONS.values()):
        raise ValueError(f"the ACP config option {option!r} belongs to another action")
    ACTIONS[action.name] = action


def _load_builtin() -> None:
    global _builtin_loaded
    if _builtin_loaded:
        return
    _builtin_loaded = True
    from baton.tui.actions import agents, approval, conversation, cost, models, rewind, session_file

    for module in (models, conversation, session_file, approval, rewind, agents, cost):
        for action in module.ACTIONS:
            _add(action)


def actions() -> list[SessionAction]:
    """Every action, in registration order."""
    _load_builtin()
    return list(ACTIONS.values())


def find_action(name: str) -> SessionAction | None:
    """The action named ``name`` (the slash command without its ``/``)."""
    _load_builtin()
    return ACTIONS.get(name)


def rpc_action(command: str) -> SessionAction | None:
    """The action behind RPC command ``command``."""
    return next((a for a in actions() if a.rpc_name == command), None)


def acp_commands() -> list[SessionAction]:
    """The actions an ACP editor lists as slash commands."""
    return [a for a in actions() if a.acp_command is not None]


def acp_options() -> list[SessionAction]:
    """The actions that are ACP session config options, in the order the editor shows them."""
    return [a for a in actions() if a.acp_option is not None]


def acp_option(option_id: str) -> SessionAction | None:
    """The action behind ACP config option ``option_id``."""
    return next((a for a in actions() if a.acp_option == option_id), None)

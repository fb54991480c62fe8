"""Reading the fields of a command object that came from outside (an RPC line): each value is
checked before use, and a bad one is an :class:`~baton.tui.actions.action.ActionError` whose
message names the field, as pi's RPC answers it."""

from __future__ import annotations

from baton.providers.json_types import JsonMapping
from baton.tui.actions.action import ActionError


def text_field(command: JsonMapping, name: str) -> str:
    """The string field ``name`` (required)."""
    value = optional_text(command, name)
    if value is None:
        raise ActionError(f'"{name}" is required')
    return value


def optional_text(command: JsonMapping, name: str) -> str | None:
    """The string field ``name``, or ``None`` when it is absent or null."""
    value = command.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ActionError(f'"{name}" must be a str')
    return value


def bool_field(command: JsonMapping, name: str) -> bool:
    """The boolean field ``name`` (required)."""
    value = command.get(name)
    if value is None:
        raise ActionError(f'"{name}" is required')
    if not isinstance(value, bool):
        raise ActionError(f'"{name}" must be true or false')
    return value

"""``/approval``: what runs without asking (``plan``, ``ask``, ``auto`` or ``full``). RPC:
``set_approval``; ACP: the ``mode`` config option (and the older session modes, ``session/set_mode``).

An editor is not the user's own settings: it may choose plan, ask or auto, and ``full`` (no
sandbox) only when the user's settings or command line already chose it for this session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject, JsonValue
from baton.tui.actions.action import AcpCommand, AcpOption, Action, ActionError, Report, RpcCommand
from baton.tui.actions.fields import text_field
from baton.tui.actions.text import shorten

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.providers.models import Model
    from baton.sessions import CodingSession

MODES = ("plan", "ask", "auto", "full")
MEANINGS = {
    "plan": "read-only: the model explores and proposes a plan (exit_plan_mode); nothing changes until you accept it.",
    "ask": "every command, edit and write asks; reads inside the workspace run.",
    "auto": "edits inside the workspace run, commands run in the sandbox; the rest asks.",
    "full": "everything runs, without the sandbox (protected paths and deny rules still apply).",
}


def _mode_from_text(session: CodingSession, text: str) -> str:
    mode = text.strip().lower()
    if mode not in MODES:
        raise ActionError(f"Unknown approval mode {shorten(mode, 40)!r}; use plan, ask, auto or full.", "warning")
    return mode


async def set_approval(session: CodingSession, mode: str) -> str:
    """Switch the approval mode (the session refuses anything but plan, ask, auto and full); the
    mode in effect."""
    return session.permissions.set_mode(mode)


def approval_report(mode: str) -> Report:
    """The mode and what it means (a warning for ``full``)."""
    return Report(f"Approval: {mode} — {MEANINGS[mode]}", "warning" if mode == "full" else "info")


def _mode_reply(session: CodingSession, mode: str) -> JsonValue:
    return {"mode": mode}


MODE_OPTION = "mode"
NAMES = {"plan": "Plan", "ask": "Ask", "auto": "Auto (sandboxed)", "full": "Full (no sandbox)"}


def editor_modes(session: CodingSession) -> tuple[str, ...]:
    """The modes an editor may choose for ``session``: ``full`` only when the user chose it."""
    full = session.settings.approval == "full" or session.permissions.mode == "full"
    return MODES if full else tuple(m for m in MODES if m != "full")


def _mode_from_option(session: CodingSession, value: JsonValue) -> str:
    if not isinstance(value, str) or value not in editor_modes(session):
        shown = shorten(value, 40) if isinstance(value, str) else type(value).__name__
        raise ActionError(f"Mode {shown!r} is not one an editor may choose here: "
                          f"{', '.join(editor_modes(session))}")
    return value


def mode_choices(session: CodingSession) -> list[JsonValue]:
    """``{id, name, description}`` for each mode an editor may choose (ACP session modes)."""
    return [{"id": m, "name": NAMES[m], "description": MEANINGS[m]} for m in editor_modes(session)]


def _mode_option(session: CodingSession, models: Sequence[Model]) -> JsonObject:
    options: list[JsonValue] = [{"value": m, "name": NAMES[m], "description": MEANINGS[m]}
                                for m in editor_modes(session)]
    return {"id": MODE_OPTION, "name": "Mode", "type": "select", "category": "mode",
            "currentValue": session.permissions.mode, "options": options}


APPROVAL: Action[str, str] = Action(
    "approval", "/approval [plan|ask|auto|full]", "What runs without asking: plan, ask, auto (sandboxed) or full",
    parse=_mode_from_text, run=set_approval, report=approval_report,
    rpc=RpcCommand("set_approval", parse=lambda session, command: text_field(command, "mode"), reply=_mode_reply),
    acp=AcpOption(MODE_OPTION, parse=_mode_from_option, describe=_mode_option, notice_kind="switch_mode"),
)

async def enter_plan(session: CodingSession, _: None) -> str:
    """Plan mode: read-only until the user accepts the model's plan."""
    return session.permissions.set_mode("plan")


PLAN: Action[None, str] = Action(
    "plan", "/plan", "Plan mode: read-only tools; the model proposes a plan for you to accept",
    parse=lambda session, text: None, run=enter_plan, report=approval_report,
    rpc=RpcCommand("set_plan_mode", parse=lambda session, command: None, reply=_mode_reply),
    acp=AcpCommand(),
)

ACTIONS = (APPROVAL, PLAN)

"""``/rewind``: take back code and/or conversation to an earlier prompt (checkpoints). RPC:
``rewind`` (``get_checkpoints`` lists the points). The app's pickers are in ``tui/app/rewind.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonValue
from baton.tui.actions.action import Action, ActionError, Report, RpcCommand

if TYPE_CHECKING:
    from baton.sessions import CodingSession
    from baton.sessions.checkpoints import RestoreMode, RewindResult


@dataclass(frozen=True, slots=True)
class RewindRequest:
    """Rewind to the checkpoint of user message ``entry_id``: its code, its conversation or both.
    ``confirm_hand_edits``: overwrite files changed by hand since then."""

    entry_id: str
    restore: RestoreMode = "both"
    confirm_hand_edits: bool = False


def _from_command(command: JsonMapping) -> RewindRequest:
    from baton.sessions.checkpoints.rpc import parse_rewind

    try:
        entry_id, restore, confirm = parse_rewind(command)
    except ValueError as exc:
        raise ActionError(str(exc)) from exc
    return RewindRequest(entry_id, restore, confirm)


def _from_text(session: CodingSession, text: str) -> RewindRequest:
    words = text.split()
    if not words:
        raise ActionError("Name the checkpoint to rewind to: /rewind ENTRY_ID [both|conversation|code]")
    return _from_command({"entryId": words[0], "restore": words[1] if len(words) > 1 else "both"})


async def rewind(session: CodingSession, request: RewindRequest) -> RewindResult:
    """Rewind (or, when files changed by hand would be overwritten and that is not confirmed,
    say so and change nothing)."""
    return await session.rewind(request.entry_id, request.restore, confirm_hand_edits=request.confirm_hand_edits)


def rewind_report(result: RewindResult) -> Report:
    """What was taken back (a warning when a confirmation is needed first)."""
    if result.needs_confirmation:
        return Report(f"Rewind not done: {result.summary()}.", "warning")
    return Report(f"Rewound: {result.summary()}.", "success")


def _reply(session: CodingSession, result: RewindResult) -> JsonValue:
    from baton.sessions.checkpoints.rpc import rewind_data

    return rewind_data(session, result)


REWIND: Action[RewindRequest, RewindResult] = Action(
    "rewind", "/rewind", "Take back code and/or conversation to an earlier prompt (also Esc Esc)",
    parse=_from_text, run=rewind, report=rewind_report, while_running=False,
    rpc=RpcCommand("rewind", parse=lambda session, command: _from_command(command), reply=_reply),
)

ACTIONS = (REWIND,)

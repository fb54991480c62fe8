"""The checkpoint commands of the RPC mode, as plain functions of a session (no I/O here).

``{"type": "get_checkpoints"}`` → :func:`get_checkpoints`;
``{"type": "rewind", "entryId": ..., "restore": "both" | "conversation" | "code",
"confirmHandEdits": false}`` → :func:`rewind`. Each returns the response's ``data``; errors are
raised (``ValueError`` for a malformed command, :class:`SessionError` otherwise) for the RPC
loop to turn into ``success: false``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject

if TYPE_CHECKING:
    from baton.sessions.checkpoints.tracker import RestoreMode
    from baton.sessions.coding_session import CodingSession

RESTORE_MODES: tuple[RestoreMode, ...] = ("both", "conversation", "code")


def get_checkpoints(session: CodingSession) -> JsonObject:
    """``{"checkpoints": [...]}``: newest first, as ``baton --checkpoints`` prints them."""
    return {"checkpoints": [p.to_json() for p in session.checkpoints()]}


async def rewind(session: CodingSession, command: JsonObject) -> JsonObject:
    """Rewind as the command says; ``data`` holds ``restored`` and ``removed``
    (workspace-relative), ``kept``, ``handEdited``, ``needsConfirmation`` (nothing was done:
    files changed by hand would be overwritten; send again with ``confirmHandEdits: true``),
    ``text`` (the prompt, for conversation rewinds), ``checkpointId``, a one-line ``summary`` and
    the new ``checkpoints`` list."""
    entry_id = command.get("entryId")
    if not isinstance(entry_id, str) or not entry_id:
        raise ValueError("rewind needs an entryId (a user message entry id from get_checkpoints)")
    wanted = command.get("restore", "both")
    restore = next((mode for mode in RESTORE_MODES if mode == wanted), None)
    if restore is None:
        raise ValueError(f"restore must be one of {', '.join(RESTORE_MODES)}")
    confirm = command.get("confirmHandEdits", False) is True
    result = await session.rewind(entry_id, restore, confirm_hand_edits=confirm)
    return {**result.to_json(), "summary": result.summary(), **get_checkpoints(session)}

"""Keeping the session file in step with the live session.

Every message the agent finishes is appended *before* subscribers hear about it
(the session's agent listener calls :meth:`SessionRecorder.save` first), so whatever a UI has
shown as finished is in the file (a killed baton never loses it; :mod:`sessions.store` says when
it is forced to the disk: at the latest when the run ends, :meth:`SessionRecorder.sync`). A
message that cannot be saved aborts the run (interactive use) or is reported once the run is over
(print and JSON modes: the answer is shown first). A branch whose recorded model or thinking level
differs from the live one gets a change entry, and a branch that ends in tool calls without
results (a crash mid-tool) gets error results saying so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.agent.messages import AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from baton.sessions.errors import SessionSaveError
from baton.sessions.resume import interrupted_tool_results

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

logger = logging.getLogger(__name__)


class SessionRecorder:
    """Writes one session's messages and settings changes to its file (see the module docstring)."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session
        self._error: Exception | None = None

    def save(self, message: AgentMessage) -> None:
        """Append ``message`` to the file (summaries are entries of their own, written elsewhere)."""
        if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
            return
        store = self._session.store
        try:
            if isinstance(message, CustomMessage):
                store.append_custom_message(message.custom_type, message.content, message.display, message.details)
            else:
                store.append_message(message)
        except (OSError, ValueError) as exc:  # ValueError: what JSON cannot encode
            abort = self._session.abort_on_save_error
            if self._error is None:
                self._error = exc
                if abort:  # else the caller reports it once, after the run
                    logger.error("could not write session file: %s", exc)
            if abort:
                self._session.agent.abort()

    def sync(self) -> None:
        """Force what was appended to the disk (a run has ended; see :mod:`sessions.store`); a disk
        that refuses is reported like a message that could not be saved."""
        try:
            self._session.store.sync()
        except OSError as exc:
            if self._error is None:
                self._error = exc
                logger.error("could not sync session file: %s", exc)

    def raise_save_error(self) -> None:
        """Raise :class:`SessionSaveError` for a message that could not be saved since the last call."""
        error, self._error = self._error, None
        if error is not None:
            raise SessionSaveError(f"Could not save the session to {self._session.store.path}: {error}") from error

    def record_settings_if_changed(self) -> None:
        """Record the model and thinking level when the branch says otherwise (or nothing)."""
        session = self._session
        ctx = session.store.build_context()
        model = session.model
        if ctx.model is None or (ctx.model[0], ctx.model[1]) != (model.provider, model.id):
            session.store.append_model_change(model.provider, model.id)
        if ctx.thinking_level != session.agent.thinking:
            session.store.append_thinking_level_change(session.agent.thinking)

    def repair_interrupted_tool_calls(self) -> None:
        """A branch ending in tool calls without results (crash mid-tool) gets error results
        saying the execution was interrupted."""
        session = self._session
        results = interrupted_tool_results(session.agent.messages)
        for result in results:
            session.store.append_message(result)
        if results:
            session.agent.replace_messages([*session.agent.messages, *results])

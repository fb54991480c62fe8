"""Failing over across providers: a turn that keeps failing goes on on the next fallback model.

When a request still fails after the session's retries with an error another provider may not
have (:func:`~baton.sessions.retry.is_failover_error`: overloaded, 5xx, rate limited, connection
lost, an idle stream), the session switches to the next model of ``fallbackModels`` (or
``--fallback``) that can be called, exactly as ``/model`` does (the transcript is projected for
it per request: thinking as text, ids normalised, images downgraded), and continues the turn.
The failed reply stays in the session file as the error it was; it is not sent to the next model,
and the tool calls that already ran are not run again (the turn continues after their results).

Every step is visible: a ``model_fallback`` event (a notice in the app, a JSON line), the
``model_change`` entry and a ``baton.model_fallback`` entry saying why (``/tree`` and the exports
show it beside the model change: :func:`fallback_note`). ``fallback.returnAfter`` (``prompt``)
brings the primary model back at the next prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from baton.providers.messages import AssistantMessage
from baton.providers.models import Model
from baton.sessions.entries import CustomEntry, ModelChangeEntry, SessionEntry
from baton.sessions.events import ModelFallbackEvent
from baton.sessions.models import find_model
from baton.sessions.setting_trust import one_line

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

FALLBACK_ENTRY = "baton.model_fallback"
"""The custom entry type that records a failover (and the return to the primary model)."""
NOTE_CHARS = 160
"""The longest note :func:`fallback_note` makes (a session file may hold any text)."""


class SessionFailover:
    """The failover state of one session: the primary model while a fallback serves."""

    def __init__(self, session: CodingSession) -> None:
        self._session = session
        self.primary: Model | None = None
        """The model the failover started from (``None``: no failover under way)."""
        self._serving: Model | None = None
        self._tried: set[str] = set()

    def restore(self) -> None:
        """A resumed session whose last turn ended on a fallback: the primary model comes back at
        the next prompt, as it would have in the process that failed over."""
        session = self._session
        for entry in reversed(session.store.branch_path()):
            if isinstance(entry, ModelChangeEntry):
                return  # a switch after the last failover (by the user): nothing to return from
            if not isinstance(entry, CustomEntry) or entry.custom_type != FALLBACK_ENTRY:
                continue
            data = entry.data
            if not isinstance(data, dict) or data.get("returning") or data.get("to") != session.model.ref:
                return
            primary = find_model(str(data.get("from", "")), session.options.extra_models)
            if primary is not None:
                self.primary, self._serving = primary, session.model
            return

    def chain(self) -> list[str]:
        """The fallback models, in order (``--fallback`` replaces the setting)."""
        session = self._session
        given = session.options.fallback_models
        return list(given) if given is not None else list(session.settings.fallback_models)

    def next_model(self) -> Model | None:
        """The first fallback that is not the current model, not tried in this failover and can
        be called (has a key, or needs none)."""
        session = self._session
        current = session.model
        for ref in self.chain():
            model = find_model(ref, session.options.extra_models)
            if model is None or model.ref in self._tried or model.ref == current.ref:
                continue
            if session.models.can_call(model):
                return model
        return None

    async def take_over(self, failed: AssistantMessage, attempts: int) -> bool:
        """Continue on the next fallback model after ``failed`` (the caller drops it from the
        context); ``False`` when there is none to go to."""
        target = self.next_model()
        if target is None:
            return False
        session = self._session
        previous = session.model
        if self.primary is None or self._serving is not previous:
            self.primary = previous  # a first failover, or the user switched models since
            self._tried = set()
        self._tried.add(previous.ref)
        reason = _reason(failed)
        await session.models.switch(target)
        self._serving = session.model
        session.store.append_custom(FALLBACK_ENTRY, {"from": previous.ref, "to": target.ref, "reason": reason,
                                                     "attempts": attempts})
        await session.events.emit(ModelFallbackEvent(previous, target, reason, attempts))
        return True

    async def before_prompt(self) -> None:
        """At a new prompt: back to the primary model (``fallback.returnAfter: prompt``)."""
        primary, serving = self.primary, self._serving
        if primary is None:
            return
        self._tried = set()
        session = self._session
        if session.model is not serving:  # the user chose a model since: the failover is over
            self.primary = self._serving = None
            return
        if session.settings.fallback.return_after != "prompt":
            return
        self.primary = self._serving = None
        if not session.models.can_call(primary):
            return
        await session.models.switch(primary)
        session.store.append_custom(FALLBACK_ENTRY, {"from": serving.ref if serving else None, "to": primary.ref,
                                                     "returning": True})
        if serving is not None:
            await session.events.emit(ModelFallbackEvent(serving, primary, "the previous prompt", returning=True))


def _reason(failed: AssistantMessage) -> str:
    text = " ".join((failed.error_message or "an error").split())
    return text if len(text) <= 120 else text[:119] + "…"


def _text(value: object, limit: int) -> str:
    """A string (or number) read from a session file as one plain line of at most ``limit``
    characters (:func:`~baton.sessions.setting_trust.one_line`)."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return ""
    return one_line(str(value), limit)


def fallback_note(data: object) -> str | None:
    """Why the model changed, from a ``baton.model_fallback`` entry's data: ``failover from
    anthropic/claude-x after 4 tries: overloaded``, or ``back from the fallback openai/gpt-x``.
    The file is untrusted: the note is plain text, one line, at most :data:`NOTE_CHARS` long."""
    if not isinstance(data, Mapping):
        return None
    source = _text(data.get("from"), 60)
    if data.get("returning") is True:
        note = f"back from the fallback {source}" if source else "back from the fallback"
        return _text(note, NOTE_CHARS)
    attempts = data.get("attempts")
    tries = ""
    if isinstance(attempts, int) and not isinstance(attempts, bool) and 0 < attempts < 10_000:
        tries = f" after {attempts} {'try' if attempts == 1 else 'tries'}"
    reason = _text(data.get("reason"), NOTE_CHARS)
    note = f"failover from {source}{tries}" if source else f"failover{tries}"
    return _text(f"{note}: {reason}" if reason else note, NOTE_CHARS)


def fallback_notes(entries: Sequence[SessionEntry]) -> dict[str, str]:
    """The note of each model change a failover made (or undid), by the model change's entry id:
    the ``baton.model_fallback`` entry is written as the model change's child."""
    changes = {e.id for e in entries if isinstance(e, ModelChangeEntry)}
    notes: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry, CustomEntry) and entry.custom_type == FALLBACK_ENTRY and entry.parent_id in changes:
            note = fallback_note(entry.data)
            if note and entry.parent_id is not None:
                notes[entry.parent_id] = note
    return notes

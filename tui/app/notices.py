"""What the app's notices say: retries, compaction, model switches, approval modes, a missing key.

Pure functions from what happened to the notice's text (and level), so the wording lives in one
place and is easy to test. Untrusted strings (provider errors, model names from models.json)
are cut to one line; the transcript shows notices as plain text, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

from baton.providers.paths import baton_home_display
from baton.tui.app.render import format_duration, one_line

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions.events import AutoRetryEndEvent, AutoRetryStartEvent, CompactionReason
    from baton.tui.app.widgets.messages import NoticeLevel

APPROVAL_MEANINGS = {
    "plan": "read-only: the model explores and proposes a plan (exit_plan_mode); nothing changes until you accept it.",
    "ask": "every command, edit and write asks; reads inside the workspace run.",
    "auto": "edits inside the workspace run, commands run in the sandbox; the rest asks.",
    "full": "everything runs, without the sandbox (protected paths and deny rules still apply).",
}
"""What each approval mode means, said when ``/approval`` switches to it."""
MODE_CYCLE = ("ask", "plan", "auto")
"""What Shift+Tab steps through: default (every change asks), plan, auto-accept edits. ``full``
is never reached by a key: only ``/approval full``."""


def retry_notice(attempt: int, max_attempts: int, delay_ms: int, error: str) -> str:
    """The notice shown when a failed request is retried."""
    return (f"↻ Retrying in {format_duration(delay_ms / 1000)} (attempt {attempt}/{max_attempts}): "
            f"{one_line(error, 200)}")


def retry_started(event: AutoRetryStartEvent) -> str:
    """The notice for a retry, numbered across the adapter's and the session's attempts."""
    return retry_notice(event.number, event.limit, event.delay_ms, event.error_message or "")


def retry_ended(event: AutoRetryEndEvent) -> tuple[str, NoticeLevel] | None:
    """The notice for a retry sequence that did not succeed: cancelled by the user, or out of
    attempts. None when it succeeded, or a retried request failed otherwise (aborted, or an
    error no retry fixes): the message itself already says how it ended."""
    from baton.sessions.retry import RETRY_CANCELLED

    if event.success:
        return None
    if event.final_error == RETRY_CANCELLED:
        return "↻ Retry cancelled.", "warning"
    if event.attempt >= event.max_attempts and not event.aborted:
        return f"Retries exhausted: {one_line(event.final_error or 'unknown error', 300)}", "error"
    return None


def compaction_started(reason: CompactionReason) -> str:
    """The notice when a compaction starts, with why."""
    why = {"overflow": "the context overflowed", "manual": "requested"}.get(reason, "the context is filling up")
    return f"⟳ Compacting the conversation ({why})…"


def model_switched(previous: Model, model: Model, handoff: str | None) -> Content:
    """``⇄ Model a → b`` and, when the switch changes what the model sees, the handoff summary."""
    text = Content.assemble(("⇄ Model ", "bold"), (previous.ref, "$text-muted"), " → ", (model.ref, "bold"))
    if handoff:
        text = Content.assemble(text, ("  ·  handoff: ", "$text-muted"), (handoff, "$text-warning"))
    return text


def no_api_key(provider: str, variable: str) -> str:
    """The warning when the model's provider has no key."""
    models_json = f"{baton_home_display()}/models.json"
    return (f"⚠ No API key for {provider}: set {variable} (or apiKey in {models_json}), "
            "or pick another model with /model.")

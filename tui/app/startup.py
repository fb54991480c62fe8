"""Start-up: what the app takes from its session once it is open, and what it says then.

The app paints its first frame before the session opens (``BatonApp(opener=...)``); the heavy
imports behind opening run in a thread meanwhile (:func:`preload`). Once the session is open the
app wires itself to it (``BatonApp._attach_session``) with what this module gathers: the
prompt history, the prompt templates and skills for ``/`` completion, the problems found while
opening, a missing API key, and the project trust question.

Nothing here imports pydantic or the session at module level: the app imports this module
before its first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from baton.tui.app.notices import no_api_key
from baton.tui.app.render import one_line
from baton.tui.app.widgets.status import is_demo

if TYPE_CHECKING:
    from baton.agent.messages import AgentMessage
    from baton.sessions import CodingSession
    from baton.tui.app.baton_app import BatonApp

ArgumentSource = Callable[[], Sequence[tuple[str, str]]]
"""Completions for a command's argument: (value, description) pairs."""


def preload() -> None:
    """Import what opening a session and showing a transcript need (run in a worker thread)."""
    import baton.sessions.coding_session
    import baton.tui.app.session_events
    import baton.tui.app.widgets.transcript  # noqa: F401


def prompt_history(messages: Sequence[AgentMessage]) -> list[str]:
    """The prompts sent so far, oldest first (Up in the editor walks them back)."""
    if not messages:
        return []  # also keeps pydantic (via the message widgets) out of the first frame
    from baton.providers.messages import UserMessage
    from baton.tui.app.widgets.messages import user_text

    texts = (user_text(message.content) for message in messages if isinstance(message, UserMessage))
    return [text for text in texts if text.strip()]


def prompt_command_items(session: CodingSession) -> list[tuple[str, str]]:
    """Prompt templates and skills for ``/`` completion (argument hint before the description)."""
    return [(c.name, f"{c.argument_hint}  {c.description}".strip()) for c in session.prompt_commands()]


def argument_sources(app: BatonApp) -> dict[str, ArgumentSource]:
    """Completions for the arguments of ``/model``, ``/thinking`` and ``/approval``."""

    def thinking() -> list[tuple[str, str]]:
        from baton.providers.models import THINKING_LEVELS  # pydantic: not before the first frame

        return [(level, "") for level in THINKING_LEVELS]

    def models() -> list[tuple[str, str]]:
        if not app.is_open:
            return []
        try:
            return [(m.ref, m.name) for m in app.session.models.available()]
        except Exception:  # a broken models.json must not break completion
            return []

    return {"model": models, "thinking": thinking,
            "approval": lambda: [(mode, "") for mode in ("plan", "ask", "auto", "full")]}


def opening_problems(session: CodingSession) -> list[str]:
    """What went wrong while opening (bad settings, skipped session lines, models.json errors)."""
    problems = list(session.warnings)
    try:
        from baton.providers.catalog import models_json_errors

        problems += [f"models.json: {e}" for e in models_json_errors()]
    except Exception:  # the catalog itself failed: opening already said so
        pass
    return problems


def missing_key_warning(session: CodingSession) -> str | None:
    """A warning when the model cannot be reached for want of an API key; None otherwise."""
    model = session.model
    options = session.options
    extra = {m.ref for m in options.extra_models or []}
    if is_demo(model) or not model.base_url or model.ref in extra or options.api_key:
        return None  # embedded models (tests, faux) bring their own transport
    try:
        from baton.providers.api_keys import env_var_for, has_api_key

        if model.is_local or has_api_key(model.provider):
            return None
        variable = env_var_for(model.provider)
    except Exception:  # an unknown provider: the request will say what is wrong
        return None
    return no_api_key(model.provider, variable)


def ask_project_trust(app: BatonApp) -> None:
    """Say what of the project only the user's own settings may set (ignored, trusted or not),
    and ask once whether the project's settings, hooks and ``.mcp.json`` servers may apply."""
    from baton.sessions.trust import ignored_summary

    session = app.session
    refused = list(session.settings.refused)
    if refused:
        app.notice(f"⚠ {one_line(ignored_summary(None, refused, app.cwd, '') or '', 400)}", "warning")
    pending = session.extensions.pending_trust
    if pending is None:
        return

    async def ask() -> None:
        from baton.tui.app.widgets.pickers import ConfirmScreen

        body = (f"Until you trust {pending.project}, these stay off: {', '.join(pending.what)}.\n"
                f"{pending.question()}\nAsked again only if these change.")
        trusted = await app.push_screen_wait(
            ConfirmScreen("Trust this project?", body, "Enter/y trust · Esc/n not now"))
        if trusted:
            session.extensions.trust_project()
            app.notice(f"Project trusted: {', '.join(pending.what)} are on.", "success")
        else:
            hint = "they stay off for this session; asked again at the next start"
            # Under --no-mcp no server starts, trusted or not: .mcp.json is not named as ignored.
            if summary := ignored_summary(pending, [], pending.project, hint, servers=session.options.mcp):
                app.notice(f"⚠ {one_line(summary, 400)}", "warning")
        app.refresh_status()

    app.run_worker(ask(), group="trust", exit_on_error=False)

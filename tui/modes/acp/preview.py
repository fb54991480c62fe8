"""What ``session/new`` answers, worked out before the session opens.

The answer names the session, its model and thinking level, the models an editor may switch to
and the approval modes; all of that follows from the settings and the command line, which are
cheap to read. The session itself — tools, system prompt, agent, extensions, permissions and
sandbox, MCP servers — opens behind the answer (``BatonAcpAgent``), and every request for the
session waits for it. A :class:`SessionPreview` stands in for the session in
:func:`~baton.tui.modes.acp.config.describe`, so the answer is built by the same code as the
opened session's description; once the session has opened the two are compared, and a
difference is sent to the editor as updates (and logged)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from baton.tui.modes.acp.errors import INVALID_PARAMS, AcpError

if TYPE_CHECKING:
    from baton.providers.models import Model, ThinkingLevel
    from baton.sessions import CodingSession, SessionOptions
    from baton.sessions.settings import Settings


@dataclass(frozen=True, slots=True)
class PreviewModels:
    """``session.models`` as far as the description reads it."""

    models: tuple[Model, ...]

    def available(self) -> list[Model]:
        """The models usable now (as ``SessionModels.available``)."""
        return list(self.models)


@dataclass(frozen=True, slots=True)
class PreviewPermissions:
    """``session.permissions`` as far as the description reads it."""

    mode: str


@dataclass(frozen=True, slots=True)
class SessionPreview:
    """What a new session will be, as its description reads it."""

    session_id: str
    model: Model
    thinking_level: ThinkingLevel
    settings: Settings
    models: PreviewModels
    permissions: PreviewPermissions

    def as_session(self) -> CodingSession:
        """The preview where the description functions take a session (they read only the
        fields above; an attribute they need and the preview lacks raises AttributeError)."""
        return cast("CodingSession", self)


def preview_session(options: SessionOptions) -> SessionPreview | None:
    """The preview of a new (or unsaved) session opened with ``options``, which holds its
    settings; ``None`` when only the opening can tell (no model chosen yet)."""
    from baton.providers.models import clamp_thinking_level
    from baton.sessions.models import available_models

    settings = options.settings
    if options.model is None or settings is None or options.session not in ("new", "none"):
        return None
    if options.trust_project is not None:  # as CodingSession.open does
        settings = settings.with_trust(options.trust_project)
    requested: ThinkingLevel = options.thinking or settings.default_thinking_level or "off"
    return SessionPreview(
        session_id=_new_id(), model=options.model,
        thinking_level=clamp_thinking_level(options.model, requested), settings=settings,
        models=PreviewModels(tuple(available_models(options.extra_models, options.model))),
        permissions=PreviewPermissions(start_mode(settings, options.approval)),
    )


def _new_id() -> str:
    """A random (version 4) UUID as text, as ``SessionStore.create`` makes (without importing
    :mod:`uuid`, which loads the platform modules)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def start_mode(settings: Settings, override: str | None) -> str:
    """The approval mode a new session starts in: ``--approval`` when given, else the setting
    (``sessions.permissions.setup.effective_mode``; a new session records no mode to resume)."""
    from baton.tui.actions.approval import MODES

    if override is None:
        return settings.approval
    if override not in MODES:
        raise AcpError(INVALID_PARAMS, f"unknown approval mode {override!r}: use plan, ask, auto or full")
    return override

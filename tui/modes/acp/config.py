"""The session config options ACP shows (the actions that are options: the model and the
thinking level, ``tui/actions/models.py``), and the unstable ``models`` state some clients read
instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject, JsonValue

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions import CodingSession


def describe(session: CodingSession) -> JsonObject:
    """The ``session/new`` / ``session/load`` result fields besides the id: the config options,
    the models and the approval modes (``session`` may be a :class:`~.preview.SessionPreview`)."""
    from baton.tui.actions.approval import mode_choices

    models = session.models.available()
    modes: JsonObject = {"currentModeId": session.permissions.mode, "availableModes": mode_choices(session)}
    return {"configOptions": config_options(session, models), "models": model_state(session, models), "modes": modes}


def config_options(session: CodingSession, models: Sequence[Model] | None = None) -> list[JsonValue]:
    """Every option's state (``models``: the available models, when known already)."""
    from baton.tui.actions.registry import acp_options

    models = session.models.available() if models is None else models
    return [action.describe_option(session, models) for action in acp_options()]


def model_state(session: CodingSession, models: Sequence[Model] | None = None) -> JsonObject:
    """The unstable ``models`` field of ``session/new`` and ``session/load``."""
    from baton.tui.actions.models import model_description

    available: list[JsonValue] = [
        {"modelId": m.ref, "name": m.name, "description": model_description(m)}
        for m in (session.models.available() if models is None else models)
    ]
    return {"currentModelId": session.model.ref, "availableModels": available}

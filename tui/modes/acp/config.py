"""The session's model and thinking level as ACP session config options (and the unstable
``models`` state some clients read instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions import CodingSession

MODEL_OPTION = "model"
THINKING_OPTION = "thinking"


def _model_description(model: Model) -> str:
    window = f"{model.context_window // 1000}k context" if model.context_window else ""
    return " · ".join(p for p in (model.provider, model.api, window) if p)


def config_options(session: CodingSession, models: list[Model] | None = None) -> list[dict[str, Any]]:
    """The model selector (category ``model``) and the thinking level (``thought_level``)."""
    from baton.sessions.models import thinking_levels_for

    current = session.model
    models = session.models.available() if models is None else models
    return [
        {
            "id": MODEL_OPTION, "name": "Model", "type": "select", "category": "model",
            "description": "Switching keeps the conversation: the next request is sent to the new model.",
            "currentValue": current.ref,
            "options": [{"value": m.ref, "name": m.name, "description": _model_description(m)} for m in models],
        },
        {
            "id": THINKING_OPTION, "name": "Thinking", "type": "select", "category": "thought_level",
            "currentValue": session.thinking_level,
            "options": [{"value": level, "name": level} for level in thinking_levels_for(current)],
        },
    ]


def model_state(session: CodingSession, models: list[Model] | None = None) -> dict[str, Any]:
    """The unstable ``models`` field of ``session/new`` and ``session/load``."""
    return {
        "currentModelId": session.model.ref,
        "availableModels": [
            {"modelId": m.ref, "name": m.name, "description": _model_description(m)}
            for m in (session.models.available() if models is None else models)
        ],
    }


def find_available(session: CodingSession, ref: str) -> Model | None:
    """The available model named ``provider/id`` (case-insensitive)."""
    wanted = ref.strip().lower()
    for model in session.models.available():
        if model.ref.lower() == wanted:
            return model
    return None

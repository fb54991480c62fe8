"""``/model`` and ``/thinking``: switching the model (with what the handoff changes) and the
thinking level. RPC: ``set_model``, ``set_thinking_level``; ACP: the ``model`` and ``thinking``
session config options (and the unstable ``session/set_model``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.tui.actions.action import NO_DATA, AcpOption, Action, ActionError, NoData, Report, RpcCommand
from baton.tui.actions.fields import text_field
from baton.tui.actions.text import shorten

if TYPE_CHECKING:
    from baton.providers.models import Model, ThinkingLevel
    from baton.sessions import CodingSession
    from baton.sessions.handoff import HandoffPreview

logger = logging.getLogger(__name__)
MODEL_OPTION = "model"
THINKING_OPTION = "thinking"


def is_current(model: Model, current: Model) -> bool:
    """``model`` is the one in use (same ``provider/id`` on the same wire protocol)."""
    return model.ref == current.ref and model.api == current.api


def model_json(model: Model) -> JsonObject:
    """pi's Model object."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def model_description(model: Model) -> str:
    """``provider · api · 200k context``: a model's line in an editor's list."""
    window = f"{model.context_window // 1000}k context" if model.context_window else ""
    return " · ".join(p for p in (model.provider, model.api, window) if p)


def find_available(session: CodingSession, ref: str) -> Model | None:
    """The available model named ``provider/id`` (case-insensitive)."""
    wanted = ref.strip().lower()
    return next((m for m in session.models.available() if m.ref.lower() == wanted), None)


# ---------------------------------------------------------------------------------------------
# /model


@dataclass(frozen=True, slots=True)
class ModelTarget:
    """The model to switch to. ``handoff``: its preview, when the front end has it already (the
    app's picker shows it); else it is computed before the switch when ``preview`` is set."""

    model: Model
    handoff: HandoffPreview | None = None
    preview: bool = True


@dataclass(frozen=True, slots=True)
class ModelSwitch:
    """A switch done (or not needed: ``switched`` is false when the model was in use already)."""

    previous: Model
    model: Model
    handoff: HandoffPreview | None = None
    switched: bool = True


def _preview(session: CodingSession, model: Model) -> HandoffPreview | None:
    if not session.messages:
        return None
    try:
        return session.models.handoff_preview(model)
    except Exception:  # a preview is advice; never block a switch on it
        logger.exception("handoff preview failed")
        return None


async def switch_model(session: CodingSession, target: ModelTarget) -> ModelSwitch:
    """Hot-swap the session's model; the conversation carries over through the transform."""
    previous = session.model
    if is_current(target.model, previous):
        return ModelSwitch(previous, previous, switched=False)
    handoff = target.handoff if target.handoff is not None else (
        _preview(session, target.model) if target.preview else None)
    await session.models.switch(target.model)
    return ModelSwitch(previous, session.model, handoff)


def switch_report(switch: ModelSwitch) -> Report | None:
    """``Switched from A to B. Handoff: ...`` (nothing when no switch was needed)."""
    if not switch.switched:
        return None
    previous, model = switch.previous.ref, switch.model.ref
    handoff = switch.handoff.to_dict() if switch.handoff is not None else None
    text = f"Switched from {previous} to {model}."
    if switch.handoff is not None:
        text += f" Handoff: {switch.handoff.summary()}."
    return Report(text, title=f"Model: {model}",
                  meta={"notice": "model_switch", "from": previous, "to": model, "handoff": handoff})


def _model_from_text(session: CodingSession, text: str) -> ModelTarget:
    model = find_available(session, text)
    if model is None:
        raise ActionError(f"No available model is named {shorten(text, 80)!r} (provider/id).")
    return ModelTarget(model)


def _model_from_rpc(session: CodingSession, command: JsonMapping) -> ModelTarget:
    provider, model_id = text_field(command, "provider"), text_field(command, "modelId")
    model = find_available(session, f"{provider}/{model_id}")
    if model is None:
        raise ActionError(f"Model not found: {provider}/{model_id}")
    return ModelTarget(model, preview=False)


def _model_from_option(session: CodingSession, value: JsonValue) -> ModelTarget:
    ref = str(value)
    model = find_available(session, ref)
    if model is None:
        raise ActionError(f"Model not available: {ref} (is its API key set?)")
    return ModelTarget(model)


def _model_option(session: CodingSession, models: Sequence[Model]) -> JsonObject:
    return {
        "id": MODEL_OPTION, "name": "Model", "type": "select", "category": "model",
        "description": "Switching keeps the conversation: the next request is sent to the new model.",
        "currentValue": session.model.ref,
        "options": [{"value": m.ref, "name": m.name, "description": model_description(m)} for m in models],
    }


MODEL: Action[ModelTarget, ModelSwitch] = Action(
    "model", "/model [pattern]", "Switch model (picker; shows what the new model will not receive)",
    parse=_model_from_text, run=switch_model, report=switch_report,
    rpc=RpcCommand("set_model", parse=_model_from_rpc, reply=lambda session, switch: model_json(session.model)),
    acp=AcpOption(MODEL_OPTION, parse=_model_from_option, describe=_model_option, notice_kind="switch_mode"),
)


# ---------------------------------------------------------------------------------------------
# /thinking


@dataclass(frozen=True, slots=True)
class ThinkingChange:
    """The level asked for, the level in effect (clamped to what ``model`` can do)."""

    requested: ThinkingLevel
    applied: ThinkingLevel
    model: str


def _level_from_text(session: CodingSession, text: str) -> ThinkingLevel:
    from baton.providers.models import THINKING_LEVELS

    level = text.strip().lower()
    for known in THINKING_LEVELS:
        if level == known:
            return known
    raise ActionError(f"Unknown thinking level {shorten(level, 40)!r}; use one of: {', '.join(THINKING_LEVELS)}.")


def _level_from_rpc(session: CodingSession, command: JsonMapping) -> ThinkingLevel:
    from baton.sessions.models import parse_thinking_level

    level = parse_thinking_level(command.get("level"))
    if level is None:
        raise ActionError('"level" must be one of off, minimal, low, medium, high, xhigh')
    return level


def _level_from_option(session: CodingSession, value: JsonValue) -> ThinkingLevel:
    from baton.sessions.models import parse_thinking_level

    level = parse_thinking_level(value)
    if level is None:
        raise ActionError(f"Unknown thinking level: {value!r}")
    return level


async def set_thinking(session: CodingSession, level: ThinkingLevel) -> ThinkingChange:
    """Set the thinking level (the session clamps it to the model)."""
    return ThinkingChange(level, session.models.set_thinking(level), session.model.ref)


def thinking_report(change: ThinkingChange) -> Report:
    """``Thinking: high.``, or a warning when the model cannot do the level asked for."""
    if change.applied != change.requested:
        return Report(f"Thinking: {change.applied} ({change.model} cannot do {change.requested}).", "warning")
    return Report(f"Thinking: {change.applied}.")


def _thinking_option(session: CodingSession, models: Sequence[Model]) -> JsonObject:
    from baton.sessions.models import thinking_levels_for

    levels: list[JsonValue] = [{"value": level, "name": level} for level in thinking_levels_for(session.model)]
    return {"id": THINKING_OPTION, "name": "Thinking", "type": "select", "category": "thought_level",
            "currentValue": session.thinking_level, "options": levels}


def _no_data(session: CodingSession, change: ThinkingChange) -> NoData:
    return NO_DATA


THINKING: Action[ThinkingLevel, ThinkingChange] = Action(
    "thinking", "/thinking [level]", "Set the thinking level (off, minimal, low, medium, high, xhigh)",
    parse=_level_from_text, run=set_thinking, report=thinking_report,
    rpc=RpcCommand("set_thinking_level", parse=_level_from_rpc, reply=_no_data),
    acp=AcpOption(THINKING_OPTION, parse=_level_from_option, describe=_thinking_option),
)

ACTIONS = (MODEL, THINKING)

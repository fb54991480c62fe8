"""Which models a session can use: lookup by ``provider/id``, the available list, cycling order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from baton.providers.models import THINKING_LEVELS, Model, ThinkingLevel, thinking_levels


def _catalog_models() -> list[Model]:
    from baton.providers.catalog import list_models

    try:
        return list_models()
    except Exception:  # a broken catalog must not stop a session from opening
        return []


def _has_key(provider: str) -> bool:
    from baton.providers.api_keys import has_api_key

    try:
        return has_api_key(provider)
    except Exception:
        return False


def find_model(ref: str, extra: Iterable[Model] = ()) -> Model | None:
    """The model named ``provider/id`` among ``extra`` models, the catalog and the demo model."""
    wanted = ref.strip().lower()
    if not wanted:
        return None
    for model in extra:
        if model.ref.lower() == wanted:
            return model
    from baton.providers.demo import DEMO_MODEL_REF, demo_model

    if wanted == DEMO_MODEL_REF:
        return demo_model()
    from baton.providers.catalog import ModelNotFoundError, get_model

    try:
        return get_model(ref)
    except ModelNotFoundError:
        return None
    except Exception:
        return None


def available_models(extra: Iterable[Model] = (), current: Model | None = None) -> list[Model]:
    """Models usable now: those whose provider has an API key or that run locally, plus
    ``extra`` models and the current one (each once, catalog order)."""
    out: list[Model] = []
    seen: set[str] = set()

    def add(model: Model) -> None:
        key = model.ref.lower()
        if key not in seen:
            seen.add(key)
            out.append(model)

    if current is not None:
        add(current)
    for model in extra:
        add(model)
    keyed: dict[str, bool] = {}
    for model in _catalog_models():
        if model.provider not in keyed:
            keyed[model.provider] = _has_key(model.provider)
        if keyed[model.provider] or model.is_local:
            add(model)
    return out


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """A known model and, when it cannot be used yet, the environment variable to set."""

    model: Model
    missing_key: str | None = None


def model_choices(extra: Iterable[Model] = (), current: Model | None = None) -> list[ModelChoice]:
    """Every known model: the usable ones first (as :func:`available_models` orders them), then
    the catalog's models whose provider has no key, each naming the variable to set."""
    usable = available_models(extra, current)
    seen = {m.ref.lower() for m in usable}
    out = [ModelChoice(m) for m in usable]
    from baton.providers.api_keys import env_var_for

    for model in _catalog_models():
        if model.ref.lower() in seen:
            continue
        seen.add(model.ref.lower())
        try:
            variable = env_var_for(model.provider)
        except Exception:
            variable = f"{model.provider.upper().replace('-', '_')}_API_KEY"
        out.append(ModelChoice(model, variable))
    return out


def first_model_with_key() -> Model | None:
    """The first catalog model whose provider has a key (or that runs locally)."""
    for model in _catalog_models():
        if _has_key(model.provider) or model.is_local:
            return model
    return None


def thinking_levels_for(model: Model) -> list[ThinkingLevel]:
    """The thinking levels ``model`` accepts, in cycling order (:func:`providers.models.thinking_levels`)."""
    return thinking_levels(model)


def parse_thinking_level(value: object) -> ThinkingLevel | None:
    """A valid thinking level from a stored string, else ``None``."""
    return value if isinstance(value, str) and value in THINKING_LEVELS else None


def next_in_cycle(models: Sequence[Model], current: Model, direction: int) -> Model | None:
    """The model after (``direction`` > 0) or before ``current`` in ``models``."""
    if not models:
        return None
    refs = [m.ref.lower() for m in models]
    try:
        index = refs.index(current.ref.lower())
    except ValueError:
        return models[0] if direction >= 0 else models[-1]
    candidate = models[(index + (1 if direction >= 0 else -1)) % len(models)]
    return None if candidate.ref.lower() == current.ref.lower() else candidate

"""The model catalog: built-in models (kept as data in ``catalog_data.json``, rebuilt by
``python -m baton.providers.catalog_build``), the overlay ``baton --update-models`` downloads
(``$BATON_HOME/catalog-overlay.json``), the user's ``$BATON_HOME/models.json`` (pi's format),
and model lookup for the CLI. Later sources win: bundled < overlay < models.json. Where a
provider's key comes from is :mod:`providers.api_keys`' business.

A ``provider/id`` the catalog does not list, under a provider it knows, is not an error: the
model gets the provider's protocol and the window, thinking and image support of its nearest
sibling (prices unknown), and :attr:`Model.inferred_from` says which (:func:`inference_notice`).
Claude Code's aliases ``opus``, ``sonnet`` and ``haiku`` name Anthropic's newest of each family.

``models.json`` overrides or adds: a provider entry with ``models`` adds them (replacing a
built-in model with the same provider and id); an entry with only ``baseUrl`` / ``headers`` /
``apiKey`` re-targets a built-in provider; ``modelOverrides`` patches single built-in models.
Problems in the file are reported by :func:`models_json_errors` and never raise.

Everything loads lazily on first use and is cached; the cache is refreshed when ``models.json``
changes (or ``BATON_HOME`` moves), and :func:`reload` forces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.catalog_data import BuiltinProvider, builtin_model_definitions, builtin_providers
from baton.providers.catalog_infer import ALIASES, alias_target, infer_model
from baton.providers.catalog_overlay import load_overlay, overlay_path
from baton.providers.config_values import clear_command_cache, command_errors, resolve_config_value, resolve_headers
from baton.providers.errors import ConfigurationError
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.models import Model
from baton.providers.models_json import (
    FileState,
    ModelsJson,
    ProviderConfig,
    file_state,
    forget_models_json,
    read_models_json,
)
from baton.providers.paths import models_json_path

_DATED = re.compile(r"-\d{8}$")


class ModelNotFoundError(ConfigurationError, LookupError):
    """No model matches a reference; ``suggestions`` holds up to five close ``provider/id``s."""

    def __init__(self, ref: str, message: str, suggestions: list[str]) -> None:
        super().__init__(message)
        self.ref = ref
        self.suggestions = suggestions


# ---------------------------------------------------------------------------------------------
# Loading


@dataclass
class _Catalog:
    source: ModelsJson | None
    """The models.json read this catalog was built from."""
    overlay_key: FileState
    models: list[Model]
    errors: list[str]
    provider_order: dict[str, int] = field(default_factory=dict)


_catalog: _Catalog | None = None


def _load() -> _Catalog:
    global _catalog
    path = models_json_path()
    overlay = overlay_path()
    overlay_key = file_state(overlay)
    source: ModelsJson | None = None
    try:
        source = read_models_json(path)
        if _catalog is not None and _catalog.source is source and _catalog.overlay_key == overlay_key:
            return _catalog
        _catalog = _build(source, path, overlay, overlay_key)
    except Exception as exc:  # a bug here must not take the CLI down: keep the built-ins
        _catalog = _Catalog(source, overlay_key, _builtin_models({}, {}), [f"{path}: could not be applied: {exc}"])
    return _catalog


def _build(source: ModelsJson, path: Path, overlay_file: Path, overlay_key: FileState) -> _Catalog:
    configs, errors = source.configs, source.errors
    builtin = builtin_providers()
    overlay, overlay_errors = load_overlay(overlay_file, set(builtin))
    errors = [*overlay_errors, *errors]
    models = _builtin_models(configs, overlay)
    index = {(m.provider, m.id): i for i, m in enumerate(models)}
    for config in configs.values():
        base = builtin.get(config.name)
        for definition in config.models:
            model = _custom_model(config, definition, base, path, errors)
            if model is None:
                continue
            slot = index.get((model.provider, model.id))
            if slot is None:
                index[(model.provider, model.id)] = len(models)
                models.append(model)
            else:
                models[slot] = model
        if config.name not in builtin and not config.models:
            errors.append(
                f"{path}: providers.{config.name}: not a built-in provider and defines no \"models\" "
                f"(built-in providers: {', '.join(builtin)})"
            )
    order: dict[str, int] = {}
    for model in models:
        order.setdefault(model.provider, len(order))
    return _Catalog(source, overlay_key, models, errors, order)


def _with_overlay(bundled: list[JsonObject], downloaded: list[JsonObject] | None) -> list[JsonObject]:
    """The bundled models with the downloaded ones over them (same id replaced, new ones added),
    newest first (the sort is stable: equal dates keep the catalog's order)."""
    if not downloaded:
        return bundled
    fresh = {str(m["id"]): m for m in downloaded}
    merged = [fresh.pop(str(m["id"]), m) for m in bundled] + list(fresh.values())
    return sorted(merged, key=lambda m: str(m.get("releaseDate") or ""), reverse=True)


def _object(value: JsonValue) -> JsonObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _builtin_models(configs: dict[str, ProviderConfig], overlay: dict[str, list[JsonObject]]) -> list[Model]:
    models: list[Model] = []
    definitions = builtin_model_definitions()
    for provider, entry in builtin_providers().items():
        config = configs.get(provider)
        base_url = config.base_url if config and config.base_url else entry["baseUrl"]
        headers = _provider_headers(config) if config else None
        overrides = config.model_overrides if config else {}
        for definition in _with_overlay(definitions.get(provider, []), overlay.get(provider)):
            data: JsonObject = {**definition, "api": entry["api"], "provider": provider, "baseUrl": base_url}
            override = overrides.get(str(definition["id"]))
            if override:
                data = _apply_override(data, override)
            if headers:
                data["headers"] = {**_object(data.get("headers")), **headers}
            models.append(Model.model_validate(data))
    return models


def _provider_headers(config: ProviderConfig) -> dict[str, str] | None:
    headers = dict(resolve_headers(config.headers) or {})
    if config.auth_header and config.api_key:
        key = resolve_config_value(config.api_key)
        if key:
            headers["Authorization"] = f"Bearer {key}"
    return headers or None


def _string_map(value: JsonValue) -> dict[str, str] | None:
    """A header object (checked when models.json was read) with its type said."""
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else None


def _apply_override(data: JsonObject, override: JsonObject) -> JsonObject:
    merged = {**data}
    for key, value in override.items():
        if key in ("cost", "compat"):
            merged[key] = {**_object(data.get(key)), **_object(value)}
        elif key == "headers":
            merged["headers"] = {**_object(data.get("headers")), **(resolve_headers(_string_map(value)) or {})}
        else:
            merged[key] = value
    return merged


def _custom_model(
    config: ProviderConfig, definition: JsonObject, base: BuiltinProvider | None, path: Path, errors: list[str]
) -> Model | None:
    where = f"{path}: providers.{config.name}.models ({definition['id']})"
    api = definition.get("api") or config.api or (base["api"] if base else None)
    base_url = config.base_url or (base["baseUrl"] if base else None)
    if not api:
        errors.append(f"{where}: no \"api\": set it on the provider or the model")
        return None
    if not base_url:
        errors.append(f"{where}: no \"baseUrl\": required for a provider that is not built in")
        return None
    data: JsonObject = {
        key: value for key, value in definition.items() if key not in ("headers", "compat", "api")
    }
    data.update(api=api, provider=config.name, baseUrl=base_url)
    headers: JsonObject = {
        **(_provider_headers(config) or {}), **(resolve_headers(_string_map(definition.get("headers"))) or {})
    }
    if headers:
        data["headers"] = headers
    compat = {**(config.compat or {}), **_object(definition.get("compat"))}
    if compat:
        data["compat"] = compat
    try:
        return Model.model_validate(data)
    except ValueError as exc:
        errors.append(f"{where}: {exc}")
        return None


# ---------------------------------------------------------------------------------------------
# Public API


def reload() -> None:
    """Forget everything loaded (built-in data stays): the next call re-reads models.json and
    re-runs ``!command`` API keys. Tests call it after changing ``BATON_HOME``."""
    global _catalog
    _catalog = None
    forget_models_json()
    clear_command_cache()


reload_catalog = reload


def list_models() -> list[Model]:
    """Every model: built-in (with models.json overrides applied) then custom ones."""
    return list(_load().models)


def models_json_errors() -> list[str]:
    """One message per problem in models.json (file and field named); empty when all is well."""
    catalog = _load()
    return [*catalog.errors, *command_errors]


def get_model(ref: str) -> Model:
    """The model for ``provider/id`` (exact, case-insensitive), a bare ``id`` offered by exactly
    one provider, or a Claude Code alias (``opus``, ``sonnet``, ``haiku``). An id the catalog
    does not know under a provider it knows is inferred (:attr:`Model.inferred_from` is set).
    Raises :class:`ModelNotFoundError` with up to five suggestions otherwise."""
    wanted = ref.strip()
    models = _load().models
    if not wanted:
        raise ModelNotFoundError(ref, "No model given (use provider/id; see baton --list-models)", [])
    lowered = wanted.lower()
    if lowered in ALIASES:
        target = alias_target(lowered, models)
        if target is not None:
            return target
    provider, sep, model_id = lowered.partition("/")
    if sep:
        for model in models:
            if model.provider.lower() == provider and model.id.lower() == model_id:
                return model
    same_id = [m for m in models if m.id.lower() == lowered]
    if len(same_id) == 1:
        return same_id[0]
    if same_id:
        refs = [m.ref for m in same_id][:5]
        raise ModelNotFoundError(
            ref, f"Model id '{wanted}' is offered by several providers; use one of: {', '.join(refs)}", refs
        )
    if sep:
        inferred = infer_model(wanted.partition("/")[0], wanted.partition("/")[2], models)
        if inferred is not None:
            return inferred
    suggestions = _suggestions(wanted, models)
    if suggestions:
        message = f"Unknown model '{wanted}'. Did you mean: {', '.join(suggestions)}?"
    else:
        message = f"Unknown model '{wanted}' (see baton --list-models)"
    raise ModelNotFoundError(ref, message, suggestions)


def inference_notice(model: Model) -> str | None:
    """One line for a model the catalog does not list (``None`` for a listed one)."""
    if model.inferred_from is None:
        return None
    source = f"the limits of {model.inferred_from}" if model.inferred_from else "generic limits"
    return (f"{model.ref} is not in the model catalog: using {model.api} with {source} "
            f"({_fmt_k(model.context_window)} context, thinking {'on' if model.reasoning else 'off'}, "
            f"images {'yes' if model.supports_images else 'no'}); prices unknown, cost shows $0 "
            f"(baton --update-models may know it)")


def _fmt_k(tokens: int) -> str:
    return f"{tokens // 1000}K" if tokens < 1_000_000 else f"{tokens / 1_000_000:g}M"


def _suggestions(ref: str, models: list[Model]) -> list[str]:
    from difflib import get_close_matches

    found = [m.ref for m in find_models(ref)[:5]]
    if found:
        return found
    refs = [m.ref for m in models]
    by_id = {m.id.lower(): m.ref for m in models}
    close = get_close_matches(ref.lower(), [r.lower() for r in refs], n=5, cutoff=0.6)
    lower_to_ref = {r.lower(): r for r in refs}
    out = [lower_to_ref[c] for c in close]
    for match in get_close_matches(ref.lower(), list(by_id), n=5, cutoff=0.6):
        if by_id[match] not in out:
            out.append(by_id[match])
    return out[:5]


def find_models(pattern: str) -> list[Model]:
    """Models matching ``pattern``, best first: exact id/ref, then prefix, substring (id, ref,
    name), all words present, and finally the pattern's letters in order (fuzzy). Among equals,
    aliases come before dated snapshots, then shorter ids, catalog provider order, newest id."""
    catalog = _load()
    models = catalog.models
    text = pattern.strip().lower()
    if not text:
        return list(models)
    words = text.split()
    scored: list[tuple[tuple[int, int, int, int, int], Model]] = []
    for model in sorted(models, key=lambda m: m.id, reverse=True):
        score = _match(model, text, words)
        if score is None:
            continue
        rank, gap = score
        dated = 1 if _DATED.search(model.id) else 0
        order = catalog.provider_order.get(model.provider, 1 << 20)
        scored.append(((rank, gap, dated, len(model.id), order), model))
    scored.sort(key=lambda pair: pair[0])
    return [model for _, model in scored]


def _match(model: Model, text: str, words: list[str]) -> tuple[int, int] | None:
    model_id = model.id.lower()
    ref = model.ref.lower()
    name = model.name.lower()
    if text in (model_id, ref):
        return (0, 0)
    if model_id.startswith(text) or ref.startswith(text):
        return (1, 0)
    if text in model_id or text in ref:
        return (2, 0)
    if text in name:
        return (3, 0)
    haystack = f"{ref} {name}"
    if len(words) > 1 and all(w in haystack for w in words):
        return (4, 0)
    gap = _subsequence_gap("".join(words), ref)
    if gap is not None:
        return (5, gap)
    return None


def _subsequence_gap(needle: str, haystack: str) -> int | None:
    """How many characters are skipped between the matched letters (``None``: no match)."""
    position = -1
    start = -1
    for char in needle:
        position = haystack.find(char, position + 1)
        if position < 0:
            return None
        if start < 0:
            start = position
    return position - start + 1 - len(needle)


def providers() -> list[str]:
    """Provider names in catalog order (built-in first, then those models.json adds)."""
    return list(_load().provider_order)


def is_builtin_provider(provider: str) -> bool:
    """True for the providers baton knows out of the box (Anthropic, OpenAI, Google...)."""
    return provider in builtin_providers()

"""The model catalog: built-in models (kept as data in ``catalog_data.json``, rebuilt by
``python -m baton.providers.catalog_build``), the overlay ``baton --update-models`` downloads
(``$BATON_HOME/catalog-overlay.json``), the user's ``$BATON_HOME/models.json`` (pi's format),
model lookup for the CLI, and API keys. Later sources win: bundled < overlay < models.json.

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

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.providers.catalog_infer import ALIASES, alias_target, infer_model
from baton.providers.catalog_overlay import load_overlay, overlay_path
from baton.providers.errors import ConfigurationError
from baton.providers.models import Model
from baton.providers.models_json import (
    ProviderConfig,
    clear_command_cache,
    command_errors,
    load_models_json,
    resolve_config_value,
    resolve_headers,
)
from baton.providers.paths import models_json_path

_DATA_FILE = Path(__file__).with_name("catalog_data.json")
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
    key: tuple[tuple[str, int, int], ...]
    models: list[Model]
    errors: list[str]
    api_keys: dict[str, str] = field(default_factory=dict)
    """Raw ``apiKey`` config values from models.json, by provider."""
    provider_order: dict[str, int] = field(default_factory=dict)
    variables: set[str] = field(default_factory=set)
    """Environment variables models.json names as an ``apiKey`` or header value."""
    _header_secrets: list[str] | None = field(default=None, init=False, repr=False)
    _key_variables: frozenset[str] | None = field(default=None, init=False, repr=False)

    def key_variables(self) -> frozenset[str]:
        """The built-in providers' key variables and the variables models.json names."""
        if self._key_variables is None:
            names = {var for entry in _builtin().values() for var in entry.get("envVars") or ()}
            self._key_variables = frozenset(names | self.variables)
        return self._key_variables

    def literal_keys(self) -> list[str]:
        """``apiKey`` values used as they are: neither ``!command`` nor a set variable's name
        (an unset variable's name is no secret either)."""
        return [raw for raw in self.api_keys.values()
                if not raw.startswith("!") and raw not in os.environ and not _UPPER_NAME.fullmatch(raw)]

    def header_secrets(self) -> list[str]:
        """The values of the models' credential headers (``Authorization``, ``x-api-key``...)."""
        if self._header_secrets is None:
            found: dict[str, None] = {}
            for model in self.models:
                for name, value in (model.headers or {}).items():
                    if _SECRET_HEADER.search(name):
                        found[_AUTH_SCHEME.sub("", value)] = None
            self._header_secrets = list(found)
        return self._header_secrets


_SECRET_HEADER = re.compile(r"auth|key|token|secret|password|cookie", re.IGNORECASE)
_AUTH_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token)\s+", re.IGNORECASE)

_builtin_data: dict[str, Any] | None = None
_catalog: _Catalog | None = None


def _builtin() -> dict[str, Any]:
    global _builtin_data
    if _builtin_data is None:
        _builtin_data = json.loads(_DATA_FILE.read_text(encoding="utf-8"))["providers"]
    return _builtin_data


def _file_key(path: Path) -> tuple[str, int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), stat.st_mtime_ns, stat.st_size)


def _load() -> _Catalog:
    global _catalog
    path = models_json_path()
    overlay = overlay_path()
    key = (_file_key(path), _file_key(overlay))
    if _catalog is not None and _catalog.key == key:
        return _catalog
    try:
        _catalog = _build(path, overlay, key)
    except Exception as exc:  # a bug here must not take the CLI down: keep the built-ins
        _catalog = _Catalog(key, _builtin_models({}, {}), [f"{path}: could not be applied: {exc}"])
    return _catalog


def _build(path: Path, overlay_file: Path, key: tuple[tuple[str, int, int], ...]) -> _Catalog:
    configs, errors = load_models_json(path)
    builtin = _builtin()
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
    api_keys = {name: c.api_key for name, c in configs.items() if c.api_key}
    return _Catalog(key, models, errors, api_keys, order, _named_variables(configs))


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UPPER_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def _named_variables(configs: dict[str, ProviderConfig]) -> set[str]:
    values = [c.api_key for c in configs.values() if c.api_key]
    for config in configs.values():
        values += (config.headers or {}).values()
    return {v for v in values if _VARIABLE_NAME.fullmatch(v)}


def _with_overlay(bundled: list[dict[str, Any]], downloaded: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The bundled models with the downloaded ones over them (same id replaced, new ones added),
    newest first (the sort is stable: equal dates keep the catalog's order)."""
    if not downloaded:
        return bundled
    fresh = {m["id"]: m for m in downloaded}
    merged = [fresh.pop(m["id"], m) for m in bundled] + list(fresh.values())
    return sorted(merged, key=lambda m: m.get("releaseDate") or "", reverse=True)


def _builtin_models(configs: dict[str, ProviderConfig], overlay: dict[str, list[dict[str, Any]]]) -> list[Model]:
    models: list[Model] = []
    for provider, entry in _builtin().items():
        config = configs.get(provider)
        base_url = config.base_url if config and config.base_url else entry["baseUrl"]
        headers = _provider_headers(config) if config else None
        overrides = config.model_overrides if config else {}
        for definition in _with_overlay(entry["models"], overlay.get(provider)):
            data = {**definition, "api": entry["api"], "provider": provider, "baseUrl": base_url}
            override = overrides.get(definition["id"])
            if override:
                data = _apply_override(data, override)
            if headers:
                data["headers"] = {**(data.get("headers") or {}), **headers}
            models.append(Model.model_validate(data))
    return models


def _provider_headers(config: ProviderConfig) -> dict[str, str] | None:
    headers = dict(resolve_headers(config.headers) or {})
    if config.auth_header and config.api_key:
        key = resolve_config_value(config.api_key)
        if key:
            headers["Authorization"] = f"Bearer {key}"
    return headers or None


def _apply_override(data: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = {**data}
    for key, value in override.items():
        if key == "cost":
            merged["cost"] = {**data.get("cost", {}), **value}
        elif key == "headers":
            merged["headers"] = {**(data.get("headers") or {}), **(resolve_headers(value) or {})}
        elif key == "compat":
            merged["compat"] = {**(data.get("compat") or {}), **value}
        else:
            merged[key] = value
    return merged


def _custom_model(
    config: ProviderConfig, definition: dict[str, Any], base: dict[str, Any] | None, path: Path, errors: list[str]
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
    data: dict[str, Any] = {
        key: value for key, value in definition.items() if key not in ("headers", "compat", "api")
    }
    data.update(api=api, provider=config.name, baseUrl=base_url)
    headers = {**(_provider_headers(config) or {}), **(resolve_headers(definition.get("headers")) or {})}
    if headers:
        data["headers"] = headers
    compat = {**(config.compat or {}), **(definition.get("compat") or {})}
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
    return provider in _builtin()


def env_vars_for(provider: str) -> list[str]:
    """The environment variables that may hold ``provider``'s API key, preferred first."""
    entry = _builtin().get(provider)
    if entry and entry.get("envVars"):
        return list(entry["envVars"])
    return [re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_") + "_API_KEY"]


def env_var_for(provider: str) -> str:
    """The environment variable to set for ``provider``'s API key (``OPENAI_API_KEY``...;
    ``<PROVIDER>_API_KEY`` for providers baton does not know)."""
    return env_vars_for(provider)[0]


def get_api_key(provider: str) -> str | None:
    """``provider``'s API key: models.json ``apiKey`` first (``!command``, env var name or
    literal), then the provider's environment variables. ``None`` when there is none."""
    raw = _load().api_keys.get(provider)
    if raw:
        value = resolve_config_value(raw, f"providers.{provider}.apiKey")
        if value:
            return value
    for var in env_vars_for(provider):
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def key_variables() -> set[str]:
    """Names of the environment variables that may hold credentials: every built-in provider's
    key variables and those models.json names (``apiKey`` / header values)."""
    return set(_load().key_variables())


def configured_key_values() -> list[str]:
    """The key values models.json configures, without running any command (for redaction):
    literal ``apiKey`` values, the output of every ``!command`` run so far and the values of
    credential headers. Environment variables are :func:`key_variables`' business."""
    return secret_config()[1]


def secret_config() -> tuple[frozenset[str], list[str]]:
    """:func:`key_variables` and :func:`configured_key_values` at once (one look at the file:
    redaction asks on every tool result)."""
    from baton.providers.models_json import cached_command_values

    catalog = _load()
    values = [*catalog.literal_keys(), *cached_command_values(), *catalog.header_secrets()]
    return catalog.key_variables(), [v.strip() for v in values if v and v.strip()]


def has_api_key(provider: str) -> bool:
    """True when :func:`get_api_key` finds a key for ``provider``."""
    return get_api_key(provider) is not None

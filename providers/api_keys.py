"""Where a provider's API key comes from: the one place that knows (pi's ``env-api-keys.ts``).

A request's key is, in order: the key the caller passed (``--api-key``, an embedder's
``StreamOptions.api_key``); ``models.json``'s ``apiKey`` for the provider (``!command``, a
variable's name or a literal, :mod:`providers.config_values`); the provider's environment
variables (``ANTHROPIC_API_KEY``...; ``<PROVIDER>_API_KEY`` for a provider baton does not know).
The transport asks :func:`get_api_key` when a request names no key, and :func:`missing_key_error`
before it would call a built-in provider's remote API without one; the session, the CLI and the
model pickers ask the same functions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from baton.providers.catalog_data import builtin_providers
from baton.providers.config_values import resolve_config_value
from baton.providers.errors import ProviderError
from baton.providers.models import Model
from baton.providers.models_json import read_models_json

_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})


def env_vars_for(provider: str) -> list[str]:
    """The environment variables that may hold ``provider``'s API key, preferred first."""
    entry = builtin_providers().get(provider)
    if entry and entry["envVars"]:
        return list(entry["envVars"])
    return [re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_") + "_API_KEY"]


def env_var_for(provider: str) -> str:
    """The environment variable to set for ``provider``'s API key (``OPENAI_API_KEY``...;
    ``<PROVIDER>_API_KEY`` for providers baton does not know)."""
    return env_vars_for(provider)[0]


def get_api_key(provider: str) -> str | None:
    """``provider``'s API key: models.json ``apiKey`` first (``!command``, env var name or
    literal), then the provider's environment variables. ``None`` when there is none."""
    raw = read_models_json().api_key(provider)
    if raw:
        value = resolve_config_value(raw, f"providers.{provider}.apiKey")
        if value:
            return value
    for var in env_vars_for(provider):
        value = os.environ.get(var, "").strip()
        if value:
            return value
    return None


def has_api_key(provider: str) -> bool:
    """True when :func:`get_api_key` finds a key for ``provider``."""
    return get_api_key(provider) is not None


def missing_key_error(model: Model, header_names: Iterable[str] = ()) -> ProviderError | None:
    """The error for a request to ``model`` without a key, when it needs one: a built-in
    provider's remote API, with no credential among ``header_names`` (the request's extra
    headers). Custom and local servers may need none: their answer decides."""
    headers = {name.lower() for name in (*(model.headers or {}), *header_names)}
    if model.provider not in builtin_providers() or model.is_local or headers & _AUTH_HEADERS:
        return None
    return ProviderError(
        f"No API key for {model.provider}: set {env_var_for(model.provider)} "
        "(or add an apiKey for it in models.json)"
    )

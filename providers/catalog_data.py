"""The bundled catalog, ``catalog_data.json``: the built-in providers and their models.

The file is generated (``python -m baton.providers.catalog_build``) and ships with baton, so it is
trusted data. :mod:`providers.catalog` builds the models from it; :mod:`providers.api_keys` and
:mod:`providers.redact` read which environment variables hold each provider's key.

The providers (names, API, URL, key variables) are read once and kept; the model definitions are
read again whenever they are asked for and never kept: the catalog turns them into ``Model``
objects and keeps those, and the raw definitions beside them would be a third of a megabyte held
for the whole session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict, cast

from baton.providers.json_types import JsonObject

DATA_FILE = Path(__file__).with_name("catalog_data.json")


class BuiltinProvider(TypedDict):
    """One provider of the bundled catalog (its models: :func:`builtin_model_definitions`)."""

    name: str
    api: str
    baseUrl: str
    envVars: list[str]


class BuiltinProviderEntry(BuiltinProvider):
    """A provider as the file holds it: with its model definitions."""

    models: list[JsonObject]
    """Model definitions in pi's camelCase shape (without ``api``, ``provider`` and ``baseUrl``)."""


_providers: dict[str, BuiltinProvider] | None = None
_key_variables: frozenset[str] | None = None


def _read() -> dict[str, JsonObject]:
    return cast(dict[str, JsonObject], json.loads(DATA_FILE.read_text(encoding="utf-8"))["providers"])


def _keep_providers(entries: dict[str, JsonObject]) -> dict[str, BuiltinProvider]:
    global _providers
    if _providers is None:
        _providers = {
            name: cast(BuiltinProvider, {key: value for key, value in entry.items() if key != "models"})
            for name, entry in entries.items()
        }
    return _providers


def builtin_providers() -> dict[str, BuiltinProvider]:
    """The built-in providers by name, in the catalog's order (read on first use)."""
    return _providers if _providers is not None else _keep_providers(_read())


def builtin_model_definitions() -> dict[str, list[JsonObject]]:
    """Each built-in provider's model definitions, in pi's camelCase shape (without ``api``,
    ``provider`` and ``baseUrl``), freshly read: the caller's to keep or drop."""
    entries = _read()
    _keep_providers(entries)
    return {name: cast(list[JsonObject], entry["models"]) for name, entry in entries.items()}


def builtin_key_variables() -> frozenset[str]:
    """Every environment variable a built-in provider's key may be read from."""
    global _key_variables
    if _key_variables is None:
        _key_variables = frozenset(var for entry in builtin_providers().values() for var in entry["envVars"])
    return _key_variables

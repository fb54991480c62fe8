"""The bundled catalog, ``catalog_data.json``: the built-in providers and their models, read once.

The file is generated (``python -m baton.providers.catalog_build``) and ships with baton, so it is
trusted data. :mod:`providers.catalog` builds the models from it; :mod:`providers.api_keys` and
:mod:`providers.redact` read which environment variables hold each provider's key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict, cast

from baton.providers.json_types import JsonObject

DATA_FILE = Path(__file__).with_name("catalog_data.json")


class BuiltinProvider(TypedDict):
    """One provider of the bundled catalog."""

    name: str
    api: str
    baseUrl: str
    envVars: list[str]
    models: list[JsonObject]
    """Model definitions in pi's camelCase shape (without ``api``, ``provider`` and ``baseUrl``)."""


_providers: dict[str, BuiltinProvider] | None = None
_key_variables: frozenset[str] | None = None


def builtin_providers() -> dict[str, BuiltinProvider]:
    """The built-in providers by name, in the catalog's order (read on first use)."""
    global _providers
    if _providers is None:
        _providers = cast(dict[str, BuiltinProvider], json.loads(DATA_FILE.read_text(encoding="utf-8"))["providers"])
    return _providers


def builtin_key_variables() -> frozenset[str]:
    """Every environment variable a built-in provider's key may be read from."""
    global _key_variables
    if _key_variables is None:
        _key_variables = frozenset(var for entry in builtin_providers().values() for var in entry["envVars"])
    return _key_variables

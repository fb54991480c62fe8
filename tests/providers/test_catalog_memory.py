"""The bundled catalog's raw model definitions are not kept beside the built ``Model`` objects."""

from __future__ import annotations

import gc
import json

from baton.providers import catalog
from baton.providers.catalog_data import DATA_FILE, builtin_model_definitions, builtin_providers


def test_built_catalog_keeps_no_raw_definitions(baton_home: object) -> None:
    catalog.reload()
    models = catalog.list_models()
    gc.collect()
    bundled = json.loads(DATA_FILE.read_text(encoding="utf-8"))["providers"]
    assert len([m for m in models if m.provider in bundled]) >= sum(len(e["models"]) for e in bundled.values())
    kept = builtin_providers()
    assert list(kept) == list(bundled)  # every provider, in the file's order
    assert all("models" not in entry for entry in kept.values())
    assert kept["anthropic"]["envVars"] == bundled["anthropic"]["envVars"]
    # Definitions are read afresh for whoever asks, so nothing module-level holds them.
    first, second = builtin_model_definitions(), builtin_model_definitions()
    assert first == {name: entry["models"] for name, entry in bundled.items()}
    assert first["anthropic"] is not second["anthropic"]

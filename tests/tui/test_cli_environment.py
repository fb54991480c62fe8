"""No test inherits the developer's provider keys: with every key variable the bundled catalog
names set in the environment, neither the ``baton`` subprocess the harness starts nor a test using
the ``baton_home`` fixture sees a key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.providers import api_keys, catalog
from baton.providers.catalog_build import DEFAULT_OUT
from tests.tui.cli_harness import run_baton


def catalog_key_variables() -> dict[str, list[str]]:
    """The key variables of each provider of the bundled catalog (read as data, as baton reads it)."""
    providers = json.loads(DEFAULT_OUT.read_text(encoding="utf-8"))["providers"]
    return {name: entry["envVars"] for name, entry in providers.items()}


@pytest.fixture
def leaked_keys(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every key variable set, as in a developer's shell (before ``baton_home`` runs)."""
    names = {var for variables in catalog_key_variables().values() for var in variables}
    assert {"ZAI_API_KEY", "ZHIPU_API_KEY", "MOONSHOT_API_KEY"} <= names
    for name in names:
        monkeypatch.setenv(name, "sk-leaked-from-the-developer")
    return names


def test_the_baton_subprocess_sees_no_key(leaked_keys: set[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = run_baton(home, tmp_path, "--list-models")
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    assert header.split()[-1] == "key"
    keyed = catalog_key_variables()
    listed = [row.split() for row in rows if row.split("/")[0] in keyed]  # not the demo: it needs no key
    assert {cells[0].split("/")[0] for cells in listed} == set(keyed)
    assert [cells[0] for cells in listed if cells[-1] != "-"] == []


def test_the_baton_home_fixture_unsets_every_key(leaked_keys: set[str], baton_home: Path) -> None:
    catalog.reload()
    try:
        assert [p for p in catalog.providers() if api_keys.get_api_key(p)] == []
    finally:
        catalog.reload()


def test_every_preferred_default_model_is_in_the_catalog() -> None:
    # a default the catalog does not know would start the user on an inferred stand-in
    from baton.providers.catalog import get_model
    from baton.tui.cli.session_setup import DEFAULT_MODELS

    for ref in DEFAULT_MODELS:
        model = get_model(ref)
        assert model.ref == ref and model.inferred_from is None, ref

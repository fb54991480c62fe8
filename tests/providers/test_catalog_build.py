"""The catalog rebuild (``python -m baton.providers.catalog_build``) run on synthetic files in its
sources' formats (``fixtures/catalog_source``), the conversion shared with ``--update-models``, and
the bundled file it wrote (compared with a rebuild from the real sources when
``BATON_CATALOG_SOURCE`` names them: they are not in the repository)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers import catalog_build
from baton.providers.catalog_overlay import model_problem
from baton.providers.models import Model
from baton.providers.models_dev import PROVIDERS, SourceError, convert, convert_model

FIXTURES = Path(__file__).parent / "fixtures" / "catalog_source"
CHECKOUT = FIXTURES / "models.dev"
API_JSON = FIXTURES / "models-dev-api.json"
PI = FIXTURES / "pi-models.generated.ts"
SOURCE_ENV = "BATON_CATALOG_SOURCE"
"""A models.dev checkout or saved api.json, as given to the script; never committed."""
PI_ENV = "BATON_CATALOG_PI"
"""pi's models.generated.ts, as given to ``--pi``; never committed."""


def rebuild(tmp_path: Path, *sources: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "catalog.json"
    proc = subprocess.run(
        [sys.executable, "-m", "baton.providers.catalog_build", *sources, "--out", str(out), "--verbose"],
        capture_output=True, text=True, timeout=60,
    )
    return proc, out


def models_of(document: dict[str, Any], provider: str) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in document["providers"][provider]["models"]}


def test_rebuild_from_the_saved_snapshot(tmp_path: Path) -> None:
    proc, out = rebuild(tmp_path, str(CHECKOUT), "--pi", str(PI))
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_text())
    assert list(document["providers"]) == ["anthropic", "openai", "openrouter", "deepseek", "mistral", "zai"]
    anthropic = document["providers"]["anthropic"]
    assert (anthropic["api"], anthropic["baseUrl"], anthropic["envVars"]) == (
        "anthropic-messages", "https://api.anthropic.com", ["ANTHROPIC_API_KEY"])
    # newest first; the model only pi lists (retired at models.dev) is left out
    assert [m["id"] for m in anthropic["models"]] == [
        "claude-fixture-opus-3", "claude-fixture-opus-2", "claude-fixture-opus-1"]
    opus3 = models_of(document, "anthropic")["claude-fixture-opus-3"]
    # base_model facts (release, knowledge, context) merged under the provider's own (prices, efforts,
    # its output limit)
    assert opus3["releaseDate"] == "2026-06-15" and opus3["knowledge"] == "2026-03"
    assert opus3["cost"] == {"input": 6.0, "output": 30.0, "cacheRead": 0.6, "cacheWrite": 7.5}
    assert (opus3["contextWindow"], opus3["maxTokens"], opus3["input"]) == (800_000, 64_000, ["text", "image"])
    assert opus3["compat"] == {"supportsTemperature": False, "supportsXhigh": True,
                               "reasoningEfforts": ["low", "medium", "high", "xhigh", "max"]}
    openai = models_of(document, "openai")
    assert set(openai) == {"gpt-fixture-9", "gpt-fixture-8", "gpt-fixture-7-mini"}  # no embedding model
    # models.dev wins over pi for facts: the input limit (300K), not pi's 500K window
    assert openai["gpt-fixture-8"]["contextWindow"] == 300_000
    assert "openai/gpt-fixture-8: contextWindow models.dev=300000 pi=500000" in proc.stderr
    assert openai["gpt-fixture-9"]["contextWindow"] == 900_000
    # a record cannot say where requests go, nor write escapes to the terminal
    assert document["providers"]["openai"]["baseUrl"] == "https://api.openai.com/v1"
    assert openai["gpt-fixture-7-mini"]["name"] == "GPT Fixture 7 mini]0;pwned"
    assert "evil.example" not in out.read_text()
    # pi wins for the request rules it records; models.dev's own statements win over pi's
    glm = models_of(document, "zai")["glm-fixture-2"]
    assert glm["compat"]["supportsDeveloperRole"] is False
    assert glm["compat"]["requiresReasoningContentOnAssistantMessages"] is True  # pi: false
    assert "anthropic: only pi lists (left out): claude-fixture-sonnet-1-latest" in proc.stderr
    assert set(models_of(document, "mistral")) == {"mistral-fixture-small-latest"}  # devstral is deprecated
    assert "left out: mistral/mistral-fixture-broken: limit.context: 0 is out of range" in proc.stderr
    openrouter = models_of(document, "openrouter")
    assert set(openrouter) == {"anthropic/claude-fixture-sonnet-2.5"}  # llama: not a listed lab
    sonnet = openrouter["anthropic/claude-fixture-sonnet-2.5"]
    # base_model_omit drops the lab's input limit; the router's max output is the model's, not pi's 4096
    assert (sonnet["contextWindow"], sonnet["maxTokens"], sonnet["knowledge"]) == (500_000, 100_000, "2025-07-31")
    assert "openrouter/anthropic/claude-fixture-sonnet-2.5: maxTokens models.dev=100000 pi=4096" in proc.stderr
    assert "anthropic: 3 models, newest: claude-fixture-opus-3 (2026-06-15)" in proc.stderr


def test_the_api_shape_gives_the_same_catalog(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    from_checkout, out_a = rebuild(tmp_path / "a", str(CHECKOUT))
    from_api, out_b = rebuild(tmp_path / "b", str(API_JSON))
    assert from_checkout.returncode == from_api.returncode == 0, from_api.stderr
    assert out_a.read_text() == out_b.read_text()


def test_the_output_loads_as_a_catalog(tmp_path: Path) -> None:
    proc, out = rebuild(tmp_path, str(CHECKOUT), "--pi", str(PI))
    assert proc.returncode == 0
    document = json.loads(out.read_text())
    for name, entry in document["providers"].items():
        for model in entry["models"]:
            assert Model.model_validate({**model, "api": entry["api"], "provider": name, "baseUrl": entry["baseUrl"]})
            if name != "zai":  # pi's compat flags (supportsDeveloperRole) are bundled-only
                assert model_problem(model) is None


@pytest.mark.parametrize("source", ["not-there", "README.md"])
def test_a_bad_source_is_one_line_and_writes_nothing(tmp_path: Path, source: str) -> None:
    proc, out = rebuild(tmp_path, str(FIXTURES / source))
    assert proc.returncode == 1
    assert proc.stderr.startswith("catalog_build: ") and proc.stderr.count("\n") == 1
    assert not out.exists()


def test_the_bundled_catalog_is_the_scripts_output() -> None:
    """Hand edits show: the file must read as ``dump`` writes it, and hold only what the
    conversion produces (every model valid as a downloaded overlay entry too)."""
    text = catalog_build.DEFAULT_OUT.read_text(encoding="utf-8")
    document = json.loads(text)
    assert catalog_build.dump(document) == text
    assert list(document["providers"]) == [spec.name for spec in PROVIDERS]
    for name, entry in document["providers"].items():
        spec = next(s for s in PROVIDERS if s.name == name)
        assert (entry["api"], entry["baseUrl"], entry["envVars"]) == (spec.api, spec.base_url, list(spec.env_vars))
        dates = [m["releaseDate"] for m in entry["models"]]
        assert dates == sorted(dates, reverse=True), f"{name}: not newest first"
        for model in entry["models"]:
            problem = model_problem({**model, "compat": {k: v for k, v in model.get("compat", {}).items()
                                                         if k != "supportsDeveloperRole"}})
            assert problem is None, f"{name}/{model['id']}: {problem}"


def test_the_bundled_catalog_rebuilds_from_its_sources(tmp_path: Path) -> None:
    """Byte for byte what the script writes from the data it was built from. That data is
    fetched, never committed: point ``BATON_CATALOG_SOURCE`` at the models.dev checkout (or saved
    api.json) and ``BATON_CATALOG_PI`` at pi's models.generated.ts to run this check."""
    source = os.environ.get(SOURCE_ENV, "").strip()
    if not source:
        pytest.skip(f"{SOURCE_ENV} is not set: it names the models.dev checkout or api.json the bundled "
                    f"catalog was built from (and {PI_ENV} pi's models.generated.ts); neither is in the repository")
    args = [source]
    pi = os.environ.get(PI_ENV, "").strip()
    if pi:
        args += ["--pi", pi]
    proc, out = rebuild(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == catalog_build.DEFAULT_OUT.read_text(encoding="utf-8"), (
        f"the bundled catalog is not what the script writes from {source}: rebuild it and commit the result")


def test_pi_values_never_override_facts() -> None:
    api = json.loads(API_JSON.read_text())
    pi = {"anthropic": {"claude-fixture-opus-3": {"contextWindow": 1, "maxTokens": 1, "reasoning": False,
                                                  "cost": {"input": 99, "output": 99},
                                                  "compat": {"allowEmptySignature": True}}}}
    document, report = catalog_build.build(api, pi)
    opus3 = models_of(document, "anthropic")["claude-fixture-opus-3"]
    assert (opus3["contextWindow"], opus3["maxTokens"], opus3["reasoning"], opus3["cost"]["input"]) == (
        800_000, 64_000, True, 6.0)
    assert opus3["compat"]["allowEmptySignature"] is True
    assert "anthropic/claude-fixture-opus-3: cost.input models.dev=6 pi=99" in report


# ---------------------------------------------------------------------------------------------
# The conversion: hostile or broken records


ANTHROPIC = PROVIDERS[0]
GOOD = {
    "id": "claude-x", "name": "Claude X", "tool_call": True, "reasoning": True, "release_date": "2026-01-02",
    "modalities": {"input": ["text", "image"], "output": ["text"]}, "limit": {"context": 1000, "output": 100},
    "cost": {"input": 1, "output": 2},
}


@pytest.mark.parametrize(("change", "problem"), [
    ({"id": "claude\x1b[31m"}, "unusable model id"),
    ({"id": "../" * 50}, "unusable model id"),
    ({"limit": {"context": float("nan"), "output": 1}}, "limit.context"),
    ({"limit": {"context": 10**12, "output": 1}}, "out of range"),
    ({"cost": {"input": -1, "output": 1}}, "cost.input"),
    ({"cost": {"input": "free", "output": 1}}, "cost.input"),
    ({"release_date": "yesterday"}, "release_date"),
    ({"modalities": "text"}, "modalities"),
])
def test_a_bad_record_is_skipped_with_a_note(change: dict[str, Any], problem: str) -> None:
    with pytest.raises(SourceError, match=problem):
        convert_model(ANTHROPIC, "k", {**GOOD, **change})
    providers, notes = convert({"anthropic": {"models": {"k": {**GOOD, **change}, "ok": {**GOOD, "id": "ok"}}}})
    assert [m["id"] for m in providers["anthropic"]] == ["ok"] and len(notes) == 1


def test_a_record_cannot_say_where_requests_go() -> None:
    hostile = {**GOOD, "provider": {"api": "https://evil.example", "npm": "x"}, "api": "https://evil.example",
               "baseUrl": "https://evil.example", "headers": {"x": "y"}, "name": "Claude\x07 X\x1b[2J"}
    entry = convert_model(ANTHROPIC, "claude-x", hostile)
    assert entry is not None
    assert set(entry) <= {"id", "name", "reasoning", "input", "cost", "contextWindow", "maxTokens", "releaseDate",
                          "knowledge", "compat"}
    assert entry["name"] == "Claude X[2J"


@pytest.mark.parametrize("document", [[], {"anthropic": {"models": []}}, {"nobody": {}}, "text"])
def test_not_models_dev_data_is_refused(document: Any) -> None:
    with pytest.raises(SourceError):
        convert(document)


_json = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "name", "tool_call", "reasoning", "modalities", "limit", "cost",
                                        "release_date", "knowledge", "temperature", "reasoning_options", "status"]),
                       _json))
def test_whatever_the_conversion_keeps_is_a_valid_overlay_entry(changes: dict[str, Any]) -> None:
    try:
        entry = convert_model(ANTHROPIC, "k", {**GOOD, **changes})
    except SourceError:
        return
    if entry is not None:
        assert model_problem(entry) is None

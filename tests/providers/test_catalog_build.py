"""The catalog rebuild (``python -m baton.providers.catalog_build``) run on a saved snapshot of
its sources, the conversion shared with ``--update-models``, and the bundled file it wrote."""

from __future__ import annotations

import json
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
    assert [m["id"] for m in anthropic["models"]] == ["claude-opus-5", "claude-opus-4-8", "claude-opus-4-5"]
    opus5 = models_of(document, "anthropic")["claude-opus-5"]
    # base_model facts (release, knowledge) merged under the provider's own (prices, efforts)
    assert opus5["releaseDate"] == "2026-07-24" and opus5["knowledge"] == "2026-05"
    assert opus5["cost"] == {"input": 5.0, "output": 25.0, "cacheRead": 0.5, "cacheWrite": 6.25}
    assert (opus5["contextWindow"], opus5["maxTokens"], opus5["input"]) == (1_000_000, 128_000, ["text", "image"])
    assert opus5["compat"] == {"supportsTemperature": False, "supportsXhigh": True,
                               "reasoningEfforts": ["low", "medium", "high", "xhigh", "max"]}
    openai = models_of(document, "openai")
    assert set(openai) == {"gpt-5.6-sol", "gpt-5"}  # no embedding model
    # models.dev wins over pi for facts: the input limit (272K), not pi's 400K window
    assert openai["gpt-5"]["contextWindow"] == 272_000
    assert "openai/gpt-5: contextWindow models.dev=272000 pi=400000" in proc.stderr
    assert openai["gpt-5.6-sol"]["contextWindow"] == 922_000
    # pi wins for the request rules it records
    assert models_of(document, "zai")["glm-5"]["compat"]["supportsDeveloperRole"] is False
    assert models_of(document, "zai")["glm-5"]["compat"]["requiresReasoningContentOnAssistantMessages"] is True
    assert "claude-3-7-sonnet-latest" in proc.stderr  # reported as left out
    assert set(models_of(document, "mistral")) == {"mistral-small-latest"}  # devstral is deprecated
    assert set(models_of(document, "openrouter")) == {"anthropic/claude-sonnet-4.6"}  # llama: not a listed lab
    assert "anthropic: 3 models, newest: claude-opus-5 (2026-07-24)" in proc.stderr


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


def test_pi_values_never_override_facts() -> None:
    api = json.loads(API_JSON.read_text())
    pi = {"anthropic": {"claude-opus-5": {"contextWindow": 1, "maxTokens": 1, "reasoning": False,
                                          "cost": {"input": 99, "output": 99},
                                          "compat": {"allowEmptySignature": True}}}}
    document, report = catalog_build.build(api, pi)
    opus5 = models_of(document, "anthropic")["claude-opus-5"]
    assert (opus5["contextWindow"], opus5["maxTokens"], opus5["reasoning"], opus5["cost"]["input"]) == (
        1_000_000, 128_000, True, 5.0)
    assert opus5["compat"]["allowEmptySignature"] is True
    assert "anthropic/claude-opus-5: cost.input models.dev=5 pi=99" in report


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

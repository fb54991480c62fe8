"""The model catalog: built-in data, models.json (pi's format), lookup, fuzzy search, API keys."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import baton.providers as providers
from baton.providers import catalog
from baton.providers.api_keys import env_var_for, get_api_key, has_api_key
from baton.providers.catalog import (
    ModelNotFoundError,
    find_models,
    get_model,
    list_models,
    models_json_errors,
)
from baton.providers.models import Model
from baton.providers.models_json import SUPPORTED_APIS
from baton.providers.paths import baton_home, models_json_path, sessions_dir


@pytest.fixture
def home(baton_home: Path) -> Iterator[Path]:
    catalog.reload()
    yield baton_home
    catalog.reload()


def write_models(home: Path, document: Any) -> Path:
    path = home / "models.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    catalog.reload()
    return path


# ---------------------------------------------------------------------------------------------
# paths


def test_baton_home_follows_env_and_defaults_to_dot_baton(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BATON_HOME", str(tmp_path / "h"))
    assert baton_home() == tmp_path / "h"
    assert models_json_path() == tmp_path / "h" / "models.json"
    assert sessions_dir() == tmp_path / "h" / "sessions"
    monkeypatch.setenv("BATON_HOME", "~/elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert baton_home() == tmp_path / "elsewhere"
    monkeypatch.delenv("BATON_HOME")
    assert baton_home() == tmp_path / ".baton"


# ---------------------------------------------------------------------------------------------
# built-in catalog


REQUIRED = [
    "anthropic/claude-opus-5", "anthropic/claude-opus-4-8", "anthropic/claude-sonnet-5", "anthropic/claude-sonnet-4-6",
    "anthropic/claude-opus-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5",
    "anthropic/claude-sonnet-4-0", "openai/gpt-6-astra", "openai/gpt-5.6-sol", "openai/gpt-5.5", "openai/gpt-5.3-codex",
    "openai/gpt-5.1", "openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-4.1", "openai/gpt-4o", "openai/o4-mini",
    "google/gemini-3.8-flash", "google/gemini-3.1-pro-preview", "google/gemini-2.5-pro", "google/gemini-2.5-flash",
    "openrouter/anthropic/claude-sonnet-4.5", "groq/openai/gpt-oss-120b", "xai/grok-4.7",
    "deepseek/deepseek-chat", "mistral/mistral-large-latest", "cerebras/gpt-oss-120b", "zai/glm-5.2",
    "moonshotai/kimi-k3",
]


def _defaults() -> list[str]:
    """The models the CLI falls back to without a configured one: each must be listed (a
    retired one would start every session with a guess and its warning)."""
    from baton.tui.cli.session_setup import DEFAULT_MODELS

    return list(DEFAULT_MODELS)


def test_builtin_catalog_has_the_current_models_with_sane_fields(home: Path) -> None:
    models = list_models()
    refs = [m.ref for m in models]
    assert len(refs) == len(set(refs)), "duplicate provider/id"
    for ref in [*REQUIRED, *_defaults()]:
        assert ref in refs
    for model in models:
        assert model.api in SUPPORTED_APIS
        assert model.base_url.startswith("https://")
        assert model.context_window > 0 and 0 < model.max_tokens <= model.context_window
        assert min(model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write) >= 0
        assert model.name and "text" in model.input
    assert {m.api for m in models if m.provider == "openai"} == {"openai-responses"}
    assert {m.api for m in models if m.provider == "anthropic"} == {"anthropic-messages"}
    assert {m.api for m in models if m.provider == "google"} == {"google-generative-ai"}
    assert models_json_errors() == []


def test_builtin_values_match_models_dev(home: Path) -> None:
    opus = get_model("anthropic/claude-opus-4-5")
    assert (opus.cost.input, opus.cost.output, opus.cost.cache_read, opus.cost.cache_write) == (5, 25, 0.5, 6.25)
    assert (opus.context_window, opus.max_tokens, opus.reasoning) == (200_000, 64_000, True)
    assert opus.input == ["text", "image"] and opus.base_url == "https://api.anthropic.com"
    gpt5 = get_model("openai/gpt-5")
    assert (gpt5.cost.input, gpt5.cost.output, gpt5.cost.cache_read) == (1.25, 10, 0.125)
    assert (gpt5.context_window, gpt5.max_tokens) == (272_000, 128_000)  # the input limit of a 400K window
    assert gpt5.base_url == "https://api.openai.com/v1"
    assert get_model("openai/gpt-4.1").reasoning is False
    assert get_model("openai/o3-mini").input == ["text"]
    gemini = get_model("google/gemini-2.5-pro")
    assert (gemini.cost.input, gemini.cost.output, gemini.context_window) == (1.25, 10, 1_048_576)
    assert get_model("openai/gpt-5.1-codex-max").compat == {
        "supportsTemperature": False, "reasoningEfforts": ["low", "medium", "high", "xhigh"], "supportsXhigh": True}
    opus5 = get_model("anthropic/claude-opus-5")
    assert (opus5.release_date, opus5.knowledge, opus5.context_window, opus5.max_tokens) == (
        "2026-07-24", "2026-05", 1_000_000, 128_000)


# ---------------------------------------------------------------------------------------------
# get_model


def test_get_model_exact_ref_bare_id_and_case(home: Path) -> None:
    assert get_model("openai/gpt-5").ref == "openai/gpt-5"
    assert get_model("OpenAI/GPT-5").ref == "openai/gpt-5"
    assert get_model("gpt-5.1").ref == "openai/gpt-5.1"
    assert get_model("  claude-haiku-4-5 ").ref == "anthropic/claude-haiku-4-5"
    # ids with slashes: the provider is what precedes the first slash
    assert get_model("openrouter/anthropic/claude-sonnet-4.5").provider == "openrouter"
    assert get_model("anthropic/claude-sonnet-4.5").ref == "openrouter/anthropic/claude-sonnet-4.5"
    assert get_model("groq/openai/gpt-oss-120b").provider == "groq"


def test_get_model_unknown_raises_with_at_most_five_suggestions(home: Path) -> None:
    with pytest.raises(ModelNotFoundError) as info:
        get_model("gemini pro")
    err = info.value
    assert 1 <= len(err.suggestions) <= 5
    assert err.suggestions[0] == "google/gemini-2.5-pro"
    assert all(s in str(err) for s in err.suggestions)
    assert isinstance(err, LookupError)
    with pytest.raises(ModelNotFoundError) as typo:
        get_model("claude-sonet-4-5")
    assert "anthropic/claude-sonnet-4-5" in typo.value.suggestions
    with pytest.raises(ModelNotFoundError) as nothing:
        get_model("zzzz-qqqq")
    assert nothing.value.suggestions == [] and "--list-models" in str(nothing.value)
    with pytest.raises(ModelNotFoundError):
        get_model("   ")


def test_get_model_bare_id_offered_twice_is_ambiguous(home: Path) -> None:
    write_models(home, {"providers": {"proxy": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-responses", "apiKey": "k",
        "models": [{"id": "gpt-5"}]}}})
    with pytest.raises(ModelNotFoundError) as info:
        get_model("gpt-5")
    assert sorted(info.value.suggestions) == ["openai/gpt-5", "proxy/gpt-5"]
    assert "several providers" in str(info.value)
    assert get_model("proxy/gpt-5").base_url == "http://127.0.0.1:9/v1"


# ---------------------------------------------------------------------------------------------
# find_models


def test_find_models_ranks_exact_prefix_substring_words_fuzzy(home: Path) -> None:
    assert find_models("gpt-5")[0].ref == "openai/gpt-5"
    assert [m.ref for m in find_models("")] == [m.ref for m in list_models()]
    sonnet = [m.ref for m in find_models("sonnet")]
    # aliases before dated snapshots; the native provider before resellers
    assert sonnet[0] == "anthropic/claude-sonnet-5"
    assert sonnet.index("anthropic/claude-sonnet-4-5") < sonnet.index("anthropic/claude-sonnet-4-5-20250929")
    assert all("sonnet" in r for r in sonnet)
    gemini_pro = [m.ref for m in find_models("gemini pro")]
    assert gemini_pro[0] == "google/gemini-2.5-pro" and "google/gemini-3.1-pro-preview" in gemini_pro[:4]
    fuzzy = find_models("gpt5mini")
    assert fuzzy and fuzzy[0].ref == "openai/gpt-5-mini"
    assert find_models("no-such-model-anywhere") == []
    assert {m.provider for m in find_models("mistral")} >= {"mistral"}


def test_find_models_prefix_beats_substring(home: Path) -> None:
    refs = [m.ref for m in find_models("o3")]
    assert refs[0] == "openai/o3"
    assert refs.index("openai/o3-mini") < len(refs)


# ---------------------------------------------------------------------------------------------
# API keys


def test_env_var_names(home: Path) -> None:
    expected = {
        "anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "google": "GEMINI_API_KEY",
        "openrouter": "OPENROUTER_API_KEY", "groq": "GROQ_API_KEY", "xai": "XAI_API_KEY",
        "deepseek": "DEEPSEEK_API_KEY", "mistral": "MISTRAL_API_KEY", "cerebras": "CEREBRAS_API_KEY",
    }
    for provider, var in expected.items():
        assert env_var_for(provider) == var
    assert env_var_for("my-proxy.local") == "MY_PROXY_LOCAL_API_KEY"


def test_api_keys_from_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_api_key("openai") is None and not has_api_key("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert get_api_key("openai") == "sk-env" and has_api_key("openai")
    monkeypatch.setenv("GOOGLE_API_KEY", "g-fallback")
    assert get_api_key("google") == "g-fallback"
    monkeypatch.setenv("GEMINI_API_KEY", "g-primary")
    assert get_api_key("google") == "g-primary"
    monkeypatch.setenv("MY_PROXY_API_KEY", "p")
    assert get_api_key("my-proxy") == "p"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    assert get_api_key("anthropic") is None


def test_models_json_api_key_forms_and_precedence(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = home / "count"
    command = f"{sys.executable} -c \"import pathlib; p=pathlib.Path(r'{counter}'); " \
              f"p.write_text(p.read_text() + 'x' if p.exists() else 'x'); print('sk-from-command')\""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("MY_SECRET", "sk-named-env")
    write_models(home, {"providers": {
        "openai": {"apiKey": "sk-literal"},
        "anthropic": {"apiKey": "MY_SECRET"},
        "google": {"apiKey": f"!{command}"},
        "groq": {"apiKey": f"!!{command}"},
        "xai": {"apiKey": "!exit 3"},
    }})
    assert get_api_key("openai") == "sk-literal"  # models.json before the environment
    assert get_api_key("anthropic") == "sk-named-env"  # an env var name resolves to its value
    assert get_api_key("google") == "sk-from-command"
    assert get_api_key("google") == "sk-from-command"
    assert counter.read_text() == "x"  # "!" runs once per process
    assert get_api_key("groq") == "sk-from-command"
    assert get_api_key("groq") == "sk-from-command"
    assert counter.read_text() == "xxx"  # "!!" runs every time
    assert get_api_key("xai") is None and not has_api_key("xai")
    assert any("exit 3" in e and "exited with 3" in e for e in models_json_errors())
    monkeypatch.delenv("MY_SECRET")
    catalog.reload()
    assert get_api_key("anthropic") == "MY_SECRET"  # pi: an unset name is taken literally


# ---------------------------------------------------------------------------------------------
# models.json


def test_custom_provider_gets_pi_defaults(home: Path) -> None:
    write_models(home, {"providers": {"ollama": {
        "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
        "models": [{"id": "qwen2.5-coder:7b"},
                   {"id": "llava", "name": "LLaVA", "input": ["text", "image"], "reasoning": True,
                    "contextWindow": 32768, "maxTokens": 4096, "cost": {"input": 0.5}}]}}})
    qwen = get_model("ollama/qwen2.5-coder:7b")
    assert qwen.name == "qwen2.5-coder:7b" and qwen.api == "openai-completions"
    assert qwen.base_url == "http://localhost:11434/v1"
    assert (qwen.reasoning, qwen.input, qwen.context_window, qwen.max_tokens) == (False, ["text"], 128_000, 16_384)
    assert qwen.cost.model_dump() == {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    llava = get_model("llava")
    assert (llava.name, llava.reasoning, llava.input) == ("LLaVA", True, ["text", "image"])
    assert (llava.context_window, llava.max_tokens, llava.cost.input, llava.cost.output) == (32768, 4096, 0.5, 0)
    assert [m.ref for m in list_models()][-2:] == ["ollama/qwen2.5-coder:7b", "ollama/llava"]
    assert get_api_key("ollama") == "ollama"
    assert models_json_errors() == []


def test_custom_model_replaces_builtin_and_inherits_provider(home: Path) -> None:
    builtin_refs = [m.ref for m in list_models()]
    write_models(home, {"providers": {"openai": {"models": [
        {"id": "gpt-5", "name": "GPT-5 (mine)", "contextWindow": 1000, "maxTokens": 100},
        {"id": "gpt-9-preview", "reasoning": True}]}}})
    gpt5 = get_model("openai/gpt-5")
    assert (gpt5.name, gpt5.context_window, gpt5.api) == ("GPT-5 (mine)", 1000, "openai-responses")
    assert gpt5.base_url == "https://api.openai.com/v1"
    refs = [m.ref for m in list_models()]
    assert refs.count("openai/gpt-5") == 1
    assert refs.index("openai/gpt-5") == builtin_refs.index("openai/gpt-5")  # replaced in place
    assert get_model("openai/gpt-9-preview").reasoning is True
    assert models_json_errors() == []


def test_provider_override_retargets_builtin_models(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_HEADER", "from-env")
    write_models(home, {"providers": {"anthropic": {
        "baseUrl": "https://proxy.example/anthropic", "headers": {"x-team": "TEAM_HEADER", "x-fixed": "1"},
        "apiKey": "sk-proxy", "authHeader": True,
        "modelOverrides": {"claude-opus-4-5": {"name": "Opus via proxy", "cost": {"input": 1},
                                               "compat": {"supportsXhigh": True}}}}}})
    for model in list_models():
        if model.provider == "anthropic":
            assert model.base_url == "https://proxy.example/anthropic"
            assert model.headers == {"x-team": "from-env", "x-fixed": "1", "Authorization": "Bearer sk-proxy"}
    opus = get_model("anthropic/claude-opus-4-5")
    assert opus.name == "Opus via proxy"
    assert (opus.cost.input, opus.cost.output, opus.cost.cache_read) == (1, 25, 0.5)
    assert opus.compat is not None and opus.compat["supportsXhigh"] is True
    assert get_model("openai/gpt-5").headers is None
    assert get_api_key("anthropic") == "sk-proxy"


def test_provider_and_model_headers_and_compat_merge(home: Path) -> None:
    write_models(home, {"providers": {"lab": {
        "baseUrl": "http://127.0.0.1:8000/v1", "api": "openai-completions",
        "headers": {"x-a": "provider", "x-b": "provider"}, "compat": {"supportsDeveloperRole": False},
        "models": [{"id": "m", "headers": {"x-b": "model"}, "compat": {"maxTokensField": "max_tokens"},
                    "api": "openai-responses"}]}}})
    model = get_model("lab/m")
    assert model.headers == {"x-a": "provider", "x-b": "model"}
    assert model.compat == {"supportsDeveloperRole": False, "maxTokensField": "max_tokens"}
    assert model.api == "openai-responses"


@pytest.mark.parametrize(
    ("document", "fragments"),
    [
        ("{ not json", ["invalid JSON at line 1, column 3"]),
        ("[1, 2]", ["top level must be an object"]),
        ({"providers": []}, ['"providers" must be an object']),
        ({"providers": {"x": "nope"}}, ["providers.x: must be an object"]),
        ({"providers": {"x": {"baseUrl": 5, "models": [{"id": "a"}]}}},
         ["providers.x.baseUrl: must be a non-empty string"]),
        ({"providers": {"x": {"baseUrl": "http://h", "api": "bedrock-converse-stream", "models": [{"id": "a"}]}}},
         ["providers.x.api: api 'bedrock-converse-stream' is not supported"]),
        ({"providers": {"x": {"api": "openai-completions", "models": [{"id": "a"}]}}},
         ['providers.x.models (a): no "baseUrl"']),
        ({"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "a"}]}}}, ['providers.x.models (a): no "api"']),
        ({"providers": {"x": {"baseUrl": "http://h"}}}, ["providers.x: not a built-in provider"]),
        ({"providers": {"openai": {"headers": {"a": 1}}}}, ["providers.openai.headers: must be an object of string"]),
        ({"providers": {"openai": {"models": "gpt"}}}, ["providers.openai.models: must be a list"]),
        ({"providers": {"openai": {"modelOverrides": {"gpt-5": {"maxTokens": "big"}}}}},
         ["providers.openai.modelOverrides.gpt-5.maxTokens: must be a positive integer"]),
    ],
)
def test_invalid_models_json_is_reported_never_raised(home: Path, document: Any, fragments: list[str]) -> None:
    path = write_models(home, document)
    errors = models_json_errors()
    assert errors, "expected an error"
    for fragment in fragments:
        assert any(fragment in e for e in errors), (fragment, errors)
    assert all(e.startswith(str(path)) for e in errors)
    builtin = [m.ref for m in list_models()]
    assert "openai/gpt-5" in builtin  # the built-ins survive any bad file


def test_only_the_faulty_entries_are_skipped(home: Path) -> None:
    path = write_models(home, {"providers": {
        "local": {"baseUrl": "http://127.0.0.1:1234/v1", "api": "openai-completions", "models": [
            {"id": "good"},
            {"id": "bad-window", "contextWindow": -5},
            {"name": "no id"},
            {"id": "bad-input", "input": ["text", "audio"]},
            {"id": "bad-cost", "cost": {"input": "free"}},
            {"id": "bad-reasoning", "reasoning": "yes"},
            {"id": "also-good", "maxTokens": 2048.0},
        ]},
        "broken": 42,
    }})
    refs = [m.ref for m in list_models() if m.provider == "local"]
    assert refs == ["local/good", "local/also-good"]
    assert get_model("local/also-good").max_tokens == 2048
    errors = models_json_errors()
    expected = [
        "providers.local.models[1] (bad-window).contextWindow: must be a positive integer (got -5)",
        "providers.local.models[2].id: required",
        "providers.local.models[3] (bad-input).input",
        "providers.local.models[4] (bad-cost).cost.input: must be a non-negative number",
        "providers.local.models[5] (bad-reasoning).reasoning: must be true or false",
        "providers.broken: must be an object",
    ]
    for fragment in expected:
        assert any(f"{path}: {fragment}" in e for e in errors), (fragment, errors)
    assert len(errors) == len(expected)


def test_unreadable_models_json_is_reported(home: Path) -> None:
    (home / "models.json").mkdir()
    catalog.reload()
    errors = models_json_errors()
    assert len(errors) == 1 and "cannot read" in errors[0]
    assert len(list_models()) > 50


def test_empty_or_missing_file_is_fine(home: Path) -> None:
    assert models_json_errors() == []
    write_models(home, "  \n")
    assert models_json_errors() == []


def test_changes_are_picked_up_without_reload(home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write_models(home, {"providers": {"a": {"baseUrl": "http://h", "api": "openai-completions",
                                                   "models": [{"id": "one"}]}}})
    assert get_model("a/one")
    path.write_text(json.dumps({"providers": {"a": {"baseUrl": "http://h", "api": "openai-completions",
                                                    "models": [{"id": "two", "name": "Two!"}]}}}))
    os.utime(path, ns=(1, 2))  # a different mtime even within the clock's resolution
    assert get_model("a/two").name == "Two!"
    assert get_model("a/one").inferred_from == ""  # gone from the file: a guess with generic limits now
    other = tmp_path / "other-home"
    other.mkdir()
    monkeypatch.setenv("BATON_HOME", str(other))
    with pytest.raises(ModelNotFoundError):
        get_model("a/two")


def test_list_models_returns_copies_of_the_list(home: Path) -> None:
    first = list_models()
    first.clear()
    assert list_models()


def test_public_names_are_exported_lazily() -> None:
    for name in ("get_model", "list_models", "find_models", "get_api_key", "ModelNotFoundError",
                 "env_var_for", "has_api_key", "models_json_errors", "reload_catalog", "baton_home"):
        assert name in providers.__all__
        assert getattr(providers, name) is not None
    assert providers.get_model is get_model


def test_catalog_models_are_models() -> None:
    catalog.reload()
    assert all(isinstance(m, Model) for m in list_models())

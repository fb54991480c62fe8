"""Any new model by name: an id the catalog does not list, under a provider it knows, is used
with the provider's protocol and its nearest sibling's limits; Claude Code's aliases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.providers import catalog
from baton.providers.catalog import (
    ModelNotFoundError,
    get_model,
    inference_notice,
    is_builtin_provider,
    list_models,
    providers,
)
from tests.provider_scripts import text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json


@pytest.fixture
def home(baton_home: Path) -> Iterator[Path]:
    catalog.reload()
    yield baton_home
    catalog.reload()


@pytest.mark.parametrize("provider", [p for p in providers() if is_builtin_provider(p)])
def test_a_new_id_under_each_provider_is_inferred_from_its_newest_sibling(home: Path, provider: str) -> None:
    newest = next(m for m in list_models() if m.provider == provider)
    model = get_model(f"{provider}/{newest.id}-next")
    assert model.id == f"{newest.id}-next" and model.provider == provider
    assert (model.api, model.base_url) == (newest.api, newest.base_url)
    assert model.inferred_from == newest.ref
    assert (model.context_window, model.max_tokens, model.reasoning, model.input) == (
        newest.context_window, newest.max_tokens, newest.reasoning, newest.input)
    assert model.compat == newest.compat
    assert (model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write) == (0, 0, 0, 0)
    assert model.release_date is None
    notice = inference_notice(model)
    assert notice is not None and model.ref in notice and newest.ref in notice and "prices unknown" in notice


@pytest.mark.parametrize(("ref", "sibling"), [
    ("anthropic/claude-opus-9", "anthropic/claude-opus-5"),
    ("anthropic/claude-sonnet-6", "anthropic/claude-sonnet-5"),
    ("openai/gpt-7", "openai/gpt-6-astra"),
    ("openai/gpt-5.7-codex", "openai/gpt-5.3-codex"),
    ("google/gemini-4-pro", "google/gemini-3.1-pro-preview"),
    ("xai/grok-5", "xai/grok-4.7"),
    ("zai/glm-6", "zai/glm-5.2"),
    ("moonshotai/kimi-k4", "moonshotai/kimi-k3"),
])
def test_the_nearest_sibling_is_the_same_family(home: Path, ref: str, sibling: str) -> None:
    model = get_model(ref)
    assert model.inferred_from == sibling
    assert model.ref == ref


def test_no_sibling_gets_the_providers_protocol_and_generic_limits(home: Path) -> None:
    model = get_model("groq/totally-new")
    assert (model.api, model.base_url) == ("openai-completions", "https://api.groq.com/openai/v1")
    assert model.inferred_from == "" and model.reasoning is False
    assert "generic limits" in (inference_notice(model) or "")


def test_listed_models_and_unknown_providers_are_not_guessed(home: Path) -> None:
    assert get_model("anthropic/claude-opus-4-8").inferred_from is None
    assert inference_notice(get_model("openai/gpt-5")) is None
    with pytest.raises(ModelNotFoundError):
        get_model("nosuchprovider/model")
    with pytest.raises(ModelNotFoundError):
        get_model("claude-opus-9")  # a bare id names no provider


@pytest.mark.parametrize(("alias", "expected"), [
    ("opus", "anthropic/claude-opus-5"), ("sonnet", "anthropic/claude-sonnet-5"),
    ("haiku", "anthropic/claude-haiku-4-5"), ("OPUS", "anthropic/claude-opus-5"),
])
def test_claude_code_aliases_name_the_newest_of_the_family(home: Path, alias: str, expected: str) -> None:
    model = get_model(alias)
    assert model.ref == expected and model.inferred_from is None


def test_the_cli_uses_a_new_model_with_one_notice(home: Path, tmp_path: Path) -> None:
    """``baton -p --model anthropic/claude-opus-9:high``: the real program sends the request to
    the provider with the new id and adaptive thinking (its sibling's rule), and says so once."""
    seen: list[RecordedRequest] = []

    def reply(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply.sse(text_reply("anthropic-messages", "Hello from the future."))

    with ReplayServer(reply) as server:
        write_models_json(home, {"anthropic": {"baseUrl": server.url, "apiKey": "test-key"}})
        proc = run_baton(home, tmp_path, "-p", "--model", "anthropic/claude-opus-9:high", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "Hello from the future." in proc.stdout
    assert "Unknown model" not in proc.stderr
    notices = [line for line in proc.stderr.splitlines() if "not in the model catalog" in line]
    assert len(notices) == 1 and "anthropic/claude-opus-5" in notices[0]
    body = seen[0].json()
    assert body["model"] == "claude-opus-9"
    assert body["thinking"]["type"] == "adaptive" and body["output_config"] == {"effort": "high"}


def test_the_cli_accepts_an_alias_with_a_thinking_level(home: Path, tmp_path: Path) -> None:
    seen: list[RecordedRequest] = []

    def reply(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply.sse(text_reply("anthropic-messages", "ok"))

    with ReplayServer(reply) as server:
        write_models_json(home, {"anthropic": {"baseUrl": server.url, "apiKey": "test-key"}})
        proc = run_baton(home, tmp_path, "-p", "--model", "sonnet:xhigh", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "not in the model catalog" not in proc.stderr
    body = seen[0].json()
    assert body["model"] == "claude-sonnet-5" and body["output_config"] == {"effort": "xhigh"}

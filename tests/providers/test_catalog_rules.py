"""Each family in the catalog against the adapters' request rules: adaptive thinking and the
effort levels (``xhigh``/``max``), temperature where it is refused, ``none`` to turn reasoning
off, Gemini's thinking levels, the Responses ``phase``. The models come from the bundled catalog
(as a user gets them) and the bodies from the adapters' own builders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.providers import anthropic_messages, catalog, google_generative_ai, openai_completions, openai_responses
from baton.providers.catalog import get_model
from baton.providers.messages import AssistantMessage, Context, TextContent, UserMessage
from baton.providers.models import Model, ThinkingLevel
from baton.providers.openai_responses_stream import text_signature
from baton.providers.options import StreamOptions
from baton.sessions.models import thinking_levels_for


@pytest.fixture(autouse=True)
def home(baton_home: Path) -> Iterator[Path]:
    catalog.reload()
    yield baton_home
    catalog.reload()


CONTEXT = Context(messages=[UserMessage(content="hi")])


def body(ref: str, thinking: ThinkingLevel | None = None, temperature: float | None = None) -> dict[str, Any]:
    model = get_model(ref)
    options = StreamOptions(thinking=thinking, temperature=temperature)
    if model.api == "anthropic-messages":
        return anthropic_messages.build_body(model, CONTEXT, options)
    if model.api == "openai-responses":
        return openai_responses.build_body(model, CONTEXT, options)
    if model.api == "google-generative-ai":
        return google_generative_ai.build_body(model, CONTEXT, options)
    return openai_completions.build_body(model, CONTEXT, options, openai_completions.resolve_compat(model))


# ---------------------------------------------------------------------------------------------
# Anthropic


@pytest.mark.parametrize("ref", ["anthropic/claude-opus-5", "anthropic/claude-sonnet-5", "anthropic/claude-fable-5",
                                 "anthropic/claude-opus-4-8", "anthropic/claude-opus-4-6",
                                 "anthropic/claude-sonnet-4-6"])
def test_anthropic_4_6_and_later_think_adaptively(ref: str) -> None:
    sent = body(ref, "medium")
    assert sent["thinking"]["type"] == "adaptive" and sent["output_config"] == {"effort": "medium"}


@pytest.mark.parametrize("ref", ["anthropic/claude-opus-4-5", "anthropic/claude-haiku-4-5",
                                 "anthropic/claude-sonnet-4-5"])
def test_anthropic_before_4_6_thinks_with_a_budget(ref: str) -> None:
    sent = body(ref, "medium")
    assert sent["thinking"]["type"] == "enabled" and sent["thinking"]["budget_tokens"] > 0


@pytest.mark.parametrize(("ref", "effort"), [
    ("anthropic/claude-opus-5", "xhigh"), ("anthropic/claude-sonnet-5", "xhigh"), ("anthropic/claude-fable-5", "xhigh"),
    ("anthropic/claude-opus-4-8", "xhigh"), ("anthropic/claude-opus-4-7", "xhigh"),
    ("anthropic/claude-opus-4-6", "max"), ("anthropic/claude-sonnet-4-6", "max"),
])
def test_anthropic_xhigh_is_xhigh_or_max_as_the_model_takes_it(ref: str, effort: str) -> None:
    assert "xhigh" in thinking_levels_for(get_model(ref))
    assert body(ref, "xhigh")["output_config"] == {"effort": effort}


def test_anthropic_minimal_is_low_on_adaptive_models() -> None:
    assert body("anthropic/claude-opus-5", "minimal")["output_config"] == {"effort": "low"}


@pytest.mark.parametrize(("ref", "sent"), [
    ("anthropic/claude-opus-5", False), ("anthropic/claude-sonnet-5", False), ("anthropic/claude-fable-5", False),
    ("anthropic/claude-opus-4-7", False), ("anthropic/claude-sonnet-4-5", True), ("anthropic/claude-haiku-4-5", True),
])
def test_anthropic_temperature_only_where_accepted(ref: str, sent: bool) -> None:
    assert ("temperature" in body(ref, "off", temperature=0.2)) is sent


# ---------------------------------------------------------------------------------------------
# OpenAI Responses


@pytest.mark.parametrize(("ref", "level", "effort"), [
    ("openai/gpt-5.6-sol", "xhigh", "xhigh"), ("openai/gpt-6-astra", "xhigh", "xhigh"),
    ("openai/gpt-5.5", "medium", "medium"),
    ("openai/gpt-5.4", "minimal", "low"),  # no minimal after gpt-5
    ("openai/gpt-5", "minimal", "minimal"),
    ("openai/gpt-5-pro", "low", "high"),  # high only
    ("openai/gpt-5.2-chat-latest", "high", "medium"),  # medium only
    ("openai/gpt-5.3-codex", "xhigh", "xhigh"),
])
def test_responses_effort_is_one_the_model_accepts(ref: str, level: ThinkingLevel, effort: str) -> None:
    assert body(ref, level)["reasoning"] == {"effort": effort, "summary": "auto"}


@pytest.mark.parametrize(("ref", "reasoning"), [
    ("openai/gpt-5.6-sol", {"effort": "none"}), ("openai/gpt-5.1", {"effort": "none"}),
    ("openai/gpt-5", {"effort": "minimal"}),
    ("openai/gpt-6-astra", None),  # cannot turn reasoning off: the model's default
    ("openai/o3", None),
])
def test_responses_off_is_none_minimal_or_the_default(ref: str, reasoning: dict[str, str] | None) -> None:
    assert body(ref, "off").get("reasoning") == reasoning


@pytest.mark.parametrize(("ref", "sent"), [("openai/gpt-5.6-sol", False), ("openai/o4-mini", False),
                                           ("openai/gpt-4.1", True), ("openai/gpt-4o", True)])
def test_responses_temperature_only_where_accepted(ref: str, sent: bool) -> None:
    assert ("temperature" in body(ref, temperature=0.2)) is sent


def test_responses_phase_is_replayed_for_the_new_models() -> None:
    model = get_model("openai/gpt-5.6-sol")
    reply = AssistantMessage(api=model.api, provider=model.provider, model=model.id, content=[
        TextContent(text="Working on it", text_signature=text_signature("msg_a", "commentary")),
        TextContent(text="Done", text_signature=text_signature("msg_b", "final_answer")),
    ])
    items = openai_responses.convert_input(model, Context(messages=[UserMessage(content="go"), reply]))
    assert [(i.get("id"), i.get("phase")) for i in items if i.get("type") == "message"] == [
        ("msg_a", "commentary"), ("msg_b", "final_answer")]


# ---------------------------------------------------------------------------------------------
# Chat Completions hosts


@pytest.mark.parametrize(("ref", "level", "effort"), [
    ("deepseek/deepseek-v4-pro", "medium", "high"), ("deepseek/deepseek-v4-pro", "xhigh", "max"),
    ("deepseek/deepseek-flash", "low", "low"), ("deepseek/deepseek-flash", "medium", "high"),
    ("groq/qwen/qwen3.8-27b", "high", "default"), ("groq/openai/gpt-oss-120b", "xhigh", "high"),
    ("xai/grok-4.7", "xhigh", "xhigh"), ("mistral/mistral-small-latest", "low", "high"),
    ("cerebras/qwen-3.8-27b", "minimal", "low"),
])
def test_completions_effort_is_one_the_model_accepts(ref: str, level: ThinkingLevel, effort: str) -> None:
    assert body(ref, level)["reasoning_effort"] == effort


@pytest.mark.parametrize(("ref", "off"), [("groq/qwen/qwen3.8-27b", "none"), ("mistral/mistral-small-latest", "none"),
                                          ("cerebras/zai-glm-4.7", "none"), ("groq/openai/gpt-oss-120b", None)])
def test_completions_off_says_none_where_the_model_thinks_by_default(ref: str, off: str | None) -> None:
    assert body(ref, "off").get("reasoning_effort") == off


def test_a_model_with_no_effort_to_choose_gets_none_sent() -> None:
    assert "reasoning_effort" not in body("cerebras/zai-glm-4.7", "high")  # it only takes "none"


@pytest.mark.parametrize("ref", ["zai/glm-5.2", "moonshotai/kimi-k3", "deepseek/deepseek-v4-pro"])
def test_thinking_toggle_hosts(ref: str) -> None:
    assert body(ref, "high")["thinking"] == {"type": "enabled"}
    assert body(ref, "off")["thinking"] == {"type": "disabled"}


def test_kimi_takes_no_effort_and_gets_its_reasoning_back() -> None:
    model = get_model("moonshotai/kimi-k3")
    assert "reasoning_effort" not in body("moonshotai/kimi-k3", "high")
    compat = openai_completions.resolve_compat(model)
    assert compat.requires_reasoning_content_on_assistant_messages and not compat.supports_developer_role


@pytest.mark.parametrize(("ref", "sent"), [("moonshotai/kimi-k2.5", False), ("zai/glm-5.2", True)])
def test_completions_temperature_only_where_accepted(ref: str, sent: bool) -> None:
    assert ("temperature" in body(ref, temperature=0.2)) is sent


# ---------------------------------------------------------------------------------------------
# Gemini


@pytest.mark.parametrize(("ref", "level", "config"), [
    ("google/gemini-3.8-flash", "minimal", {"thinkingLevel": "LOW", "includeThoughts": True}),  # no minimal
    ("google/gemini-3.8-flash", "off", {"thinkingLevel": "LOW"}),
    ("google/gemini-3.1-pro-preview", "medium", {"thinkingLevel": "MEDIUM", "includeThoughts": True}),
    ("google/gemini-3.5-flash", "off", {"thinkingLevel": "MINIMAL"}),
    ("google/gemini-3-flash-preview", "xhigh", {"thinkingLevel": "HIGH", "includeThoughts": True}),
])
def test_gemini_3_takes_a_level_it_knows(ref: str, level: ThinkingLevel, config: dict[str, Any]) -> None:
    assert body(ref, level)["generationConfig"]["thinkingConfig"] == config


def test_gemini_2_5_keeps_its_budget() -> None:
    assert body("google/gemini-2.5-pro", "medium")["generationConfig"]["thinkingConfig"]["thinkingBudget"] > 0


def test_every_reasoning_model_offers_a_level_it_can_send() -> None:
    """No level in a model's cycle maps to an effort it refuses."""
    for model in catalog.list_models():
        efforts = (model.compat or {}).get("reasoningEfforts")
        if not model.reasoning or not efforts:
            continue
        for level in thinking_levels_for(model):
            if level == "off":
                continue
            _check_effort(model, level, efforts)


def _check_effort(model: Model, level: ThinkingLevel, efforts: list[str]) -> None:
    from baton.providers.models import effort_for_level

    chosen = effort_for_level(model, level)
    positive = [e for e in efforts if e != "none"]
    assert chosen in efforts if positive else chosen is None, (model.ref, level)

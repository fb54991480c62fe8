"""HandoffPreviews: the ``/model`` picker's previews, one transform per target, on a real pi session."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

import baton.sessions.handoff as handoff
from baton.agent.messages import convert_to_llm
from baton.providers.dispatch import id_normalizer_for
from baton.providers.messages import MESSAGE_ADAPTER
from baton.providers.models import Model
from baton.providers.transform import TransformReport, transform_messages
from baton.sessions.handoff import HandoffPreviews

CURRENT = Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic", input=["text", "image"])
TARGETS = [
    Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic", input=["text", "image"]),
    Model(id="gpt-5", api="openai-responses", provider="openai", input=["text", "image"]),
    Model(id="deepseek-chat", api="openai-completions", provider="deepseek", input=["text"], context_window=64_000),
    Model(id="gemini-2.5-pro", api="google-generative-ai", provider="google", input=["text", "image"]),
]


def _messages(path: Path) -> list[Any]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message" and entry["message"]["role"] in ("user", "assistant", "toolResult"):
            out.append(MESSAGE_ADAPTER.validate_python(entry["message"]))
    return out


def _switch_cost(messages: list[Any], target: Model) -> dict[str, int]:
    """What a switch from CURRENT to ``target`` loses, computed from scratch (two transforms)."""
    llm = convert_to_llm(messages)
    reports = []
    for model in (target, CURRENT):
        report = TransformReport()
        transform_messages(llm, model, id_normalizer_for(model), report=report)
        reports.append(report)
    return {f.name: max(0, getattr(reports[0], f.name) - getattr(reports[1], f.name)) for f in fields(TransformReport)}


@pytest.fixture
def transforms(monkeypatch: pytest.MonkeyPatch) -> list[Model]:
    """The targets the previews ran the transform for (the real transform runs)."""
    seen: list[Model] = []
    real = handoff.transform_messages

    def counted(messages: Any, model: Model, *args: Any, **kwargs: Any) -> Any:
        seen.append(model)
        return real(messages, model, *args, **kwargs)

    monkeypatch.setattr(handoff, "transform_messages", counted)
    return seen


def test_each_target_is_transformed_once_and_costs_what_a_fresh_preview_says(
    pi_sessions: Path, transforms: list[Model]
) -> None:
    messages = _messages(pi_sessions / "large-session.jsonl")
    previews = HandoffPreviews(messages, CURRENT, context_tokens=100_000)
    for target in [*TARGETS, *reversed(TARGETS), TARGETS[1]]:  # up and down the list, as a picker does
        preview = previews.preview(target)
        assert preview.counts() == _switch_cost(messages, target)
    assert transforms == [TARGETS[0], CURRENT, *TARGETS[1:]]  # the baseline once, each target once
    assert previews.preview(TARGETS[2]).compaction is not None  # 100k tokens do not fit its 64k window
    assert previews.preview(TARGETS[1]).compaction is None


def test_a_model_that_differs_in_what_it_takes_is_previewed_on_its_own() -> None:
    from baton.providers.messages import ImageContent, UserMessage

    history = [UserMessage(content=[ImageContent(data="aGk=", mime_type="image/png")])]
    previews = HandoffPreviews(history, CURRENT)
    sees = TARGETS[0]
    blind = sees.model_copy(update={"input": ["text"]})  # same provider/api/id, no images
    assert previews.preview(sees).is_empty
    assert not previews.preview(blind).is_empty
    assert previews.preview(sees) is previews.preview(sees)


async def test_a_switch_back_previews_the_thinking_it_will_get_as_text(baton_home: Path, tmp_path: Path) -> None:
    """Issue 25, item 14: on B after A, both having thought, a switch back to A sends B's thinking
    as text; the old count (A's as text now minus B's as text then) said "nothing lost"."""
    from baton.providers.faux import FauxProvider, FauxResponse, faux_model, faux_thinking
    from baton.sessions import CodingSession, SessionOptions

    model_a = faux_model("model-a", provider="prov-a", api="faux-a", reasoning=True)
    model_b = faux_model("model-b", provider="prov-b", api="faux-b", reasoning=True)
    with FauxProvider("faux-a") as faux_a, FauxProvider("faux-b") as faux_b:
        faux_a.add(FauxResponse(content=[faux_thinking("A thinks"), "A answers"]))
        faux_b.add(FauxResponse(content=[faux_thinking("B thinks"), "B answers"]))
        session = await CodingSession.open(SessionOptions(cwd=tmp_path, model=model_a, tools=[], context_files=False,
                                                          extra_models=[model_a, model_b]))
        await session.prompt("one")
        await session.models.switch(model_b)
        await session.prompt("two")
        preview = session.models.handoff_preview(model_a)
        await session.close()
    assert preview.thinking_as_text == 1 and preview.summary().startswith("1 thinking block sent as text")
    assert preview.compared_with == "prov-b/model-b" and preview.to_dict()["comparedWith"] == "prov-b/model-b"


async def test_a_switch_to_a_text_only_model_says_the_images_are_not_sent(baton_home: Path, tmp_path: Path) -> None:
    from baton.providers.faux import FauxProvider, faux_model
    from baton.providers.messages import ImageContent
    from baton.sessions import CodingSession, SessionOptions

    seeing = faux_model("seeing", provider="prov-a", api="faux-a", input=("text", "image"))
    blind = faux_model("blind", provider="prov-b", api="faux-b")
    with FauxProvider("faux-a") as faux_a:
        faux_a.add("a cat")
        session = await CodingSession.open(SessionOptions(cwd=tmp_path, model=seeing, tools=[], context_files=False,
                                                          extra_models=[seeing, blind]))
        await session.prompt("what is it", images=[ImageContent(data="aGVsbG8=", mime_type="image/png")])
        preview = session.models.handoff_preview(blind)
        await session.close()
    assert "1 image not sent (the model reads text only)" in preview.summary()

"""Tool-call id normalisers: valid ids unchanged, others made valid, distinct and stable."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.providers import Model, id_normalizer_for
from baton.providers.tool_ids import (
    normalize_completions,
    normalize_mistral,
    normalize_responses,
    normalize_safe64,
)

SAFE64 = re.compile(r"[a-zA-Z0-9_-]{1,64}")
RESPONSES_LONG_ID = "call_pAyhMq9X7a2bqaYLfOOh0bYF|fc_" + "Zm9vYmFy+/==" * 37


def model(api: str, provider: str = "p", base_url: str = "", compat: dict[str, object] | None = None) -> Model:
    return Model(id="m", api=api, provider=provider, base_url=base_url, compat=compat)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (model("anthropic-messages"), normalize_safe64),
        (model("google-generative-ai"), normalize_safe64),
        (model("openai-completions"), normalize_completions),
        (model("openai-responses"), normalize_responses),
        (model("openai-completions", provider="mistral"), normalize_mistral),
        (model("openai-completions", base_url="https://api.mistral.ai/v1"), normalize_mistral),
        (model("openai-completions", compat={"requiresMistralToolIds": True}), normalize_mistral),
        (model("openai-completions", compat={"toolCallIdFormat": "mistral9"}), normalize_mistral),
        (model("faux"), None),
        (model("some-future-api"), None),
    ],
)
def test_normaliser_per_target(target: Model, expected: object) -> None:
    assert id_normalizer_for(target) is expected


@pytest.mark.parametrize(
    ("normalize", "valid_id"),
    [
        (normalize_safe64, "toolu_01A09q90qw90lq917835lq9"),
        (normalize_safe64, "a" * 64),
        (normalize_completions, "call_abc123"),
        (normalize_completions, "toolu_01A09q90qw90lq917835lq9"),
        (normalize_mistral, "A1b2C3d4E"),
        (normalize_responses, "call_abc|fc_0123abcdef"),
        (normalize_responses, "toolu_01A09q90qw90lq917835lq9"),
    ],
)
def test_valid_ids_are_unchanged(normalize: object, valid_id: str) -> None:
    assert normalize(valid_id) == valid_id  # type: ignore[operator]


def test_long_responses_id_to_anthropic_keeps_its_call_prefix() -> None:
    out = normalize_safe64(RESPONSES_LONG_ID)
    assert SAFE64.fullmatch(out)
    assert out.startswith("call_pAyhMq9X7a2bqaYLfOOh0bYF_fc_")


def test_long_responses_id_to_chat_completions_keeps_its_call_part() -> None:
    out = normalize_completions(RESPONSES_LONG_ID)
    assert len(out) <= 40
    assert "|" not in out
    assert out.startswith("call_pAyhMq9X7a2bqaYLfOOh0bYF")


def test_responses_target_splits_call_and_item() -> None:
    out = normalize_responses(RESPONSES_LONG_ID)
    call_id, item_id = out.split("|")
    assert call_id == "call_pAyhMq9X7a2bqaYLfOOh0bYF"
    assert re.fullmatch(r"fc_[a-zA-Z0-9_-]{1,61}", item_id)
    assert normalize_responses("call a|b") == f"{normalize_safe64('call a')}|{normalize_responses('x|b').split('|')[1]}"


def test_ids_with_a_common_long_prefix_stay_distinct() -> None:
    prefix = "call_" + "q" * 100
    for normalize in (normalize_safe64, normalize_completions, normalize_mistral, normalize_responses):
        assert normalize(prefix + "|fc_1") != normalize(prefix + "|fc_2")
    # same call part, different item: Chat Completions ids must still differ
    assert normalize_completions("call_1|fc_a") != normalize_completions("call_1|fc_b")


def test_a_changed_id_never_equals_the_plain_id_it_resembles() -> None:
    assert normalize_safe64("call.1") != "call_1"
    assert normalize_safe64("call.1") != normalize_safe64("call:1")


ID_TEXT = st.one_of(
    st.text(max_size=120),
    st.text("abc_-|+/=.:", max_size=500),
    st.builds(lambda a, b: f"call_{a}|fc_{b}", st.text("ab+/=", max_size=60), st.text("ab+/=", max_size=400)),
)


@given(ID_TEXT)
def test_outputs_are_valid_stable_and_fixed_points(original: str) -> None:
    checks = [
        (normalize_safe64, lambda i: SAFE64.fullmatch(i)),
        (normalize_completions, lambda i: 0 < len(i) <= 40 and "|" not in i),
        (normalize_mistral, lambda i: re.fullmatch(r"[a-zA-Z0-9]{9}", i)),
        (
            normalize_responses,
            lambda i: SAFE64.fullmatch(i)
            or (i.count("|") == 1 and SAFE64.fullmatch(i.split("|")[0])
                and re.fullmatch(r"fc_[a-zA-Z0-9_-]{1,61}", i.split("|")[1])),
        ),
    ]
    for normalize, valid in checks:
        out = normalize(original)
        assert valid(out), (normalize.__name__, original, out)
        assert normalize(original) == out
        assert normalize(out) == out


@given(st.lists(st.text(min_size=1, max_size=200), min_size=2, max_size=30, unique=True), st.text(max_size=80))
def test_distinct_ids_stay_distinct(suffixes: list[str], prefix: str) -> None:
    ids = [prefix * 3 + s for s in suffixes]
    for normalize in (normalize_safe64, normalize_completions, normalize_mistral, normalize_responses):
        outs = [normalize(i) for i in ids]
        assert len(set(outs)) == len(set(ids)), normalize.__name__

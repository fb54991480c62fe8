"""Streaming JSON: partial-json-parser semantics, fragment by fragment, never raising."""

from __future__ import annotations

import itertools
import json
from typing import Any

import partial_json_parser
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers import StreamingJsonParser, parse_streaming_json

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
JSON_OBJECTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5)


def oracle(text: str) -> dict[str, Any]:
    """What pi shows: partial-json-parser's value, or {} when it gives up or is not an object."""
    try:
        value = partial_json_parser.loads(text)
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


def feed_all(fragments: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    parser = StreamingJsonParser()
    snapshots = [json.loads(json.dumps(parser.feed(f))) for f in fragments]
    return snapshots, parser.finish()


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=150, deadline=None)
@given(JSON_OBJECTS, st.booleans(), st.integers(0, 10_000))
def test_every_prefix_parses_like_partial_json_parser(value: dict[str, Any], ascii_only: bool, seed: int) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=seed % 3 or None)
    step = max(1, len(text) // 40)
    for end in [*range(0, len(text), step), len(text) - 1, len(text)]:
        prefix = text[:end]
        if not prefix[-1:].isspace():  # see test_trailing_whitespace_of_an_open_string_is_kept
            assert parse_streaming_json(prefix) == oracle(prefix), prefix
    assert parse_streaming_json(text) == value


@settings(max_examples=150, deadline=None)
@given(JSON_OBJECTS, st.lists(st.integers(0, 10_000), max_size=30))
def test_snapshot_after_each_fragment_is_the_parse_of_the_prefix(value: dict[str, Any], cuts: list[int]) -> None:
    text = json.dumps(value, ensure_ascii=False)
    fragments = split(text, cuts)
    snapshots, final = feed_all(fragments)
    received = ""
    for fragment, snapshot in zip(fragments, snapshots, strict=True):
        received += fragment
        if not received[-1:].isspace():
            assert snapshot == json.loads(json.dumps(oracle(received))), received
    assert final == value


@settings(max_examples=100, deadline=None)
@given(JSON_OBJECTS, st.integers(1, 7))
def test_ascii_escaped_text_in_small_fragments_ends_exact(value: dict[str, Any], size: int) -> None:
    text = json.dumps(value, ensure_ascii=True)
    _, final = feed_all([text[i : i + size] for i in range(0, len(text), size)])
    assert final == value


@given(st.text(max_size=60), st.lists(st.integers(0, 100), max_size=8))
def test_garbage_never_raises(text: str, cuts: list[int]) -> None:
    assert isinstance(parse_streaming_json(text), dict)
    parser = StreamingJsonParser()
    for fragment in split(text, cuts):
        assert isinstance(parser.feed(fragment), dict)
    assert isinstance(parser.finish(), dict)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("   ", {}),
        ("{", {}),
        ('{"pa', {}),
        ('{"path": ', {}),
        ('{"path": "src/ma', {"path": "src/ma"}),
        ('{"a": "x\\', {"a": "x"}),
        ('{"a": "x\\u00', {"a": "x"}),
        ('{"a": 1.', {"a": 1}),
        ('{"a": -', {}),
        ('{"a": 2e', {"a": 2}),
        ('{"a": tr', {"a": True}),
        ('{"a": [1, {"b": n', {"a": [1, {"b": None}]}),
        ('{"a": 1} trailing', {}),
        ('[1, 2]', {}),
        ('"text"', {}),
        ('{"a": 01}', {}),
        ('{"a": NaN}', {}),
        ('{"a": 1,}', {}),
    ],
)
def test_partial_and_hopeless_inputs(text: str, expected: dict[str, Any]) -> None:
    assert parse_streaming_json(text) == expected
    parser = StreamingJsonParser()
    for ch in text:
        parser.feed(ch)
    assert parser.finish() == expected


def test_split_surrogate_pair_waits_for_its_second_half() -> None:
    parser = StreamingJsonParser()
    parser.feed('{"e": "ok \\ud83d')
    assert parser.feed("\\ude") == {"e": "ok "}
    assert parser.feed('00 done"}') == {"e": "ok \U0001f600 done"}
    lone = StreamingJsonParser()
    lone.feed('{"e": "\\ud83d')
    assert lone.finish() == {"e": "\ud83d"}  # as json.loads would give for a lone escape


def test_lenient_like_pis_repair_raw_control_characters_and_bad_escapes() -> None:
    assert parse_streaming_json('{"a": "line1\nline2\tend"}') == {"a": "line1\nline2\tend"}
    assert parse_streaming_json('{"path": "C:\\dir\\new"}') == {"path": "C:\\dir\new"}


def test_deep_nesting_does_not_overflow_the_stack() -> None:
    text = '{"a": ' + "[" * 50_000
    assert parse_streaming_json(text) == {}
    assert parse_streaming_json(text + "]" * 50_000 + "}") == {}


def test_nesting_past_the_cap_is_refused_while_it_streams() -> None:
    parser = StreamingJsonParser(max_depth=4)
    assert parser.feed('{"a": [[') == {"a": [[]]}
    assert parser.feed("[") == {"a": [[[]]]} and not parser.too_deep  # four levels: the cap
    assert parser.feed("[1]]]]}") == {} and parser.too_deep
    assert parser.finish() == {}


def test_feed_returns_the_live_value() -> None:
    parser = StreamingJsonParser()
    first = parser.feed('{"path": "a.txt", "content": "hel')
    second = parser.feed('lo"')
    assert first is second
    assert second == {"path": "a.txt", "content": "hello"}
    assert parser.finish() == {"path": "a.txt", "content": "hello"}


def test_a_large_string_is_current_after_every_fragment() -> None:
    content = "line of text\n" * 2_000
    text = json.dumps({"path": "big.txt", "content": content})
    parser = StreamingJsonParser()
    previous = 0
    for step, end in enumerate(range(4, len(text) + 4, 4)):
        value = parser.feed(text[end - 4 : end])
        # no reference to the string is kept between fragments, so it is extended in place
        assert content.startswith(value.get("content", ""))
        assert len(value.get("content", "")) >= previous
        previous = len(value.get("content", ""))
        if step % 37 == 0:
            assert value == parse_streaming_json(text[:end])
            if not text[:end].endswith(" "):
                assert value == oracle(text[:end])
    assert parser.finish() == {"path": "big.txt", "content": content}


def test_a_large_string_held_by_the_caller_lags_by_at_most_an_eighth() -> None:
    content = "x" * 60_000
    head = '{"content": "'
    text = head + content + '"}'
    parser = StreamingJsonParser()
    held: list[str] = []
    parser.feed(head)
    lagged = False
    for start in range(len(head), len(head) + len(content), 4):
        seen = parser.feed(text[start : start + 4])["content"]
        held.append(seen)  # the caller keeps every snapshot: appending in place is impossible
        received = start + 4 - len(head)
        assert content.startswith(seen)
        assert 9 * len(seen) >= 8 * received
        lagged = lagged or len(seen) < received
    assert lagged
    assert parser.feed('"}') == {"content": content}
    assert parser.finish() == {"content": content}


def test_trailing_whitespace_of_an_open_string_is_kept() -> None:
    # partial-json-parser (and pi's npm partial-json) trim the whole input first, so "x " shows
    # as "x" until the next character arrives; baton shows what was received.
    assert parse_streaming_json('{"a": "x ') == {"a": "x "}
    assert parse_streaming_json('{"a": "x\\n ') == {"a": "x\n "}
    assert parse_streaming_json('{"a": 1 ') == {"a": 1}

"""``loads_event`` (the adapters' per-event JSON parse) answers exactly as ``json.loads``: the
same value, or the same error with the same wording."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from baton.providers.wire_common import loads_event

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _outcome(parse: object, text: str) -> tuple[str, object]:
    try:
        return ("value", parse(text))  # type: ignore[operator]
    except ValueError as exc:
        return (type(exc).__name__, str(exc))


@given(_json, st.sampled_from(["", " ", "\n", "\ufeff"]), st.sampled_from(["", " ", "\r\n", "x", "}", " 1"]))
def test_the_same_answer_as_json_loads(value: object, before: str, after: str) -> None:
    text = before + json.dumps(value) + after
    assert _outcome(loads_event, text) == _outcome(json.loads, text)


@given(st.text(max_size=40))
def test_the_same_answer_on_any_text(text: str) -> None:
    assert _outcome(loads_event, text) == _outcome(json.loads, text)


def test_constants_and_floats_as_json_loads_reads_them() -> None:
    for text in ('{"a":NaN}', "Infinity", "-0.0", "1e400", '"\\ud83d"', "[1,2"):
        assert repr(_outcome(loads_event, text)) == repr(_outcome(json.loads, text))

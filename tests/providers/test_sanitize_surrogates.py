"""Lone surrogates never reach a request body; everything else passes through unchanged."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from baton.providers.wire_common import sanitize_surrogates

_SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)


@given(st.text(alphabet=st.one_of(st.characters(), _SURROGATES)))
def test_the_result_always_encodes_and_keeps_every_other_character(text: str) -> None:
    out = sanitize_surrogates(text)
    out.encode("utf-8")  # no lone surrogate left
    assert len(out) == len(text)
    for before, after in zip(text, out, strict=True):
        assert after == ("\ufffd" if 0xD800 <= ord(before) <= 0xDFFF else before)


def test_ascii_and_other_text_come_back_as_they_are() -> None:
    for text in ("", "plain ascii", "caf\u00e9 \u2603 \U0001f600"):
        assert sanitize_surrogates(text) == text
    assert sanitize_surrogates("a\ud800b\udfffc") == "a\ufffdb\ufffdc"

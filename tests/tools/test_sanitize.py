"""strip_control_sequences: what a terminal interprets is removed, text stays."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.tools.sanitize import strip_control_sequences

CONTROL: tuple[Literal["Cc"]] = ("Cc",)
REVEALED = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2060\ufeff"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("plain text\twith tab\n", "plain text\twith tab\n"),
        ("\x1b[31mred\x1b[0m and \x1b[1;38;5;208mbold orange\x1b[m", "red and bold orange"),
        ("\x1b[2K\x1b[1Gcleared", "cleared"),
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),
        ("\x1b]0;window title\x07after", "after"),
        ("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1bPq#0;2;0;0;0#1~~\x1b\\sixel gone", "sixel gone"),
        ("\x1b(Bcharset\x1b7saved\x1b8", "charsetsaved"),
        ("\x9b31mC1 CSI\x9b0m", "C1 CSI"),
        ("bell\x07 and nul\x00 and del\x7f", "bell and nul and del"),
        ("crlf\r\nlines\r\n", "crlf\nlines\n"),
        ("progress 10%\rprogress 50%\rprogress 100%\ndone", "progress 100%\ndone"),
        ("downloading\r\r", "downloading"),
        ("ab\bc", "ac"),
        ("N\bNA\bAM\bME\bE", "NAME"),
        ("unfinished \x1b[", "unfinished "),
        ("lone \x1b\nescape", "lone \nescape"),
    ],
)
def test_cases(raw: str, clean: str) -> None:
    assert strip_control_sequences(raw) == clean


def test_clean_text_is_returned_as_is() -> None:
    text = "nothing to do here\n" * 1000
    assert strip_control_sequences(text) is text


def test_unterminated_osc_stops_at_the_line_end() -> None:
    assert strip_control_sequences("\x1b]0;title\nnext line") == "\nnext line"


@given(st.text())
def test_output_has_no_control_characters(text: str) -> None:
    out = strip_control_sequences(text)
    assert not any((ord(ch) < 32 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F for ch in out)
    assert out.count("\n") <= text.count("\n")


@given(st.text(alphabet=st.characters(blacklist_categories=CONTROL, blacklist_characters=REVEALED)))
def test_printable_text_is_untouched(text: str) -> None:
    assert strip_control_sequences(text) == text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("rm -rf ~/\u202etxt.sh", "rm -rf ~/<U+202E>txt.sh"),
        ("a\u202ab\u202bc\u202cd\u202de", "a<U+202A>b<U+202B>c<U+202C>d<U+202D>e"),
        ("\u2066x\u2067y\u2068z\u2069", "<U+2066>x<U+2067>y<U+2068>z<U+2069>"),
        ("same\u200bname and\u2060joined\ufeff", "same<U+200B>name and<U+2060>joined<U+FEFF>"),
        ("\x1b[31m\u202ered\x1b[0m", "<U+202E>red"),
    ],
)
def test_bidi_controls_and_zero_width_spaces_are_shown_as_code_points(raw: str, shown: str) -> None:
    assert strip_control_sequences(raw) == shown


def test_joiners_that_emoji_and_scripts_need_stay() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467 \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert strip_control_sequences(family) is family


@given(st.text() | st.text(alphabet=st.sampled_from([*REVEALED, "a", " ", "\n", "\x1b", "[", "\r", "\u200d"])))
def test_no_bidi_control_or_zero_width_space_survives(text: str) -> None:
    out = strip_control_sequences(text)
    assert not any(ch in REVEALED for ch in out)

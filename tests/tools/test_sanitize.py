"""strip_control_sequences: what a terminal interprets is removed, text stays."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.tools.sanitize import strip_control_sequences

CONTROL: tuple[Literal["Cc"]] = ("Cc",)


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


@given(st.text(alphabet=st.characters(blacklist_categories=CONTROL)))
def test_printable_text_is_untouched(text: str) -> None:
    assert strip_control_sequences(text) == text

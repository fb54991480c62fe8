"""Make terminal output safe and readable as plain text.

:func:`strip_control_sequences` removes what a terminal would interpret rather than print: ANSI
escape sequences (CSI such as colours and cursor moves, OSC such as titles and hyperlinks,
DCS/SOS/PM/APC strings, two- and three-byte ESC sequences, their 8-bit C1 forms) and the remaining
C0/C1 control characters except newline and tab. Carriage returns and backspaces are applied the
way a progress bar means them: a line rewritten with ``\\r`` keeps only its last segment, and
``x\\by`` keeps ``y``. Used on command output, by the TUI and by exports.

Characters that change what text *looks* like without being seen are shown instead of obeyed:
the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which make
a command or a name read as something else than it is ("Trojan Source": an override before
``txt.sh`` shows ``hs.txt``), and the zero-width spaces that make two different names look alike
(U+200B, U+2060, U+FEFF) become a visible ``<U+202E>``.
The joiners (U+200C, U+200D) stay: emoji and several scripts need them.
"""

from __future__ import annotations

import re

# Shown as <U+XXXX>: bidi embeddings, overrides and isolates; zero-width spaces.
_REVEALED = "\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff"
_REVEAL = re.compile(f"[{_REVEALED}]")

# Anything that needs work: C0 except \t and \n, DEL, C1, and the characters shown as code points.
_NEEDS_WORK = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_REVEALED}]")

_PRINTABLE_ASCII = bytes(range(0x20, 0x7F)) + b"\n\t"

_ESCAPES = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]?                      # CSI (an unfinished one at the end too)
    | \x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?          # OSC, ended by BEL or ST (or left open)
    | \x1b[PX^_](?:[^\x1b\n]|\x1b(?!\\))*(?:\x1b\\)?  # DCS, SOS, PM, APC up to ST
    | \x1b[ -/]*[0-~]                               # nF / Fp / Fe / Fs sequences (ESC ( B, ESC 7, ...)
    | \x1b                                          # a lone ESC
    | \x9b[0-?]*[ -/]*[@-~]?                        # 8-bit CSI
    | \x9d[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?   # 8-bit OSC
    | [\x90\x98\x9e\x9f][^\x1b\x9c\n]*(?:\x1b\\|\x9c)?  # 8-bit DCS, SOS, PM, APC
    """,
    re.VERBOSE,
)

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")

_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def strip_control_sequences(text: str) -> str:
    """Remove terminal control sequences and control characters (keeping ``\\n`` and ``\\t``).

    ``\\r\\n`` becomes ``\\n``; a line containing bare ``\\r`` keeps its last non-empty segment
    (what a progress bar finally shows); backspace erases the character before it; bidi
    controls and zero-width spaces become ``<U+XXXX>``. Text without any of these is returned
    unchanged (and fast)."""
    if text.isascii():
        if not text.encode("ascii").translate(None, _PRINTABLE_ASCII):
            return text  # fast path: nothing but printable ASCII, newlines and tabs
    elif not _NEEDS_WORK.search(text):
        return text
    if "\x1b[" in text:
        text = _CSI.sub("", text)  # the common case (colours, cursor moves), cheaply first
    if "\x1b" in text or _has_c1_introducer(text):
        text = _ESCAPES.sub("", text)
    if "\r" in text:
        text = "\n".join(_last_segment(line) for line in text.split("\n"))
    if "\b" in text:
        text = "\n".join(_apply_backspaces(line) if "\b" in line else line for line in text.split("\n"))
    text = _CONTROLS.sub("", text)
    if not text.isascii():
        text = _REVEAL.sub(_code_point, text)
    return text


def _code_point(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def _has_c1_introducer(text: str) -> bool:
    return any(ch in text for ch in "\x9b\x9d\x90\x98\x9e\x9f")


def _last_segment(line: str) -> str:
    if "\r" not in line:
        return line
    segments = line.split("\r")
    for segment in reversed(segments):
        if segment:
            return segment
    return ""


def _apply_backspaces(line: str) -> str:
    out: list[str] = []
    for ch in line:
        if ch == "\b":
            if out:
                out.pop()
        else:
            out.append(ch)
    return "".join(out)

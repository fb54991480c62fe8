"""Keep a bracketed paste one paste, whatever the pasted text holds.

Some terminals (tmux 3.3, urxvt) pass an ESC byte inside pasted text through unchanged. Textual's
parser then reads it as the start of an escape sequence: the text after it leaves the paste and
arrives as key presses, so a pasted line break presses Enter (sending a half-pasted prompt) and a
pasted Ctrl+G opens the editor. xterm and Alacritty drop such ESC bytes before they send a paste;
this filter does the same on the way in, for the terminals that do not.

Such a terminal also passes on an end marker that is part of the pasted text: the rest of the
paste would arrive as keys. An end marker followed, in the same input, by another end marker with
no start marker between is that: no terminal ends a paste it has not started, so the first is
text (its ESC dropped). The bytes typed into the instant frame are one input, so this holds for
all of them; while the app runs, for what one read brings (a terminal writes a paste at once).
"""

from __future__ import annotations

ESC = "\x1b"
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


class PasteEscapeFilter:
    """Feed terminal input through :meth:`feed`; ESC bytes inside a bracketed paste are dropped
    (the markers stay). Input outside a paste passes through unchanged. State carries over between
    reads, so a marker split across two reads is still found."""

    def __init__(self) -> None:
        self._in_paste = False
        self._held = ""
        """The end of the last read inside a paste that may be the start of the end marker."""
        self._tail = ""
        """The last few characters outside a paste (a start marker may span two reads)."""

    def feed(self, data: str) -> str:
        """The input to hand to the parser for ``data`` (possibly holding back a partial marker)."""
        out: list[str] = []
        text = self._held + data
        self._held = ""
        position = 0
        while position < len(text):
            if not self._in_paste:
                window = self._tail + text[position:]
                found = window.find(PASTE_START)
                if found < 0:
                    out.append(text[position:])
                    self._tail = window[-(len(PASTE_START) - 1) :]
                    break
                end = position + found - len(self._tail) + len(PASTE_START)  # just past the marker, in text
                out.append(text[position:end])
                position = end
                self._tail = ""
                self._in_paste = True
                continue
            escape = text.find(ESC, position)
            if escape < 0:
                out.append(text[position:])
                break
            out.append(text[position:escape])
            rest = text[escape : escape + len(PASTE_END)]
            if rest == PASTE_END and _another_end_follows(text, escape + len(PASTE_END)):
                position = escape + 1  # an end marker in the pasted text: its ESC dropped
            elif rest == PASTE_END:
                out.append(PASTE_END)
                position = escape + len(PASTE_END)
                self._in_paste = False
            elif PASTE_END.startswith(rest):  # may be the end marker, cut by the read: wait
                self._held = text[escape:]
                break
            else:
                position = escape + 1  # an ESC in the pasted text: dropped
        return "".join(out)


def _another_end_follows(text: str, position: int) -> bool:
    """True when an end marker comes after ``position`` with no start marker before it."""
    end = text.find(PASTE_END, position)
    if end < 0:
        return False
    start = text.find(PASTE_START, position, end)
    return start < 0

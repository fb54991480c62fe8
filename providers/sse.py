"""Incremental server-sent-events decoding (the WHATWG event-stream format).

:class:`SseDecoder` is fed the raw response bytes as they arrive, in chunks split anywhere (inside
a UTF-8 sequence, inside a ``data:`` line, between ``\\r`` and ``\\n``), and returns the complete
events. Lines may end in LF, CRLF or CR; comment lines (``: ...``) are skipped; an event's
``data:`` lines are joined with ``\\n``; ``event:`` names it (``"message"`` when absent).
Work is linear in the input: a long line arriving in many chunks is buffered as parts, not
re-concatenated per chunk.
"""

from __future__ import annotations

import codecs

SseEvent = tuple[str, str]
"""``(event name, data)``."""
MAX_STRAY = 64 * 1024


class SseDecoder:
    """Turns a byte stream into ``(event, data)`` pairs; one instance per response."""

    __slots__ = ("_data", "_event", "_skip_lf", "_started", "_stray_size", "_tail", "_utf8", "stray")

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._tail: list[str] = []
        """The unterminated last line so far, in parts."""
        self._skip_lf = False
        """The previous chunk ended in ``\\r``: a leading ``\\n`` belongs to that line end."""
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self.stray: list[str] = []
        """Lines that are no SSE field at all (at most :data:`MAX_STRAY` characters kept): some
        servers (Gemini) write a mid-stream error as bare, pretty-printed JSON."""
        self._stray_size = 0

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Decode one chunk of the body; returns the events it completed (often none)."""
        return self.feed_text(self._utf8.decode(chunk))

    def feed_text(self, text: str) -> list[SseEvent]:
        """Like :meth:`feed`, for already decoded text."""
        if not text:
            return []
        if not self._started:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
                if not text:
                    return []
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\r" in text:
            if text[-1] == "\r":
                self._skip_lf = True
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in text:
            self._tail.append(text)
            return []
        if self._tail:
            self._tail.append(text)
            text = "".join(self._tail)
            self._tail.clear()
        lines = text.split("\n")
        last = lines.pop()
        if last:
            self._tail.append(last)
        return self._lines(lines)

    def close(self) -> list[SseEvent]:
        """The body ended cleanly: flush the last line and a final event lacking its blank line."""
        events: list[SseEvent] = []
        rest = self._utf8.decode(b"", final=True)
        if rest:
            events += self.feed_text(rest)
        if self._tail:
            line = "".join(self._tail)
            self._tail.clear()
            events += self._lines([line])
        if self._data:
            events += self._lines([""])
        return events

    def _lines(self, lines: list[str]) -> list[SseEvent]:
        events: list[SseEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append((self._event or "message", "\n".join(data)))
                    data.clear()
                self._event = ""
            elif line.startswith("data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(" ") else value)
            elif line[0] == ":":
                continue
            else:
                name, sep, value = line.partition(":")
                if sep and value.startswith(" "):
                    value = value[1:]
                if name == "event":
                    self._event = value
                elif name == "data":  # "data" with no colon: an empty data line
                    data.append(value)
                elif name not in ("id", "retry") and self._stray_size < MAX_STRAY:
                    self.stray.append(line)
                    self._stray_size += len(line)
                # "id" and "retry" do not matter to a one-shot request; unknown fields are ignored.
        return events

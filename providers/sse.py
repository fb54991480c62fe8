"""Incremental server-sent-events decoding (the WHATWG event-stream format).

:class:`SseDecoder` is fed the raw response bytes as they arrive, in chunks split anywhere (inside
a UTF-8 sequence, inside a ``data:`` line, between ``\\r`` and ``\\n``), and returns the complete
events. Lines may end in LF, CRLF or CR; comment lines (``: ...``) are skipped; an event's
``data:`` lines are joined with ``\\n``; ``event:`` names it (``"message"`` when absent).
Work is linear in the input: a long line arriving in many chunks is buffered as parts, not
re-concatenated per chunk.

Memory is bounded: a line, or an event's data, longer than :data:`MAX_LINE` characters raises
:class:`SseLimitError` (a provider once streamed one endless line until it held 1.16 GB). The
largest real events (a Responses ``response.completed`` repeating the whole answer, a Gemini
function call sent whole) stay far below it. The error is not retryable: a line that long is
no network blip, and asking again would pay for the same stream once more.
"""

from __future__ import annotations

import codecs

from baton.providers.errors import ProviderError

SseEvent = tuple[str, str]
"""``(event name, data)``."""
MAX_STRAY = 64 * 1024
MAX_LINE = 8 * 1024 * 1024
"""The longest line, and the most data one event may carry, in characters (8 MiB)."""


class SseLimitError(ProviderError):
    """The stream sent a line or an event longer than :data:`MAX_LINE`; it was stopped."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The provider sent {what} longer than the {MAX_LINE // (1024 * 1024)} MiB limit "
            f"({MAX_LINE} characters); the stream was stopped",
            retryable=False,
        )


class SseDecoder:
    """Turns a byte stream into ``(event, data)`` pairs; one instance per response."""

    __slots__ = (
        "_data", "_data_size", "_event", "_skip_lf", "_started", "_stray_size", "_tail", "_tail_size", "_utf8",
        "comments", "stray",
    )

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._tail: list[str] = []
        """The unterminated last line so far, in parts."""
        self._tail_size = 0
        self._skip_lf = False
        """The previous chunk ended in ``\\r``: a leading ``\\n`` belongs to that line end."""
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self._data_size = 0
        self.stray: list[str] = []
        """Lines that are no SSE field at all (at most :data:`MAX_STRAY` characters kept): some
        servers (Gemini) write a mid-stream error as bare, pretty-printed JSON."""
        self._stray_size = 0
        self.comments = 0
        """Comment lines seen so far (``: OPENROUTER PROCESSING``): keep-alives, never content."""

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
            self._grow_tail(text)
            return []
        if self._tail:
            head, _, rest = text.partition("\n")
            self._grow_tail(head)
            text = "".join(self._tail) + "\n" + rest
            self._tail.clear()
            self._tail_size = 0
        lines = text.split("\n")
        last = lines.pop()
        if last:
            self._grow_tail(last)
        return self._lines(lines)

    def _grow_tail(self, part: str) -> None:
        self._tail_size += len(part)
        if self._tail_size > MAX_LINE:
            raise SseLimitError("a line")
        self._tail.append(part)

    def close(self) -> list[SseEvent]:
        """The body ended cleanly: flush the last line and a final event lacking its blank line."""
        events: list[SseEvent] = []
        rest = self._utf8.decode(b"", final=True)
        if rest:
            events += self.feed_text(rest)
        if self._tail:
            line = "".join(self._tail)
            self._tail.clear()
            self._tail_size = 0
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
                    self._data_size = 0
                self._event = ""
            elif line.startswith("data:"):
                value = line[5:]
                self._data_size += len(value)
                if self._data_size > MAX_LINE:
                    raise SseLimitError("an event")
                data.append(value[1:] if value.startswith(" ") else value)
            elif line[0] == ":":
                self.comments += 1
            else:
                name, sep, value = line.partition(":")
                if sep and value.startswith(" "):
                    value = value[1:]
                if name == "event":
                    self._event = value
                elif name == "data":  # "data" with no colon: an empty data line
                    data.append(value)
                elif len(line) > MAX_LINE:
                    raise SseLimitError("a line")
                elif name not in ("id", "retry") and self._stray_size < MAX_STRAY:
                    self.stray.append(line)
                    self._stray_size += len(line)
                # "id" and "retry" do not matter to a one-shot request; unknown fields are ignored.
        return events

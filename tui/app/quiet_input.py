"""Terminal input that sleeps until a byte arrives, for both of baton's drivers (full screen and
``--inline``).

Textual's input threads wake ten times a second to look for a lone Escape's timeout even when
nothing was typed; here the thread blocks in ``select`` with no timeout unless the parser waits for
one, and a pipe wakes it to stop. Every byte goes through one :class:`KeyInput`: UTF-8 decoding,
the paste filter (:mod:`baton.tui.app.paste_filter`) and Textual's own parser, so the bytes typed
into the instant frame and those read afterwards are one stream (a paste or an escape sequence cut
by the hand-over is still one).
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder
from collections.abc import Callable

from textual import events
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.message import Message

from baton.tui.app.paste_filter import PASTE_END, PASTE_START, PasteEscapeFilter

READ_SIZE = 4096


class WakingEvent(threading.Event):
    """The input thread's stop flag; setting it also writes to a pipe the thread selects on, so
    the thread can wait for input without a timeout and still stop at once."""

    def __init__(self) -> None:
        super().__init__()
        self._pipe_lock = threading.Lock()
        self.wake_r = self.wake_w = -1

    def renew(self) -> int:
        """A fresh pipe (earlier wake-ups forgotten) for an input thread about to start; the
        end to select on. Textual closes the driver on suspend and starts it again on resume."""
        with self._pipe_lock:
            self._close_pipe()
            self.wake_r, self.wake_w = os.pipe()
            os.set_blocking(self.wake_w, False)
            return self.wake_r

    def set(self) -> None:
        super().set()
        with self._pipe_lock:
            if self.wake_w < 0:
                return
            try:
                os.write(self.wake_w, b"x")
            except OSError:  # the pipe is full: already woken
                pass

    def close(self) -> None:
        """Close the pipe; :meth:`set` then only sets the flag."""
        with self._pipe_lock:
            self._close_pipe()

    def _close_pipe(self) -> None:
        fds, self.wake_r, self.wake_w = (self.wake_r, self.wake_w), -1, -1
        for fd in fds:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass


class KeyInput:
    """Bytes from the terminal to Textual's events; state carries over between calls.

    The text of a bracketed paste is gathered here, in pieces, and becomes one ``Paste`` event as
    Textual's parser makes it: the parser takes a paste one character at a time (seconds for
    10 MB). Where a start marker is cut between two reads the parser gathers that paste itself."""

    def __init__(self, debug: bool = False) -> None:
        self._parser = XTermParser(debug)
        self._pastes = PasteEscapeFilter()
        self._decode = getincrementaldecoder("utf-8")(errors="replace").decode
        self._paste: list[str] | None = None

    def feed(self, data: bytes, final: bool = False) -> list[Message]:
        """The events ``data`` completes (a sequence cut at its end waits for the next call)."""
        text = self._pastes.feed(self._decode(data, final=final))
        out: list[Message] = []
        position = 0
        while position < len(text):
            if self._paste is None:
                start = text.find(PASTE_START, position)
                if start < 0:
                    out += self._parser.feed(text[position:])
                    break
                if start > position:
                    out += self._parser.feed(text[position:start])
                self._paste = []
                position = start + len(PASTE_START)
            else:
                # Inside a paste the filter lets no ESC through but the end marker's (and holds
                # back one the read cut).
                end = text.find(PASTE_END, position)
                if end < 0:
                    self._paste.append(text[position:])
                    break
                self._paste.append(text[position:end])
                out.append(events.Paste("".join(self._paste).replace("\x00", "")))  # as Textual does
                self._paste = None
                position = end + len(PASTE_END)
        return out

    def tick(self) -> list[Message]:
        """The events a timeout completes (a lone Escape, after a moment)."""
        return list(self._parser.tick())

    def timeout(self) -> float | None:
        """Seconds until :meth:`tick` has something to do; None while nothing waits for time."""
        pending = self._parser._timeout_time
        return None if pending is None else max(0.0, pending - get_time())

    def close(self) -> None:
        """End the stream (what is pending is dropped, as Textual does on exit)."""
        try:
            for _event in self._parser.feed(""):
                pass
        except (EOFError, ParseError):
            pass


def read_until_stopped(fileno: int, wake: WakingEvent, keys: KeyInput, dispatch: Callable[[Message], None],
                       terminal_gone: Callable[[], None]) -> None:
    """The input thread's loop: read ``fileno`` and ``dispatch`` its events until ``wake`` is set
    (then a last short read); ``terminal_gone`` when reading it gives end of file."""
    wake_r = wake.renew()
    selector = selectors.SelectSelector()
    selector.register(fileno, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)

    def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> bool:
        """Parse what arrived; False once the terminal is gone (a read at end of file)."""
        ready = [(key, mask) for key, mask in ready if key.fd == fileno]
        for index, (_key, mask) in enumerate(ready):
            if mask & selectors.EVENT_READ:
                data = os.read(fileno, READ_SIZE)
                if not data:
                    return False
                for event in keys.feed(data, final=final and index == len(ready) - 1):
                    dispatch(event)
        for event in keys.tick():
            dispatch(event)
        return True

    try:
        while not wake.is_set():
            # No timeout unless the parser waits for one (a lone Escape becomes a key after a
            # moment): the thread sleeps while nothing is typed.
            if not process(selector.select(keys.timeout())):
                # Textual's loop went on selecting a closed terminal: a core's worth of CPU for
                # as long as the app lived on (stuck writing to that terminal, say).
                terminal_gone()
                return
        selector.unregister(wake_r)
        selector.unregister(fileno)
        process(selector.select(0.1), final=True)
    finally:
        selector.close()
        keys.close()

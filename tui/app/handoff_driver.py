"""The terminal driver of the interactive app: Textual's own, plus two things at start-up.

- It adopts the :class:`~baton.tui.app.instant_frame.InstantFrame` painted before Textual loaded: the
  bytes typed into that frame are parsed first, as if typed into the app, and the terminal
  settings restored on exit are the ones from before the frame.
- It holds key and paste events until the app says its editor has focus
  (:meth:`HandoffDriver.release_held_keys`); Textual would otherwise deliver keys typed while the
  first screen is being built to no widget at all.

Its input thread sleeps until a byte arrives (Textual's wakes ten times a second to look for a
lone Escape's timeout even when nothing was typed): an idle app costs no CPU.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from typing import TYPE_CHECKING

from textual import events
from textual._time import get_time
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message
from textual.message_pump import MessagePump

from baton.tui.app.instant_frame import InstantFrame

if TYPE_CHECKING:
    from textual.app import App


class _WakingEvent(threading.Event):
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


class HandoffDriver(LinuxDriver):
    """See the module docstring; ``frame`` is set on the class by :func:`driver_for`."""

    frame: InstantFrame | None = None

    def __init__(
        self, app: App[int], *, debug: bool = False, mouse: bool = True, size: tuple[int, int] | None = None
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._hold_lock = threading.Lock()
        self._held: list[Message] | None = []
        self._adopted = False
        self.exit_event = _WakingEvent()

    def start_application_mode(self) -> None:
        frame = None if self._adopted else self.frame
        self._adopted = True
        if frame is None:
            super().start_application_mode()
            return
        typed = frame.take_over()
        if typed:
            # Before the input thread starts, so the bytes typed meanwhile come after these.
            for event in _parse(typed):
                self.process_message(event)
        super().start_application_mode()
        self.attrs_before = frame.original_attrs  # the frame's raw mode is not what to restore

    def run_input_thread(self) -> None:
        """Textual's input loop, with ESC bytes inside a bracketed paste dropped before parsing
        (see :mod:`baton.tui.app.paste_filter`)."""
        import selectors
        from codecs import getincrementaldecoder

        from textual._parser import ParseError
        from textual._xterm_parser import XTermParser

        from baton.tui.app.paste_filter import PasteEscapeFilter

        wake = self.exit_event
        assert isinstance(wake, _WakingEvent)
        wake_r = wake.renew()
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(wake_r, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        pastes = PasteEscapeFilter()
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> bool:
            """Parse what arrived; False once the terminal is gone (a read at end of file)."""
            ready = [(key, mask) for key, mask in ready if key.fd == self.fileno]
            for index, (_key, mask) in enumerate(ready):
                if mask & selectors.EVENT_READ:
                    data = decode(os.read(self.fileno, 4096), final=final and index == len(ready) - 1)
                    if not data:
                        return False
                    for event in parser.feed(pastes.feed(data)):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)
            return True

        try:
            while not self.exit_event.is_set():
                # No timeout unless the parser waits for one (a lone Escape becomes a key
                # after a moment): the thread sleeps while nothing is typed.
                pending = parser._timeout_time
                timeout = None if pending is None else max(0.0, pending - get_time())
                if not process(selector.select(timeout)):
                    # Textual's loop went on selecting a closed terminal: a core's worth of CPU
                    # for as long as the app lived on (stuck writing to that terminal, say).
                    self.terminal_gone()
                    return
            selector.unregister(wake_r)
            selector.unregister(self.fileno)
            process(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass

    def close(self) -> None:
        super().close()
        wake = self.exit_event
        if isinstance(wake, _WakingEvent):
            wake.close()

    def terminal_gone(self) -> None:
        """The terminal hung up (reading it gives end of file): end baton as a hangup does, also
        where no SIGHUP arrives."""
        os.kill(os.getpid(), signal.SIGHUP)

    def process_message(self, message: Message) -> None:
        if isinstance(message, (events.Key, events.Paste)):
            with self._hold_lock:
                if self._held is not None:
                    self._held.append(message)
                    return
        super().process_message(message)

    async def release_held_keys(self, app: App[int]) -> None:
        """Deliver the held keys one by one, each once ``app`` has handled the one before (in a
        burst Textual can let a key handled by a binding, such as Backspace or Left, overtake
        the printable key typed before it), then stop holding. Run it as a task of its own."""
        while True:
            with self._hold_lock:
                if not self._held:
                    self._held = None
                    return
                message = self._held.pop(0)
            super().process_message(message)
            await _settled(app)


async def _settled(app: App[int], timeout: float = 0.5) -> None:
    """Wait until the app, its screen and the focused widget's chain have empty queues (seen
    twice, a moment apart: a handler may be between two awaits)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    quiet = 0
    while quiet < 2 and loop.time() < deadline:
        await asyncio.sleep(0.002)
        focused = app.focused
        pumps: list[MessagePump] = [app, app.screen, *(focused.ancestors_with_self if focused is not None else [])]
        quiet = quiet + 1 if all(pump._message_queue.empty() for pump in pumps) else 0


def _parse(typed: bytes) -> list[Message]:
    """The events Textual makes of ``typed`` (a trailing lone Escape included)."""
    from textual._xterm_parser import XTermParser

    parser = XTermParser()
    text = typed.decode("utf-8", errors="replace")
    events_ = list(parser.feed(text))
    try:
        events_ += list(parser.feed(""))  # the end: a pending Escape becomes a key
    except Exception:  # a parser that cannot end cleanly: keep what it made
        pass
    return events_


def driver_for(frame: InstantFrame | None) -> type[HandoffDriver]:
    """A driver class adopting ``frame`` (None: only holding keys until the editor has focus)."""
    return type("HandoffDriver", (HandoffDriver,), {"frame": frame})

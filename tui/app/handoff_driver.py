"""The terminal drivers of the interactive app: Textual's own, with input that sleeps until a key
arrives (:mod:`baton.tui.app.quiet_input`: an idle app costs no CPU, full screen or ``--inline``),
plus, at start-up:

- adopting the :class:`~baton.tui.app.instant_frame.InstantFrame` painted before Textual loaded:
  the bytes typed into that frame go through the same input as the bytes read afterwards (Textual's
  parser, behind the paste filter), as if typed into the app; the terminal settings restored on
  exit are the ones from before the frame;
- holding key and paste events until the app says its editor has focus
  (:meth:`KeyHolder.release_held_keys`, also ``--inline``): Textual would otherwise deliver keys typed while the
  first screen is being built to no widget at all. Until the session is open the keys go on
  through that queue, and a key that needs the session (Shift+Tab, Ctrl+R...) waits there for it,
  with the keys typed after it: a binding typed early acts once it can, in order, instead of being
  dropped.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.drivers.linux_inline_driver import LinuxInlineDriver
from textual.message import Message
from textual.message_pump import MessagePump

from baton.tui.app.instant_frame import InstantFrame
from baton.tui.app.quiet_input import KeyInput, WakingEvent, read_until_stopped

if TYPE_CHECKING:
    from textual.app import App

JUMPS_THE_QUEUE = frozenset({"ctrl+c"})
"""Keys delivered at once even while an earlier key waits for the session: quitting must not wait
for start-up."""


class KeyHolder(Driver):
    """Holds key and paste events from the start until :meth:`release_held_keys` lets them go
    (put before Textual's driver class among the bases)."""

    def _init_holding(self) -> None:
        self._hold_lock = threading.Lock()
        self._held: list[Message] | None = []
        self._on_held: Callable[[], None] | None = None

    def process_message(self, message: Message) -> None:
        if isinstance(message, (events.Key, events.Paste)):
            with self._hold_lock:
                holding = self._held is not None
                if self._held is not None:
                    self._held.append(message)
                notify = self._on_held
            if holding:
                if notify is not None:
                    notify()
                return
        super().process_message(message)

    async def release_held_keys(self, app: App[int], waits: Callable[[Message], bool] | None = None,
                                opened: asyncio.Event | None = None) -> None:
        """Deliver the held keys one by one, each once ``app`` has handled the one before (in a
        burst Textual can let a key handled by a binding, such as Backspace or Left, overtake
        the printable key typed before it). Until ``opened`` is set, keys typed meanwhile are held
        too, and a key for which ``waits`` says so waits for ``opened`` with every key after it
        (but Ctrl+C). Then stop holding. Run it as a task of its own."""
        loop = asyncio.get_running_loop()
        arrived = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(arrived.set)

        self._on_held = wake
        try:
            while True:
                with self._hold_lock:
                    held = self._held
                    assert held is not None
                    is_open = opened is None or opened.is_set()
                    if not held and is_open:
                        self._held = None
                        return
                    message = held[0] if held else None
                    if message is not None and not is_open and waits is not None and waits(message):
                        message = next((m for m in held if _jumps(m)), None)
                    if message is not None:
                        held.remove(message)
                    arrived.clear()
                if message is not None:
                    super().process_message(message)
                    await _settled(app)
                    continue
                waiters = [asyncio.ensure_future(arrived.wait())]
                if opened is not None:
                    waiters.append(asyncio.ensure_future(opened.wait()))
                try:
                    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waiters:
                        waiter.cancel()
        finally:
            self._on_held = None


class HandoffDriver(KeyHolder, LinuxDriver):
    """See the module docstring; ``frame`` is set on the class by :func:`driver_for`."""

    frame: InstantFrame | None = None

    def __init__(
        self, app: App[int], *, debug: bool = False, mouse: bool = True, size: tuple[int, int] | None = None
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._init_holding()
        self._adopted = False
        self._keys: KeyInput | None = None
        self.exit_event = WakingEvent()

    def start_application_mode(self) -> None:
        frame = None if self._adopted else self.frame
        self._adopted = True
        if frame is None:
            super().start_application_mode()
            return
        typed = frame.take_over()
        self._keys = KeyInput(self._debug)
        if typed:
            # Before the input thread starts (it goes on with the same parser), so the bytes
            # typed meanwhile come after these, and a paste cut by the hand-over stays one.
            for event in self._keys.feed(typed):
                self.process_message(event)
        super().start_application_mode()
        self.attrs_before = frame.original_attrs  # the frame's raw mode is not what to restore

    def run_input_thread(self) -> None:
        """Textual's input loop, sleeping until a byte arrives, with the paste filter."""
        keys, self._keys = self._keys or KeyInput(self._debug), None
        read_until_stopped(self.fileno, _waking(self.exit_event), keys, self.process_message, self.terminal_gone)

    def close(self) -> None:
        super().close()
        _waking(self.exit_event).close()

    def terminal_gone(self) -> None:
        """The terminal hung up (reading it gives end of file): end baton as a hangup does, also
        where no SIGHUP arrives."""
        import os

        os.kill(os.getpid(), signal.SIGHUP)


class QuietInlineDriver(KeyHolder, LinuxInlineDriver):
    """Textual's ``--inline`` driver, with input that sleeps until a byte arrives (Textual's
    wakes ten times a second), the paste filter, and keys held as :class:`HandoffDriver` holds
    them (there is no instant frame inline)."""

    def __init__(
        self, app: App[int], *, debug: bool = False, mouse: bool = True, size: tuple[int, int] | None = None
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        self._init_holding()
        self.exit_event = WakingEvent()

    def run_input_thread(self) -> None:
        """Textual's inline input loop (a cursor position report moves the app's origin), sleeping
        until a byte arrives."""

        def dispatch(event: Message) -> None:
            if isinstance(event, events.CursorPosition):
                self.cursor_origin = (event.x, event.y)
            else:
                self.process_message(event)

        read_until_stopped(self.fileno, _waking(self.exit_event), KeyInput(self._debug), dispatch, self._gone)

    def _gone(self) -> None:
        import os

        os.kill(os.getpid(), signal.SIGHUP)

    def close(self) -> None:
        super().close()
        _waking(self.exit_event).close()


def _waking(event: threading.Event) -> WakingEvent:
    assert isinstance(event, WakingEvent)
    return event


def _jumps(message: Message) -> bool:
    return isinstance(message, events.Key) and message.key in JUMPS_THE_QUEUE


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


def driver_for(frame: InstantFrame | None) -> type[HandoffDriver]:
    """A driver class adopting ``frame`` (None: only holding keys until the editor has focus)."""
    return type("HandoffDriver", (HandoffDriver,), {"frame": frame})

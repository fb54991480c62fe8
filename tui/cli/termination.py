"""SIGTERM and SIGHUP (a closed terminal) in every mode, and SIGINT before a mode took it over.

From the first line of :func:`tui.cli.main` on, :func:`install_early` routes SIGTERM and SIGHUP
to a clean exit (``128 + signal``); SIGINT is Python's :class:`KeyboardInterrupt`, which the
entry point turns into one line on stderr — never a traceback, never a silent exit.

Once a session is open, :class:`TerminationGuard` takes SIGTERM and SIGHUP over inside the event
loop: it stops every process baton started at once (:func:`tools.processes.signal_all`), aborts
the run (the partial message is recorded, so the transcript is saved), tells the interactive app
to quit (:func:`on_terminate`), and the mode then ends normally; the exit code is
``128 + signal``. Whatever the exit, :func:`tools.processes.kill_all` runs last. Should the
orderly exit hang (the UI writing to a terminal that is gone), a watchdog ends baton after
:data:`EXIT_DEADLINE_SECONDS` all the same.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

TERMINATING_SIGNALS: tuple[int, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)

_listeners: list[Callable[[int], None]] = []


class Terminated(SystemExit):
    """Raised by the early handler: SIGTERM or SIGHUP arrived before a session was open."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


def install_early() -> None:
    """The first thing baton does: SIGTERM/SIGHUP exit cleanly (SIGINT already raises
    :class:`KeyboardInterrupt`, which :func:`tui.cli.main` reports in one line)."""

    def early(signum: int, _frame: object) -> None:
        raise Terminated(signum)

    for signum in TERMINATING_SIGNALS:
        try:
            if signal.getsignal(signum) != signal.SIG_IGN:  # ``nohup baton`` keeps ignoring SIGHUP
                signal.signal(signum, early)
        except (OSError, ValueError):  # not the main thread
            pass


def on_terminate(listener: Callable[[int], None]) -> Callable[[], None]:
    """Call ``listener(signum)`` when SIGTERM/SIGHUP arrives while a session runs (the
    interactive app quits this way); returns a function that removes it."""
    _listeners.append(listener)

    def remove() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return remove


class TerminationGuard:
    """SIGTERM/SIGHUP while a session is open: see the module docstring."""

    def __init__(self, abort: Callable[[], None]) -> None:
        self._abort = abort
        self.signum: int | None = None
        self._installed: list[int] = []

    @property
    def exit_code(self) -> int | None:
        """``128 + signal`` once a terminating signal arrived, else ``None``."""
        return None if self.signum is None else 128 + self.signum

    def install(self) -> None:
        """Take SIGTERM and SIGHUP over in the running loop."""
        import asyncio

        loop = asyncio.get_running_loop()
        for signum in TERMINATING_SIGNALS:
            try:
                loop.add_signal_handler(signum, self._handle, signum)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            self._installed.append(signum)

    def uninstall(self) -> None:
        """Give the signals back to the early handler (the session is closed)."""
        import asyncio

        loop = asyncio.get_running_loop()
        for signum in self._installed:
            loop.remove_signal_handler(signum)
        self._installed.clear()
        install_early()

    def finish(self, code: int) -> int:
        """The exit code: ``code``, or ``128 + signal`` (said on stderr) after SIGTERM/SIGHUP."""
        if self.signum is None:
            return code
        import sys

        try:  # after SIGHUP there may be no terminal left to tell
            print(f"baton: terminated by {signal.Signals(self.signum).name}", file=sys.stderr)
        except (OSError, ValueError):
            pass
        return 128 + self.signum

    def _handle(self, signum: int) -> None:
        from baton.tools.processes import signal_all

        first = self.signum is None
        self.signum = self.signum or signum
        signal_all(signal.SIGTERM)
        if not first:
            return
        self._abort()
        _start_watchdog(128 + signum)
        for listener in list(_listeners):
            try:
                listener(signum)
            except Exception:  # a broken listener must not keep baton alive
                pass


EXIT_DEADLINE_SECONDS = 5.0
"""After SIGTERM/SIGHUP baton ends within this long even if closing hangs (a terminal that is
gone can block the UI's shutdown): every process it started is killed, then it exits."""


def _start_watchdog(code: int) -> None:
    """A daemon thread that ends the process if the orderly exit has not happened in time
    (messages are saved as they end, so nothing acknowledged is lost)."""
    import os
    import threading

    def expire() -> None:
        from baton.tools.processes import kill_all

        try:
            kill_all(grace=0.2)
        finally:
            os._exit(code)

    timer = threading.Timer(EXIT_DEADLINE_SECONDS, expire)
    timer.daemon = True
    timer.start()

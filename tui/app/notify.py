"""A word when the agent needs the user: a run ended, or an approval waits.

The app notifies when the terminal does not have the focus (Textual's ``app_focus``, from the
terminal's focus reporting) or the run has lasted at least ``notify.afterSeconds``. How, by the
``notify.method`` setting:

- ``auto``: a desktop notification through the terminal where it is known to show one — OSC 9
  (iTerm2, WezTerm, ghostty, kitty, Windows Terminal) or OSC 777 (VTE terminals such as GNOME
  Terminal, foot, urxvt) — and the bell elsewhere (inside tmux or screen too: they pass a bell on);
- ``osc``: OSC 777 on the terminals that take it, OSC 9 on every other; ``bell``; ``off``;
- anything else is a shell command, run with the message as ``$1`` and in
  ``BATON_NOTIFY_MESSAGE`` (outside the sandbox, in the session's environment without keys, ended
  after :data:`COMMAND_TIMEOUT_SECONDS`). Only the user's own settings may name one
  (:mod:`sessions.setting_trust`: ``notify`` is ``user_only``).

The message is baton's own words; whatever part of it comes from elsewhere (a tool's name, the
folder's name) is cleaned of every control character, so nothing reaches the terminal as a
sequence of its own.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from baton.sessions.settings import NOTIFY_METHODS, NotifySettings

if TYPE_CHECKING:
    from baton.tui.app.baton_app import BatonApp

Delivery = Literal["osc9", "osc777", "bell", "off", "command"]
COMMAND_TIMEOUT_SECONDS = 10.0
MESSAGE_LIMIT = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_OSC9_PROGRAMS = ("iterm.app", "wezterm", "ghostty", "kitty")


def clean_message(text: str) -> str:
    """``text`` without control characters (no ESC, BEL, C1), on one line, at most
    :data:`MESSAGE_LIMIT` characters."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def _takes_osc777(env: Mapping[str, str]) -> bool:
    term = env.get("TERM", "")
    return bool(env.get("VTE_VERSION")) or term.startswith(("foot", "rxvt"))


def _takes_osc9(env: Mapping[str, str]) -> bool:
    program = env.get("TERM_PROGRAM", "").lower()
    return (program in _OSC9_PROGRAMS or "kitty" in env.get("TERM", "") or bool(env.get("WT_SESSION"))
            or bool(env.get("KITTY_WINDOW_ID")))


def delivery_for(method: str, env: Mapping[str, str]) -> Delivery:
    """How ``method`` notifies in a terminal described by ``env`` (see the module docstring)."""
    if method not in NOTIFY_METHODS:
        return "command"
    if method in ("bell", "off"):
        return "bell" if method == "bell" else "off"
    multiplexed = bool(env.get("TMUX")) or env.get("TERM", "").startswith("screen")
    if method == "auto" and multiplexed:
        return "bell"
    if _takes_osc777(env):
        return "osc777"
    if method == "osc" or _takes_osc9(env):
        return "osc9"
    return "bell"


def sequence_for(delivery: Delivery, message: str) -> str:
    """The bytes written to the terminal for ``delivery`` ("" for ``off`` and ``command``)."""
    message = clean_message(message)
    if delivery == "osc9":
        return f"\x1b]9;{message}\x07"
    if delivery == "osc777":
        return f"\x1b]777;notify;baton;{message}\x07"
    if delivery == "bell":
        return "\x07"
    return ""


class Notifier:
    """The app's notifications (see the module docstring)."""

    def __init__(self, app: BatonApp) -> None:
        self.app = app
        self._run_started: float | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.sent: list[tuple[Delivery, str]] = []
        """What was sent, newest last (the last 20; ``/session``-style inspection and tests)."""

    def run_started(self) -> None:
        """A run began (its length decides whether its end is worth a word)."""
        self._run_started = time.monotonic()

    def run_ended(self, summary: str) -> None:
        """A run ended: notify when the user is away or it took long."""
        started, self._run_started = self._run_started, None
        if self._worth_it(started):
            self.notify(f"baton: {summary}")

    def approval_waiting(self, tool: str) -> None:
        """A tool call waits for the user's answer."""
        if self._worth_it(self._run_started):
            self.notify(f"baton: approval needed for {tool}")

    def _worth_it(self, started: float | None) -> bool:
        if not self.app.app_focus:
            return True
        if started is None:
            return False
        return time.monotonic() - started >= self._settings().after_seconds

    def _settings(self) -> NotifySettings:
        return self.app.session.settings.notify

    def notify(self, message: str) -> None:
        """Send ``message`` the configured way."""
        method = self._settings().method
        delivery = delivery_for(method, os.environ)
        message = clean_message(message)
        self.sent = [*self.sent[-19:], (delivery, message)]
        if delivery == "off":
            return
        if delivery == "command":
            task = asyncio.ensure_future(self._run_command(method, message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        self._write(sequence_for(delivery, message))

    def _write(self, sequence: str) -> None:
        driver = getattr(self.app, "_driver", None)
        if driver is None or self.app.is_headless:
            return
        driver.write(sequence)
        driver.flush()

    async def _run_command(self, command: str, message: str) -> None:
        from baton.tools.processes import register_group
        from baton.tools.shell import kill_group, shell_command, start_command

        env = {**self.app.session.tool_env.build(), "BATON_NOTIFY_MESSAGE": message}
        argv = [*shell_command(command), "baton-notify", message]
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                process = await start_command(argv, str(self.app.session.cwd), env, null)
            finally:
                os.close(null)
        except OSError as exc:
            self.app.notice(f"⚠ The notify command could not start: {clean_message(str(exc))}", "warning")
            return
        if process.pid is not None:
            register_group(process.pid)
        try:
            await asyncio.wait_for(process.wait(), COMMAND_TIMEOUT_SECONDS)
        except TimeoutError:
            if process.pid is not None:
                await kill_group(process.pid)

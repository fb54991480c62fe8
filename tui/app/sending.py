"""What happens to what the user sends (Enter in the editor).

A slash command runs; ``# text`` adds a line to a memory file (AGENTS.md, CLAUDE.md: the user
picks which); a ``!command`` runs in the shell at once, even while the agent works; a
prompt goes to the session; while the agent works (or ``/compact`` runs), a message is queued
instead (steering; a follow-up with Tab or Alt+Enter), and the queue line shows it once the
session reports it.
Prompts sent while the app is still starting wait here until the session is open.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from baton.tui.app.commands import dispatch, parse_command
from baton.tui.app.render import one_line

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent
    from baton.tui.app.baton_app import BatonApp


class Sender:
    """Sends what the user typed (see the module docstring)."""

    def __init__(self, app: BatonApp) -> None:
        self.app = app
        self.waiting: list[tuple[str, bool]] = []
        """Prompts sent while starting, as (text, follow-up), sent once the session is open."""

    def submit(self, text: str, follow_up: bool) -> None:
        """Send ``text`` (``follow_up``: queue it after the run rather than steer it)."""
        app = self.app
        if not app.is_open:  # still starting: keep it for when the session is open
            self.waiting.append((text, follow_up))
            app.activity.set_queue([("waiting for start-up", t) for t, _ in self.waiting])
            return
        parsed = parse_command(text)
        if parsed is not None:
            app.run_worker(dispatch(app, parsed), group="command", exit_on_error=False)
            return
        from baton.sessions.memory import memory_text

        memory = memory_text(text)
        if memory is not None:
            app.run_worker(self._remember(memory, text), group="command", exit_on_error=False)
            return
        if text.lstrip().startswith("!") and text.strip() not in ("!", "!!"):
            self.send(text, None)  # shell commands run at once, even while the agent works
            return
        if app.busy.queues_messages:
            self.queue(text, follow_up=follow_up)
            return
        if app.is_busy:
            app.notice("Wait for the current command to finish (Esc aborts).", "warning")
            app.editor.set_text(text)
            return
        self.send(text, None)

    def queue(self, text: str, *, follow_up: bool) -> None:
        """Queue ``text`` for the working agent (the session's event shows it in the queue line)."""
        if follow_up:
            self.app.session.follow_up(text)
        else:
            self.app.session.steer(text)

    def release_waiting(self) -> None:
        """The session is open: send what waited for it, in order."""
        waiting, self.waiting = self.waiting, []
        for text, follow_up in waiting:
            self.app.call_after_refresh(self.submit, text, follow_up)
        if waiting:
            self.app.activity.set_queue([])

    def take_back(self) -> list[str]:
        """Alt+Up: the queued messages (or, while starting, the waiting prompts), removed."""
        if not self.app.is_open:
            texts = [text for text, _ in self.waiting]
            self.waiting.clear()
            self.app.activity.set_queue([])
            return texts
        return self.app.session.dequeue()  # the queue line empties with the session's event

    def send(self, text: str, images: list[ImageContent] | None, *, attach_files: bool = True) -> None:
        """Start a prompt (or run a ``!command``); ``attach_files``: attach the files ``@``-named."""
        app = self.app
        stripped = text.lstrip()
        if stripped.startswith("!&") and not images and stripped[2:].strip():
            app.run_worker(self._run_in_background(stripped[2:].strip()), group="bash", exit_on_error=False)
            return
        if stripped.startswith("!") and not images:
            exclude = stripped.startswith("!!")
            command = stripped[2:] if exclude else stripped[1:]
            if command.strip():
                app.run_worker(self._run_bash(command.strip(), exclude), group="bash", exit_on_error=False)
                return
        if attach_files:
            from baton.tui.cli.attachments import AttachmentError, attach

            try:
                text, attached, _ = attach(text, app.cwd)
            except AttachmentError as exc:
                app.notice(f"⚠ {exc}. Nothing was sent; the prompt is back in the editor.", "warning")
                app.editor.set_text(text)
                return
            images = [*(images or []), *attached] or None
        # Busy from now, not from when the worker starts: a second Enter right after the first
        # (fast typing, a paste without bracketed paste) must queue, not start a second prompt.
        app.set_busy(replace(app.busy, prompting=True))
        app.run_worker(self._prompt(text, images), group="prompt", exit_on_error=False)

    async def _prompt(self, text: str, images: list[ImageContent] | None) -> None:
        app = self.app
        app.activity.start()
        app.transcript.follow()
        try:
            await app.session.prompt(text, images=images)
        except Exception as exc:
            app.notice(f"Could not send the prompt: {one_line(str(exc) or type(exc).__name__, 300)}", "error")
        finally:
            app.set_busy(replace(app.busy, prompting=False))
            app.refresh_status()

    async def _remember(self, memory: str, typed: str) -> None:
        """``# text``: ask which memory file, then add the line there."""
        from baton.sessions.memory import MemoryFileError, memory_files
        from baton.tui.actions.text import home_relative
        from baton.tui.app.widgets.pickers import ListPicker, PickerItem, picker_label

        app = self.app
        items = [PickerItem(picker_label((target.label, "bold"), "  ", (home_relative(target.path), "$text-muted")),
                            target, target.label) for target in memory_files(app.session.cwd)]
        target = await app.push_screen_wait(ListPicker(f"Remember “{one_line(memory, 60)}” in…", items,
                                                       filterable=False))
        if target is None:
            app.editor.set_text(typed)
            return
        try:
            app.session.remember(target, memory)
        except MemoryFileError as exc:
            app.notice(f"Not remembered: {one_line(str(exc), 200)}", "error")
            app.editor.set_text(typed)
            return
        app.notice(f"Remembered in {home_relative(target.path)} (the model sees it from the next message).",
                   "success")

    async def _run_in_background(self, command: str) -> None:
        """``!& command``: start it as a background command of the session (``/ps`` shows it)."""
        app = self.app
        try:
            process = await app.session.background.run_user(command)
        except Exception as exc:
            app.notice(f"Could not start it in the background: {one_line(str(exc), 300)}", "error")
            return
        app.notice(f"Started {process.id} in the background: {one_line(command, 120)} (/ps to see it)", "success")
        app.refresh_status()

    async def _run_bash(self, command: str, exclude: bool) -> None:
        app = self.app
        app.set_busy(replace(app.busy, shell_commands=app.busy.shell_commands + 1))
        app.activity.start("Running shell command")
        app.transcript.follow()
        view = app.transcript.add_bash(command, exclude_from_context=exclude)
        started = time.monotonic()
        try:
            result = await app.session.run_bash(command, exclude_from_context=exclude, on_output=view.append_output)
        except Exception as exc:
            view.set_result(f"{type(exc).__name__}: {exc}", None, cancelled=True)
            app.notice(f"Shell command failed: {one_line(str(exc), 300)}", "error")
        else:
            view.set_result(result.output, result.exit_code, cancelled=result.cancelled,
                            duration=time.monotonic() - started)
            app.transcript.finish_bash(view, result)
        finally:
            app.set_busy(replace(app.busy, shell_commands=app.busy.shell_commands - 1))
            app.refresh_status()

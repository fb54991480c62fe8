"""The interactive app: a thin Textual ``App`` wiring one ``CodingSession`` to the widgets.

Entry points for the CLI: :func:`run_interactive` (blocking) and :func:`run_interactive_async`
(inside a running event loop). ``BatonApp(session)`` is constructible on its own for pilot tests.
Widgets own their state (``tui/widgets``); slash commands live in ``tui/commands.py``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on
from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen

from baton import __version__
from baton.agent.events import AgentEndEvent, AgentStartEvent, MessageEndEvent, MessageStartEvent
from baton.providers.messages import AssistantMessage, UserMessage
from baton.sessions.events import (
    AutoCompactionEndEvent,
    AutoCompactionStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    ModelChangeEvent,
    SessionChangedEvent,
    ThinkingLevelChangeEvent,
)
from baton.tui.commands import command_list, dispatch, parse_command
from baton.tui.completer import Completer
from baton.tui.render import one_line
from baton.tui.widgets.completion import CompletionList
from baton.tui.widgets.editor import PromptEditor
from baton.tui.widgets.messages import NoticeLevel, retry_notice, user_text
from baton.tui.widgets.status import ActivityBar, StartupHeader, StatusBar, git_branch, is_demo, status_from_session
from baton.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from baton.providers.models import Model

QUIT_WINDOW = 0.5
"""Seconds within which a second Ctrl+C quits."""


class BatonApp(App[int]):
    """The interactive terminal UI for one coding session."""

    CSS_PATH = "theme.tcss"
    TITLE = "baton"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Abort / clear / quit", show=False, priority=True),
        Binding("ctrl+l", "pick_model", "Model", show=False, priority=True),
        Binding("ctrl+p", "cycle_model(1)", "Next model", show=False, priority=True),
        Binding("ctrl+shift+p", "cycle_model(-1)", "Previous model", show=False, priority=True),
        Binding("shift+tab", "cycle_thinking", "Thinking level", show=False, priority=True),
        Binding("ctrl+t", "toggle_thinking", "Show thinking", show=False, priority=True),
        Binding("ctrl+o", "toggle_tools", "Expand tools", show=False, priority=True),
    ]

    def __init__(
        self,
        session: Any,
        *,
        initial_prompt: str | None = None,
        initial_images: list[Any] | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self._initial_prompt = initial_prompt
        self._initial_images = initial_images
        self.cwd = Path(session.cwd)
        self._branch = git_branch(self.cwd)
        self._queue: list[tuple[str, str]] = []
        self._busy = 0
        self._prompting = False
        self._compaction_reported = False
        self._last_interrupt = 0.0
        self._show_thinking = False
        self._expand_tools = False
        self._unsubscribe: Any = None
        self.transcript = Transcript(id="transcript", cwd=self.cwd, header=self._make_header)
        self.activity = ActivityBar(id="activity")
        self.completion = CompletionList(id="completion")
        self.completer = Completer(self.cwd, command_list(), self._argument_sources())
        self.editor = PromptEditor(
            id="editor", completer=self.completer, completion=self.completion, history=self._history()
        )
        self.status_bar = StatusBar(id="status")
        self.transcript.on_flush = self.activity.tick

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.transcript
        with Vertical(id="bottom"):
            yield self.activity
            yield self.completion
            yield self.editor
            yield self.status_bar

    def _make_header(self) -> StartupHeader:
        return StartupHeader(
            version=__version__,
            model=self.session.model,
            cwd=self.cwd,
            context_files=list(getattr(self.session, "context_files", []) or []),
        )

    def _history(self) -> list[str]:
        out = []
        for message in getattr(self.session, "messages", []) or []:
            if getattr(message, "role", None) == "user":
                text = user_text(message.content)
                if text.strip():
                    out.append(text)
        return out

    def _argument_sources(self) -> dict[str, Any]:
        from baton.providers.models import THINKING_LEVELS

        def models() -> list[tuple[str, str]]:
            try:
                return [(m.ref, m.name) for m in self.session.available_models()]
            except Exception:
                return []

        return {"model": models, "thinking": lambda: [(level, "") for level in THINKING_LEVELS]}

    async def on_mount(self) -> None:
        self.completer.on_files_ready = lambda: self.call_from_thread(self.editor.refresh_completion)
        self._unsubscribe = self.session.subscribe(self._on_session_event)
        self.editor.focus()
        messages = list(getattr(self.session, "messages", []) or [])
        if messages:
            await self.transcript.load_history(messages)
        self._startup_warnings()
        self.refresh_status()
        if self._initial_prompt or self._initial_images:
            text, images = self._initial_prompt or "", self._initial_images
            self._initial_prompt = self._initial_images = None
            self.call_after_refresh(self._send, text, images)

    def _startup_warnings(self) -> None:
        """Say once what went wrong while opening (bad settings, skipped session lines,
        models.json errors) and whether the model can be reached at all (no API key)."""
        problems = [str(w) for w in getattr(self.session, "warnings", []) or []]
        try:
            from baton.providers.catalog import models_json_errors

            problems += [f"models.json: {e}" for e in models_json_errors()]
        except Exception:
            pass
        for problem in problems:
            self.notice(f"⚠ {one_line(problem, 300)}", "warning")
        self._warn_if_no_key()

    def _warn_if_no_key(self) -> None:
        model = self.session.model
        options = getattr(self.session, "options", None)
        extra = {m.ref for m in getattr(options, "extra_models", None) or []}
        if is_demo(model) or not model.base_url or model.ref in extra or getattr(options, "api_key", None):
            return  # embedded models (tests, faux) bring their own transport
        try:
            from baton.providers.catalog import env_var_for, has_api_key

            if model.is_local or has_api_key(model.provider):
                return
            variable = env_var_for(model.provider)
        except Exception:
            return
        self.notice(f"⚠ No API key for {model.provider}: set {variable} (or apiKey in ~/.baton/models.json), "
                    "or pick another model with /model.", "warning")

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- state -----------------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a prompt, compaction or shell command is running."""
        return self._busy > 0 or bool(getattr(self.session, "is_running", False))

    def notice(self, content: Content | str, level: NoticeLevel = "info") -> None:
        """Add a notice to the transcript (untrusted strings are shown as plain text)."""
        self.transcript.add_notice(content, level)

    def refresh_status(self) -> None:
        """Recompute the status bar from the session."""
        try:
            info = status_from_session(self.session, branch=self._branch)
        except Exception as exc:  # the status bar must never take the app down
            self.log.warning(f"status unavailable: {exc!r}")
            return
        self.status_bar.set_info(info)

    def reload_transcript(self) -> None:
        """Rebuild the transcript from the session's messages (after /new, /resume, /fork,
        /tree and compactions: the session reports them with events)."""
        self.transcript.reset(list(self.session.messages))
        self.refresh_status()

    # -- session events ----------------------------------------------------------------------------

    def _on_session_event(self, event: Any) -> None:
        self.transcript.handle_event(event)
        match event:
            case MessageStartEvent():
                if isinstance(event.message, UserMessage) and self._queue:
                    self._delivered(user_text(event.message.content))
            case MessageEndEvent(message=AssistantMessage()):
                self.refresh_status()
            case AgentStartEvent():
                self.editor.running = True
                self.activity.start()
            case AgentEndEvent():
                if not self._prompting:
                    self.editor.running = False
                if not self._busy:
                    self.activity.stop()
                self._sync_queue()
                self.refresh_status()
            case ModelChangeEvent() | ThinkingLevelChangeEvent():
                self.refresh_status()
            case AutoCompactionStartEvent():
                why = {"overflow": "the context overflowed", "manual": "requested"}.get(
                    event.reason, "the context is filling up")
                self.notice(f"⟳ Compacting the conversation ({why})…")
                self.activity.start("Compacting")
            case AutoCompactionEndEvent():
                self._compaction_ended(event)
            case AutoRetryStartEvent():
                self.notice(retry_notice(event.attempt, event.max_attempts, event.delay_ms, event.error_message or ""),
                            "warning")
            case AutoRetryEndEvent(success=False):
                self.notice(f"Retries exhausted: {one_line(event.final_error or 'unknown error', 300)}", "error")
            case SessionChangedEvent():
                self.reload_transcript()
                if event.reason == "resume":
                    self._warn_if_no_key()

    def _compaction_ended(self, event: Any) -> None:
        self._compaction_reported = True
        if getattr(event, "aborted", False):
            self.notice("Compaction aborted; the conversation is unchanged.", "warning")
        elif getattr(event, "error_message", None):
            self.notice(f"Compaction failed: {one_line(event.error_message, 300)}", "error")
        elif event.result is not None:
            # The rebuilt transcript starts with the compaction entry (what was summarised and
            # its gist); a second notice would only repeat it.
            self.reload_transcript()
        if self.session.is_running:
            self.activity.start("Working")
        elif not self._busy:
            self.activity.stop()
        self.refresh_status()

    # -- sending ---------------------------------------------------------------------------------

    @on(PromptEditor.Submitted)
    def _submitted(self, message: PromptEditor.Submitted) -> None:
        text = message.text
        self.editor.remember(text)
        self.editor.set_text("")
        parsed = parse_command(text)
        if parsed is not None:
            self.run_worker(dispatch(self, parsed), group="command", exit_on_error=False)
            return
        if text.lstrip().startswith("!") and text.strip() not in ("!", "!!"):
            self._send(text, None)  # shell commands run at once, even while the agent works
            return
        if self._prompting or self.session.is_running:
            self._enqueue(text, follow_up=message.follow_up)
            return
        if self.is_busy:
            self.notice("Wait for the current command to finish (Esc aborts).", "warning")
            self.editor.set_text(text)
            return
        self._send(text, None)

    def _send(self, text: str, images: list[Any] | None) -> None:
        stripped = text.lstrip()
        if stripped.startswith("!") and not images:
            exclude = stripped.startswith("!!")
            command = stripped[2:] if exclude else stripped[1:]
            if command.strip():
                self.run_worker(self._run_bash(command.strip(), exclude), group="bash", exit_on_error=False)
                return
        # Busy from now, not from when the worker starts: a second Enter right after the first
        # (fast typing, a paste without bracketed paste) must queue, not start a second prompt.
        self._busy += 1
        self._prompting = True
        self.editor.running = True
        self.run_worker(self._prompt(text, images), group="prompt", exit_on_error=False)

    async def _prompt(self, text: str, images: list[Any] | None) -> None:
        self.activity.start()
        self.transcript.follow()
        try:
            await self.session.prompt(text, images=images)
        except Exception as exc:
            self.notice(f"Could not send the prompt: {one_line(str(exc) or type(exc).__name__, 300)}", "error")
        finally:
            self._busy -= 1
            self._prompting = False
            self.editor.running = False
            if not self.is_busy:
                self.activity.stop()
            self.refresh_status()

    async def _run_bash(self, command: str, exclude: bool) -> None:
        self._busy += 1
        self.activity.start("Running shell command")
        self.transcript.follow()
        view = self.transcript.add_bash(command, exclude_from_context=exclude)
        started = time.monotonic()
        try:
            result = await self.session.run_bash(command, exclude_from_context=exclude, on_output=view.append_output)
        except Exception as exc:
            view.set_result(f"{type(exc).__name__}: {exc}", None, cancelled=True)
            self.notice(f"Shell command failed: {one_line(str(exc), 300)}", "error")
        else:
            view.set_result(result.output, result.exit_code, cancelled=result.cancelled,
                            duration=time.monotonic() - started)
            self.transcript.finish_bash(view, result)
        finally:
            self._busy -= 1
            if not self.is_busy:
                self.activity.stop()
            self.refresh_status()

    def _enqueue(self, text: str, *, follow_up: bool) -> None:
        if follow_up:
            self.session.follow_up(text)
        else:
            self.session.steer(text)
        self._queue.append(("follow-up" if follow_up else "steer", text))
        self.activity.set_queue(self._queue)

    def _delivered(self, text: str) -> None:
        for index, (_, queued) in enumerate(self._queue):
            if queued.strip() == text.strip():
                del self._queue[index]
                break
        self.activity.set_queue(self._queue)

    def _sync_queue(self) -> None:
        agent = getattr(self.session, "agent", None)
        queued = getattr(agent, "queued_messages", None)
        if queued is not None and not list(queued) and self._queue:
            self._queue.clear()
            self.activity.set_queue(self._queue)

    @on(PromptEditor.DequeueRequested)
    def _dequeue(self) -> None:
        texts = list(self.session.dequeue())
        self._queue.clear()
        self.activity.set_queue(self._queue)
        if not texts:
            return
        current = self.editor.text
        self.editor.set_text("\n\n".join([*texts, current] if current.strip() else texts))

    # -- keys --------------------------------------------------------------------------------------

    def _modal_open(self) -> bool:
        return isinstance(self.screen, ModalScreen)

    def action_interrupt(self) -> None:
        """Ctrl+C: copy a selection; abort a run; clear the editor; twice quickly: quit."""
        if self._modal_open():
            self.screen.dismiss(None)
            return
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify("Copied the selection.", timeout=2)
            return
        if self.editor.selected_text:
            self.copy_to_clipboard(self.editor.selected_text)
            return
        if self.is_busy:
            self.session.abort()
            return
        now = time.monotonic()
        if now - self._last_interrupt < QUIT_WINDOW:
            self.exit(0)
            return
        self._last_interrupt = now
        if self.editor.text:
            self.editor.set_text("")
        self.notify("Press Ctrl+C again to quit.", timeout=1)

    @on(PromptEditor.EscapePressed)
    def _escape(self) -> None:
        if self.is_busy:
            self.session.abort()

    @on(PromptEditor.QuitRequested)
    def _quit_requested(self) -> None:
        self.exit(0)

    @on(PromptEditor.ScrollRequested)
    def _scroll(self, message: PromptEditor.ScrollRequested) -> None:
        # Not animated: a held or repeated key must move a page per press (an animated scroll
        # starts each page from wherever the previous animation has got to).
        if message.direction < 0:
            self.transcript.scroll_page_up(animate=False)
        else:
            self.transcript.scroll_page_down(animate=False)

    def action_pick_model(self) -> None:
        """Ctrl+L: the model picker."""
        if self._modal_open():
            raise SkipAction()
        from baton.tui.commands import ParsedCommand

        self.run_worker(dispatch(self, ParsedCommand("model", "")), group="command", exit_on_error=False)

    async def action_cycle_model(self, direction: int) -> None:
        """Ctrl+P / Shift+Ctrl+P: the next / previous favourite model."""
        if self._modal_open():
            raise SkipAction()
        previous = self.session.model
        try:
            model = await self.session.cycle_model(direction)
        except Exception as exc:
            self.notice(f"Could not switch model: {one_line(str(exc), 300)}", "error")
            return
        if model is None:
            self.notice("No favourite models to cycle: add favorite_models to ~/.baton/settings.json, "
                        "or use Ctrl+L.", "warning")
            return
        self._model_switched(previous, model, self._handoff(model))

    def action_cycle_thinking(self) -> None:
        """Shift+Tab: the next thinking level."""
        if self._modal_open():
            raise SkipAction()
        if not getattr(self.session.model, "reasoning", False):
            self.notice(f"{self.session.model.ref} does not support thinking.", "warning")
            return
        self.session.cycle_thinking_level()
        self.refresh_status()

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: show or hide all thinking blocks."""
        self._show_thinking = not self._show_thinking
        self.transcript.set_view_flag("-show-thinking", self._show_thinking)

    def action_toggle_tools(self) -> None:
        """Ctrl+O: expand or collapse all tool output."""
        self._expand_tools = not self._expand_tools
        self.transcript.set_view_flag("-expand-tools", self._expand_tools)

    @on(PromptEditor.ExternalEditorRequested)
    def _external_editor(self) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        fd, name = tempfile.mkstemp(prefix="baton-prompt-", suffix=".md")
        path = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(self.editor.text)
            failure: Exception | None = None
            returncode = 0
            try:
                with self.suspend():
                    # Nothing may escape this block: Textual only resumes the app when it ends
                    # normally (an editor that cannot start would leave a dead, blank screen).
                    try:
                        returncode = subprocess.run([*shlex.split(editor), str(path)], check=False).returncode
                    except (OSError, ValueError, subprocess.SubprocessError) as exc:
                        failure = exc
            except Exception as exc:  # SuspendNotSupported and the like
                failure = exc
            if failure is not None:
                reason = one_line(str(failure) or type(failure).__name__, 200)
                self.notice(f"Cannot open $EDITOR ({one_line(editor, 60)}): {reason}", "warning")
                return
            if returncode != 0:
                self.notice(f"The editor exited with status {returncode}; the prompt is unchanged.", "warning")
                return
            self.editor.set_text(path.read_text(encoding="utf-8", errors="replace").rstrip("\n"))
        finally:
            path.unlink(missing_ok=True)

    def on_markdown_link_clicked(self, event: Any) -> None:
        """Open web links from Markdown; ignore anything else (a model wrote them)."""
        event.stop()
        if event.href.startswith(("https://", "http://")):
            self.open_url(event.href)

    # -- model and thinking ----------------------------------------------------------------------

    def _handoff(self, model: Model) -> str | None:
        from baton.tui.commands import handoff_summary

        return handoff_summary(self, model)

    async def switch_model(self, model: Model, summary: str | None) -> None:
        """Switch to ``model`` and say so (with what the handoff changes)."""
        previous = self.session.model
        await self.session.set_model(model)
        self._model_switched(previous, self.session.model, summary)

    def _model_switched(self, previous: Model, model: Model, summary: str | None) -> None:
        text = Content.assemble(("⇄ Model ", "bold"), (previous.ref, "$text-muted"), " → ", (model.ref, "bold"))
        if summary:
            text = Content.assemble(text, ("  ·  handoff: ", "$text-muted"), (summary, "$text-warning"))
        self.notice(text)
        self.refresh_status()

    def set_thinking(self, level: str) -> None:
        """Set the thinking level and say what the model will use."""
        applied = self.session.set_thinking_level(level)
        if applied != level:
            self.notice(f"Thinking: {applied} ({self.session.model.ref} cannot do {level}).", "warning")
        else:
            self.notice(f"Thinking: {applied}.")
        self.refresh_status()

    async def compact(self, focus: str | None) -> None:
        """``/compact``: summarise the conversation so far."""
        self._busy += 1
        self._compaction_reported = False
        self.activity.start("Compacting")
        try:
            await self.session.compact(focus)
        except Exception as exc:
            if not self._compaction_reported:
                self.notice(f"Compaction failed: {one_line(str(exc) or type(exc).__name__, 300)}", "error")
        finally:
            self._busy -= 1
            if not self.is_busy:
                self.activity.stop()


async def run_interactive_async(
    session: Any, *, initial_prompt: str | None = None, initial_images: list[Any] | None = None
) -> int:
    """Run the interactive UI on ``session`` inside the running event loop; the exit code."""
    app = BatonApp(session, initial_prompt=initial_prompt, initial_images=initial_images)
    await app.run_async()
    return app.return_code or 0


def run_interactive(
    session: Any, *, initial_prompt: str | None = None, initial_images: list[Any] | None = None
) -> int:
    """Run the interactive UI on ``session`` until the user quits; the exit code."""
    return asyncio.run(
        run_interactive_async(session, initial_prompt=initial_prompt, initial_images=initial_images)
    )

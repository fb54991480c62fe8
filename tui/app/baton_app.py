"""The interactive app: a thin Textual ``App`` wiring one ``CodingSession`` to the widgets.

Entry points for the CLI: :func:`run_interactive` (blocking) and :func:`run_interactive_async`
(inside a running event loop). ``BatonApp(session)`` is constructible on its own for pilot tests.
Widgets own their state (``tui/app/widgets``); slash commands live in ``tui/app/commands.py``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
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
from baton.providers.paths import baton_home_display
from baton.tui.app.commands import ParsedCommand, command_list, dispatch, parse_command
from baton.tui.app.completer import Completer
from baton.tui.app.render import one_line
from baton.tui.app.retry_count import RetryCount
from baton.tui.app.themes import THEME_ALIASES
from baton.tui.app.widgets.approval import ApprovalPanel
from baton.tui.app.widgets.attachment_chips import AttachmentChips
from baton.tui.app.widgets.completion import CompletionList
from baton.tui.app.widgets.editor import PromptEditor
from baton.tui.app.widgets.status import (
    ActivityBar,
    StartupHeader,
    StatusBar,
    git_branch,
    is_demo,
    startup_header_content,
    status_from_session,
)

MCP_START_DELAY_S = 1.0
"""Seconds after mounting before MCP servers start in the background."""

if TYPE_CHECKING:
    from baton.providers.models import Model
    from baton.sessions.events import AutoCompactionEndEvent
    from baton.tui.app.widgets.messages import NoticeLevel
    from baton.tui.app.widgets.transcript import Transcript

SessionOpener = Callable[[Path | None], Awaitable[Any]]
"""Opens the session after the first paint (the app is usable as an editor meanwhile); given
the session file picked by the session picker, when there is one."""

QUIT_WINDOW = 0.5
"""Seconds within which a second Ctrl+C quits."""
REWIND_WINDOW = 0.8
"""Seconds within which a second Esc on an empty editor opens /rewind."""


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
        Binding("ctrl+v", "paste_image", "Paste an image", show=False, priority=True),
    ]

    def __init__(
        self,
        session: Any = None,
        *,
        initial_prompt: str | None = None,
        initial_images: list[Any] | None = None,
        opener: SessionOpener | None = None,
        cwd: Path | None = None,
        pick_session: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__()
        if session is None and opener is None:
            raise ValueError("BatonApp needs a session or an opener")
        self.session = session
        self._opener = opener
        self._pick_session = pick_session
        """Makes the session picker to show before opening (``baton -r``)."""
        self.open_error: BaseException | None = None
        """Why the session could not be opened (the app then exits; the CLI reports it)."""
        self._pending: list[tuple[str, bool]] = []
        self._initial_prompt = initial_prompt
        self._initial_images = initial_images
        self.cwd = Path(session.cwd) if session is not None else (cwd or Path.cwd())
        self._branch: str | None = None
        self._queue: list[tuple[str, str]] = []
        self._retries = RetryCount()
        self._busy = 0
        self._prompting = False
        self._status_shown_at = 0.0
        self._compaction_reported = False
        self._last_interrupt = 0.0
        self._last_escape = 0.0
        self._show_thinking = False
        self._expand_tools = False
        self._unsubscribe: Any = None
        self.transcript: Transcript = None  # type: ignore[assignment]  # set by _attach_session
        self._boot = StartupHeader(version=__version__, model=None, cwd=self.cwd, starting=True)
        self.activity = ActivityBar(id="activity")
        self.completion = CompletionList(id="completion")
        self.completer = Completer(self.cwd, command_list(), self._argument_sources())
        self.editor = PromptEditor(
            id="editor", completer=self.completer, completion=self.completion, history=self._history()
        )
        self.status_bar = StatusBar(id="status")
        self.approval = ApprovalPanel(id="approval")
        self.attachments = AttachmentChips(self.cwd, id="attachments")

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        if self.session is not None:
            self._make_transcript()
            yield self.transcript
        else:
            yield self._boot
        with Vertical(id="bottom"):
            yield self.activity
            yield self.completion
            yield self.approval
            yield self.attachments
            yield self.editor
            yield self.status_bar

    def _make_transcript(self) -> None:
        from baton.tui.app.widgets.transcript import Transcript

        self.transcript = Transcript(id="transcript", cwd=self.cwd, header=self._make_header)
        self.transcript.on_flush = self.activity.tick
        if self._show_thinking:  # toggled while starting
            self.transcript.set_view_flag("-show-thinking", True)
        if self._expand_tools:
            self.transcript.set_view_flag("-expand-tools", True)

    def _make_header(self) -> Content:
        return startup_header_content(
            version=__version__,
            model=self.session.model,
            cwd=self.cwd,
            context_files=list(getattr(self.session, "context_files", []) or []),
        )

    def _history(self) -> list[str]:
        messages = getattr(self.session, "messages", []) or []
        if not messages:
            return []  # also keeps pydantic (via the message widgets) out of the first frame
        from baton.tui.app.widgets.messages import user_text

        out = []
        for message in messages:
            if getattr(message, "role", None) == "user":
                text = user_text(message.content)
                if text.strip():
                    out.append(text)
        return out

    def _prompt_command_list(self) -> list[tuple[str, str]]:
        """Prompt templates and skills for ``/`` completion (argument hint before the description)."""
        commands = getattr(self.session, "prompt_commands", None)
        items = commands() if callable(commands) else []
        return [(c.name, f"{c.argument_hint}  {c.description}".strip()) for c in items]

    def is_prompt_command(self, name: str) -> bool:
        """True when ``/name`` is a prompt template (it expands in the session, not here)."""
        return any(n == name for n, _ in self._prompt_command_list())

    def send_prompt_command(self, text: str) -> None:
        """Send a template invocation as a prompt (queued while the agent works)."""
        if self._prompting or self.session.is_running:
            self._enqueue(text, follow_up=False)
        else:
            self._send(text, None)

    def _argument_sources(self) -> dict[str, Any]:
        def thinking() -> list[tuple[str, str]]:
            from baton.providers.models import THINKING_LEVELS  # pydantic: not before the first frame

            return [(level, "") for level in THINKING_LEVELS]

        def models() -> list[tuple[str, str]]:
            try:
                return [(m.ref, m.name) for m in self.session.available_models()]
            except Exception:
                return []

        return {"model": models, "thinking": thinking,
                "approval": lambda: [(mode, "") for mode in ("ask", "auto", "full")]}

    async def on_mount(self) -> None:
        self.completer.on_files_ready = lambda: self.call_from_thread(self.editor.refresh_completion)
        self.editor.focus()
        # Keys typed before the editor had focus (into the instant frame, or while this screen
        # was built) were held by the driver: they go to the editor now, in order.
        release = getattr(self._driver, "release_held_keys", None)
        if release is not None:
            self.run_worker(release(self), group="keys", exit_on_error=False)
        if self.session is None:
            self.activity.start("Starting")
            # After the first frame: the imports behind opening would compete with painting it.
            self.call_after_refresh(self.run_worker, self._open_session, group="open", exit_on_error=False)
            return
        await self._attach_session()

    async def _open_session(self) -> None:
        """Open the session after the first paint: the heavy imports run in a thread while the
        editor already takes keys; prompts sent meanwhile wait in the queue."""
        assert self._opener is not None
        try:
            picked: Path | None = None
            if self._pick_session is not None:
                picked = await self.push_screen_wait(self._pick_session())
                if picked is None:
                    self.exit(0)
                    return
            await asyncio.to_thread(_preload)
            self.session = await self._opener(picked)
        except asyncio.CancelledError:
            raise  # the app quits while starting (Ctrl+C twice): not a failure to open
        except BaseException as exc:  # reported by the CLI once the app is gone
            self.open_error = exc
            self.exit(return_code=2)
            return
        self._make_transcript()
        await self.mount(self.transcript, before=self.query_one("#bottom"))
        await self._boot.remove()
        self.activity.stop()
        await self._attach_session()

    async def _attach_session(self) -> None:
        """Wire the opened session to the widgets (events, history, status, warnings)."""
        self._branch = await asyncio.to_thread(git_branch, self.cwd)
        self._unsubscribe = self.session.subscribe(self._on_session_event)
        if hasattr(self.session, "approver"):
            self.session.approver = self.approval.ask
        self.completer.commands = [*command_list(), *self._prompt_command_list()]  # templates and skills
        self.editor.prompt_history = [*self._history(), *self.editor.prompt_history]
        messages = list(getattr(self.session, "messages", []) or [])
        if messages:
            await self.transcript.load_history(messages)
        self._startup_warnings()
        self._apply_theme_setting()
        self.refresh_status()
        self._ask_project_trust()
        extensions = getattr(self.session, "extensions", None)
        if extensions is not None:
            # MCP servers start once the screen is up and settled: importing the SDK takes
            # seconds of CPU that would otherwise compete with the first paint. A prompt sent
            # before then starts them itself.
            self.set_timer(MCP_START_DELAY_S, extensions.start_mcp)
        if self._initial_prompt or self._initial_images:
            text, images = self._initial_prompt or "", self._initial_images
            self._initial_prompt = self._initial_images = None
            # Files named on the command line are already attached.
            self.call_after_refresh(lambda: self._send(text, images, attach_files=False))
        pending, self._pending = self._pending, []
        for text, follow_up in pending:
            self.call_after_refresh(self._handle_submission, text, follow_up)
        if pending:
            self.activity.set_queue([])

    def _ask_project_trust(self) -> None:
        """Say what of the project only the user's own settings may set (ignored, trusted or not),
        and ask once whether the project's settings, hooks and ``.mcp.json`` servers may apply."""
        from baton.sessions.trust import ignored_summary

        session = self.session
        refused = list(getattr(getattr(session, "settings", None), "refused", None) or [])
        if refused:
            self.notice(f"⚠ {one_line(ignored_summary(None, refused, self.cwd, '') or '', 400)}", "warning")
        pending = getattr(session, "pending_trust", None)
        if pending is None:
            return

        async def ask() -> None:
            from baton.tui.app.widgets.pickers import ConfirmScreen

            body = (f"Until you trust {pending.project}, these stay off: {', '.join(pending.what)}.\n"
                    f"{pending.question()}\nAsked again only if these change.")
            trusted = await self.push_screen_wait(
                ConfirmScreen("Trust this project?", body, "Enter/y trust · Esc/n not now"))
            if trusted:
                session.trust_project()
                self.notice(f"Project trusted: {', '.join(pending.what)} are on.", "success")
            else:
                hint = "they stay off for this session; asked again at the next start"
                self.notice(f"⚠ {one_line(ignored_summary(pending, [], pending.project, hint) or '', 400)}",
                            "warning")
            self.refresh_status()

        self.run_worker(ask(), group="trust", exit_on_error=False)

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

    def _apply_theme_setting(self) -> None:
        settings = getattr(self.session, "settings", None)
        name = getattr(settings, "theme", None)
        if not name:
            return
        if not self.set_theme_name(name):
            self.notice(f"⚠ Unknown theme {one_line(name, 40)!r} in settings; use /theme to pick one.", "warning")

    def theme_names(self) -> list[str]:
        """Themes that can be chosen: ``dark``, ``light`` and every Textual theme."""
        return ["dark", "light", *sorted(n for n in self.available_themes if n not in THEME_ALIASES.values())]

    def set_theme_name(self, name: str) -> bool:
        """Switch to theme ``name`` (``dark``/``light`` or a Textual theme name); False if unknown."""
        resolved = THEME_ALIASES.get(name.strip().lower(), name.strip())
        if resolved not in self.available_themes:
            return False
        self.theme = resolved
        return True

    def _warn_if_no_key(self) -> None:
        model = self.session.model
        options = getattr(self.session, "options", None)
        extra = {m.ref for m in getattr(options, "extra_models", None) or []}
        if is_demo(model) or not model.base_url or model.ref in extra or getattr(options, "api_key", None):
            return  # embedded models (tests, faux) bring their own transport
        try:
            from baton.providers.api_keys import env_var_for, has_api_key

            if model.is_local or has_api_key(model.provider):
                return
            variable = env_var_for(model.provider)
        except Exception:
            return
        models_json = f"{baton_home_display()}/models.json"
        self.notice(f"⚠ No API key for {model.provider}: set {variable} (or apiKey in {models_json}), "
                    "or pick another model with /model.", "warning")

    def _fatal_error(self) -> None:
        """Textual's crash report, without local variables (they may hold a key, cut to a
        prefix no redaction recognises) and with keys redacted from the traceback."""
        import rich
        from rich.segment import Segments
        from rich.traceback import Traceback

        from baton.tui.cli.output_redaction import redact_segments

        self.bell()
        report = Traceback(show_locals=False, width=None, suppress=[rich])
        segments = redact_segments(list(self.console.render(report, self.console.options)))
        self._exit_renderables.append(Segments(segments))
        self._close_messages_no_wait()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- state -----------------------------------------------------------------------------------

    @property
    def is_busy(self) -> bool:
        """True while a prompt, compaction or shell command is running."""
        return self._busy > 0 or (self.session is not None and bool(getattr(self.session, "is_running", False)))

    def notice(self, content: Content | str, level: NoticeLevel = "info") -> None:
        """Add a notice to the transcript (untrusted strings are shown as plain text)."""
        self.transcript.add_notice(content, level)

    def refresh_status(self) -> None:
        """Recompute the status bar from the session."""
        if self.session is None:
            return
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
        from baton.agent.events import AgentEndEvent, AgentStartEvent, MessageEndEvent, MessageStartEvent
        from baton.providers.messages import AssistantMessage, UserMessage
        from baton.sessions.events import (
            AutoCompactionEndEvent,
            AutoCompactionStartEvent,
            AutoRetryEndEvent,
            AutoRetryStartEvent,
            ExtensionNoticeEvent,
            McpStatusEvent,
            ModelChangeEvent,
            SessionChangedEvent,
            ThinkingLevelChangeEvent,
        )
        from baton.tui.app.widgets.messages import retry_end_notice, retry_notice, user_text

        self.transcript.handle_event(event)
        match event:
            case MessageStartEvent(message=UserMessage() as message):
                self._retries.reset()
                if self._queue:
                    self._delivered(user_text(message.content))
            case MessageEndEvent(message=AssistantMessage() as message):
                if message.stop_reason != "error":
                    self._retries.reset()
                # Token counts and cost while the agent works: at most once a second (every
                # repaint of the status line costs a frame the whole screen's height); the end of
                # the run shows the final figures.
                now = time.monotonic()
                if now - self._status_shown_at >= 1.0:
                    self._status_shown_at = now
                    self.transcript.in_next_flush(self.refresh_status)
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
            case ModelChangeEvent() | ThinkingLevelChangeEvent() | McpStatusEvent():
                self.refresh_status()
            case ExtensionNoticeEvent(source=source, text=text, level=level):
                self.notice(f"{source}: {one_line(text, 300)}", level)
            case AutoCompactionStartEvent(reason=reason):
                why = {"overflow": "the context overflowed", "manual": "requested"}.get(
                    reason, "the context is filling up")
                self.notice(f"⟳ Compacting the conversation ({why})…")
                self.activity.start("Compacting")
            case AutoCompactionEndEvent():
                self._compaction_ended(event)
            case AutoRetryStartEvent():
                retry = self.session.settings.retry
                attempt, allowed = self._retries.count(
                    event.source, event.max_attempts, retry.max_retries if retry.enabled else 0)
                text = retry_notice(attempt, allowed, event.delay_ms, event.error_message or "")
                self.transcript.add_notice_before_reply(text, "warning")
            case AutoRetryEndEvent(success=False, attempt=attempt, final_error=final_error):
                last = self.session.messages[-1] if self.session.messages else None
                aborted = isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
                if ended := retry_end_notice(attempt, self.session.settings.retry.max_retries, final_error,
                                             aborted=aborted):
                    self.notice(*ended)
            case SessionChangedEvent(reason=reason):
                self.reload_transcript()
                if reason == "resume":
                    self._warn_if_no_key()

    def _compaction_ended(self, event: AutoCompactionEndEvent) -> None:
        self._compaction_reported = True
        if event.aborted:
            self.notice("Compaction aborted; the conversation is unchanged.", "warning")
        elif event.error_message:
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

    @on(PromptEditor.Changed, "#editor")
    def _editor_changed(self) -> None:
        self.attachments.update_for(self.editor.text)

    @on(PromptEditor.Submitted)
    def _submitted(self, message: PromptEditor.Submitted) -> None:
        text = message.text
        self.editor.remember(text)
        self.editor.set_text("")
        if self.session is None:  # still starting: keep it for when the session is open
            self._pending.append((text, message.follow_up))
            self.activity.set_queue([("waiting for start-up", t) for t, _ in self._pending])
            return
        self._handle_submission(text, message.follow_up)

    def _handle_submission(self, text: str, follow_up: bool) -> None:
        parsed = parse_command(text)
        if parsed is not None:
            self.run_worker(dispatch(self, parsed), group="command", exit_on_error=False)
            return
        if text.lstrip().startswith("!") and text.strip() not in ("!", "!!"):
            self._send(text, None)  # shell commands run at once, even while the agent works
            return
        if self._prompting or self.session.is_running:
            self._enqueue(text, follow_up=follow_up)
            return
        if self.is_busy:
            self.notice("Wait for the current command to finish (Esc aborts).", "warning")
            self.editor.set_text(text)
            return
        self._send(text, None)

    def _send(self, text: str, images: list[Any] | None, *, attach_files: bool = True) -> None:
        stripped = text.lstrip()
        if stripped.startswith("!") and not images:
            exclude = stripped.startswith("!!")
            command = stripped[2:] if exclude else stripped[1:]
            if command.strip():
                self.run_worker(self._run_bash(command.strip(), exclude), group="bash", exit_on_error=False)
                return
        if attach_files:
            from baton.tui.cli.attachments import AttachmentError, attach

            try:
                text, attached, _ = attach(text, self.cwd)
            except AttachmentError as exc:
                self.notice(f"⚠ {exc}. Nothing was sent; the prompt is back in the editor.", "warning")
                self.editor.set_text(text)
                return
            images = [*(images or []), *attached] or None
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
        if self.session is None:  # starting: the prompts waiting for start-up come back
            texts = [text for text, _ in self._pending]
            self._pending.clear()
        else:
            texts = list(self.session.dequeue())
        self._queue.clear()
        self.activity.set_queue(self._queue)
        if not texts:
            return
        current = self.editor.text
        self.editor.set_text("\n\n".join([*texts, current] if current.strip() else texts))

    # -- keys --------------------------------------------------------------------------------------

    def _modal_open(self) -> bool:
        # While starting there is no session to act on: model and thinking keys wait too.
        return isinstance(self.screen, ModalScreen) or self.session is None

    def action_interrupt(self) -> None:
        """Ctrl+C: copy a selection; abort a run; clear the editor; twice quickly: quit."""
        if isinstance(self.screen, ModalScreen):  # while starting too: clear, or quit when twice
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
        if self.session is not None and self.is_busy:
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

    @on(ApprovalPanel.Closed)
    def _approval_closed(self) -> None:
        self.editor.focus()

    def set_approval_mode(self, mode: str) -> None:
        """Switch the approval mode (``/approval``) and say what it means."""
        applied = self.session.set_approval_mode(mode)
        meaning = {
            "ask": "every command, edit and write asks; reads inside the workspace run.",
            "auto": "edits inside the workspace run, commands run in the sandbox; the rest asks.",
            "full": "everything runs, without the sandbox (protected paths and deny rules still apply).",
        }[applied]
        self.notice(f"Approval: {applied} — {meaning}", "warning" if applied == "full" else "info")
        self.refresh_status()

    @on(PromptEditor.EscapePressed)
    def _escape(self) -> None:
        if self.session is None:
            return  # starting: nothing to abort or rewind yet
        if self.is_busy:
            self.session.abort()
            return
        now = time.monotonic()
        if self.editor.text.strip() or now - self._last_escape > REWIND_WINDOW:
            self._last_escape = now
            return
        self._last_escape = 0.0
        self.run_worker(dispatch(self, ParsedCommand("rewind", "")), group="command", exit_on_error=False)

    @on(PromptEditor.QuitRequested)
    def _quit_requested(self) -> None:
        self.exit(0)

    @on(PromptEditor.ScrollRequested)
    def _scroll(self, message: PromptEditor.ScrollRequested) -> None:
        if self.transcript is None:
            return  # starting: nothing to scroll
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
        from baton.tui.app.commands import ParsedCommand

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
            self.notice(f"No favourite models to cycle: add favoriteModels to {baton_home_display()}/settings.json, "
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

    async def action_paste_image(self) -> None:
        """Ctrl+V: attach the clipboard's image (saved under ``$BATON_HOME/tmp``)."""
        from baton.tui.app.clipboard import read_clipboard_image

        image = await asyncio.to_thread(read_clipboard_image)
        if image.data is None:
            if self.clipboard and self.focused is self.editor:
                self.editor.action_paste()  # what was copied inside the app, as the editor would
                return
            self.notice(f"Ctrl+V: {image.problem}.", "warning")
            return
        from baton.providers.paths import baton_home
        from baton.tui.cli.attachments import reference_for

        folder = baton_home() / "tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"clipboard-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.png"
            path.write_bytes(image.data)
        except OSError as exc:
            self.notice(f"Ctrl+V: cannot keep the image ({exc.strerror or exc}).", "error")
            return
        self.editor.insert(reference_for(path, self.cwd) + " ")
        self.editor.focus()

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: show or hide all thinking blocks."""
        self._show_thinking = not self._show_thinking
        if self.transcript is not None:  # else applied when the transcript is made
            self.transcript.set_view_flag("-show-thinking", self._show_thinking)

    def action_toggle_tools(self) -> None:
        """Ctrl+O: expand or collapse all tool output."""
        self._expand_tools = not self._expand_tools
        if self.transcript is not None:
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
        from baton.tui.app.commands import handoff_summary

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
        from baton.sessions.errors import NothingToCompactError

        self._busy += 1
        self._compaction_reported = False
        self.activity.start("Compacting")
        try:
            await self.session.compact(focus)
        except NothingToCompactError as exc:
            self.notice(f"{exc}.")
        except Exception as exc:
            if not self._compaction_reported:
                self.notice(f"Compaction failed: {one_line(str(exc) or type(exc).__name__, 300)}", "error")
        finally:
            self._busy -= 1
            if not self.is_busy:
                self.activity.stop()


async def run_interactive_async(
    session: Any = None,
    *,
    initial_prompt: str | None = None,
    initial_images: list[Any] | None = None,
    inline: bool = False,
    opener: SessionOpener | None = None,
    pick_session: Callable[[], Any] | None = None,
    instant_frame: Any = None,
) -> int:
    """Run the interactive UI inside the running event loop; the exit code. Give the
    ``session``, or an ``opener`` that opens it once the first frame is painted (then
    :class:`SessionOpenError` carries an opening failure). ``inline``: render below the prompt
    instead of on the alternate screen. ``instant_frame``: the
    :class:`~baton.tui.app.instant_frame.InstantFrame` painted before Textual loaded, to take over."""
    from baton.tui.cli.termination import on_terminate

    app = BatonApp(session, initial_prompt=initial_prompt, initial_images=initial_images, opener=opener,
                   pick_session=pick_session)
    from textual.drivers.linux_driver import LinuxDriver

    if not inline and app.driver_class is LinuxDriver:  # not on Windows, nor a driver named by TEXTUAL_DRIVER
        from baton.tui.app.handoff_driver import driver_for

        app.driver_class = driver_for(instant_frame)
    elif instant_frame is not None:
        instant_frame.close()  # no driver to adopt it: give the terminal back before Textual takes it
    remove = on_terminate(lambda signum: app.exit(return_code=128 + signum))  # SIGTERM, SIGHUP
    try:
        await app.run_async(inline=inline, inline_no_clear=inline)
    finally:
        remove()
    if app.open_error is not None:
        raise SessionOpenError(app.open_error) from app.open_error
    return app.return_code or 0


class SessionOpenError(Exception):
    """The interactive app could not open its session (``original`` says why)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def _preload() -> None:
    """Import what opening a session and showing a transcript need (run in a worker thread)."""
    import baton.sessions.coding_session
    import baton.tui.app.widgets.transcript  # noqa: F401


def run_interactive(
    session: Any, *, initial_prompt: str | None = None, initial_images: list[Any] | None = None
) -> int:
    """Run the interactive UI on ``session`` until the user quits; the exit code."""
    return asyncio.run(
        run_interactive_async(session, initial_prompt=initial_prompt, initial_images=initial_images)
    )

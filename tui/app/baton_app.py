"""The interactive app: a thin Textual ``App`` wiring one ``CodingSession`` to the widgets.

Entry points for the CLI: :func:`run_interactive` (blocking) and :func:`run_interactive_async`
(inside a running event loop). ``BatonApp(session)`` is constructible on its own for pilot tests.

The rooms around it: ``startup.py`` (what the app takes from the session once it is open, and
what it says then), ``session_events.py`` (what each session event changes on screen),
``sending.py`` (what happens to what the user sends), ``busy.py`` (what runs now, one value),
``notices.py`` (what the notices say),
``external_editor.py`` (Ctrl+G), ``clipboard.py`` (Ctrl+V); widgets own their state
(``widgets/``); slash commands live in ``commands.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen, Screen

from baton import __version__
from baton.providers.paths import baton_home_display
from baton.tui.app import startup
from baton.tui.app.busy import Busy
from baton.tui.app.commands import ParsedCommand, command_list, dispatch
from baton.tui.app.completer import Completer
from baton.tui.app.notices import APPROVAL_MEANINGS, MODE_CYCLE, model_switched
from baton.tui.app.notify import Notifier
from baton.tui.app.render import one_line
from baton.tui.app.sending import Sender
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
    startup_header_content,
    status_from_session,
)
from baton.tui.app.widgets.todo_panel import TodoPanel

MCP_START_DELAY_S = 1.0
"""Seconds after mounting before MCP servers start in the background."""

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.widgets import Markdown

    from baton.providers.messages import ImageContent
    from baton.providers.models import Model
    from baton.sessions import CodingSession
    from baton.sessions.permissions.approval import ApprovalAnswer, ApprovalRequest
    from baton.sessions.plan_mode import PlanAnswer, PlanRequest
    from baton.tools.mcp.elicitation import ElicitationAnswer, ElicitationQuestion
    from baton.tui.app.instant_frame import InstantFrame
    from baton.tui.app.session_events import SessionEvents
    from baton.tui.app.widgets.messages import NoticeLevel
    from baton.tui.app.widgets.transcript import Transcript

SessionOpener = Callable[[Path | None], Awaitable["CodingSession"]]
"""Opens the session after the first paint (the app is usable as an editor meanwhile); given
the session file picked by the session picker, when there is one."""
SessionPicker = Callable[[], "Screen[Path | None]"]
"""Makes the session picker shown before opening (``baton -r``)."""

QUIT_WINDOW = 2.0
"""Seconds within which a second Ctrl+C quits: as long as the "press again" notice is shown."""
REWIND_WINDOW = 0.8
"""Seconds within which a second Esc on an empty editor opens /rewind."""
SESSION_ACTIONS = frozenset({"pick_model", "cycle_model", "cycle_mode", "cycle_thinking"})
"""The app's key actions that act on the session: typed while it opens, they wait for it."""


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
        Binding("shift+tab", "cycle_mode", "Mode: default, plan, auto-accept edits", show=False, priority=True),
        Binding("ctrl+r", "cycle_thinking", "Thinking level", show=False, priority=True),
        Binding("ctrl+t", "toggle_thinking", "Show thinking", show=False, priority=True),
        Binding("ctrl+o", "toggle_tools", "Expand tools", show=False, priority=True),
        Binding("ctrl+v", "paste_image", "Paste an image", show=False, priority=True),
    ]

    def __init__(
        self,
        session: CodingSession | None = None,
        *,
        initial_prompt: str | None = None,
        initial_images: list[ImageContent] | None = None,
        opener: SessionOpener | None = None,
        cwd: Path | None = None,
        pick_session: SessionPicker | None = None,
    ) -> None:
        super().__init__()
        if session is None and opener is None:
            raise ValueError("BatonApp needs a session or an opener")
        self._session = session
        self._opener = opener
        self._pick_session = pick_session
        self.open_error: BaseException | None = None
        self.freeze_startup_objects = False
        """Set by the program (not by tests, which share one process): once the session is up,
        what start-up made (modules, the app, the session) is moved out of the cyclic collector's
        sight (``gc.freeze``), so a full collection walks only what came later (50 ms -> 13 ms)."""
        """Why the session could not be opened (the app then exits; the CLI reports it)."""
        self.sender = Sender(self)
        self._initial_prompt = initial_prompt
        self._initial_images = initial_images
        self.cwd = Path(session.cwd) if session is not None else (cwd or Path.cwd())
        self._branch: str | None = None
        self._busy = Busy()
        self._events: SessionEvents | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._last_interrupt = 0.0
        self._last_escape = 0.0
        self._show_thinking = False
        self._expand_tools = False
        self._transcript: Transcript | None = None
        self._boot = StartupHeader(version=__version__, model=None, cwd=self.cwd, starting=True)
        self.activity = ActivityBar(id="activity")
        self.completion = CompletionList(id="completion")
        self.completer = Completer(self.cwd, command_list(), startup.argument_sources(self))
        # The session's prompts join the history when it is attached (see _attach_session).
        self.editor = PromptEditor(id="editor", completer=self.completer, completion=self.completion)
        self.status_bar = StatusBar(id="status")
        self.approval = ApprovalPanel(id="approval")
        self.todos = TodoPanel(id="todos")
        self.notifier = Notifier(self)
        """Tells the user that a run ended or an approval waits (``notify`` setting)."""
        self.attachments = AttachmentChips(self.cwd, id="attachments")
        self.opened = asyncio.Event()
        """Set once the session is open and the prompts sent while starting have been passed on."""

    # -- the session and the transcript ------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        """True once the session is open (the app paints and takes keys before that)."""
        return self._session is not None

    @property
    def session(self) -> CodingSession:
        """The session (only once it is open: see :attr:`is_open`)."""
        if self._session is None:
            raise RuntimeError("The session is not open yet")
        return self._session

    @property
    def transcript(self) -> Transcript:
        """The conversation (made when the session opens)."""
        if self._transcript is None:
            raise RuntimeError("The transcript is made when the session opens")
        return self._transcript

    def compose(self) -> ComposeResult:
        yield self._make_transcript() if self._session is not None else self._boot
        with Vertical(id="bottom"):
            yield self.activity
            yield self.completion
            yield self.todos
            yield self.approval
            yield self.attachments
            yield self.editor
            yield self.status_bar

    def _make_transcript(self) -> Transcript:
        from baton.tui.app.widgets.transcript import Transcript

        transcript = self._transcript = Transcript(id="transcript", cwd=self.cwd, header=self._make_header)
        transcript.on_flush = self.activity.tick
        transcript.subagent_roots = self._subagent_roots
        if self._show_thinking:  # toggled while starting
            transcript.set_view_flag("-show-thinking", True)
        if self._expand_tools:
            transcript.set_view_flag("-expand-tools", True)
        return transcript

    def _subagent_roots(self) -> list[Path]:
        """Where this session's subagent files may be read from: its folder, its file's folder."""
        session = self.session
        roots = [Path(session.session_dir)]
        if session.store.path is not None:
            roots.append(session.store.path.parent)
        return roots

    def _make_header(self) -> Content:
        return startup_header_content(version=__version__, model=self.session.model, cwd=self.cwd,
                                      context_files=self.session.context_files)

    # -- start-up ----------------------------------------------------------------------------------

    async def on_mount(self) -> None:
        self.completer.on_files_ready = lambda: self.call_from_thread(self.editor.refresh_completion)
        self.editor.focus()
        # Keys typed before the editor had focus (into the instant frame, or while this screen
        # was built) were held by the driver: they go to the editor now, in order.
        from baton.tui.app.handoff_driver import KeyHolder

        if isinstance(self._driver, KeyHolder):
            self.run_worker(self._driver.release_held_keys(self, self.key_waits_for_session, self.opened),
                            group="keys", exit_on_error=False)
        if self._session is None:
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
            await asyncio.to_thread(startup.preload)
            self._session = await self._opener(picked)
        except asyncio.CancelledError:
            raise  # the app quits while starting (Ctrl+C twice): not a failure to open
        except BaseException as exc:  # reported by the CLI once the app is gone
            self.open_error = exc
            self.exit(return_code=2)
            return
        await self.mount(self._make_transcript(), before=self.query_one("#bottom"))
        await self._boot.remove()
        self.activity.stop()
        await self._attach_session()

    async def _attach_session(self) -> None:
        """Wire the opened session to the widgets (events, history, status, warnings)."""
        from baton.tui.app.session_events import SessionEvents

        session = self.session
        self._branch = await asyncio.to_thread(git_branch, self.cwd)
        self._events = SessionEvents(self)
        self._unsubscribe = session.subscribe(self._events)
        session.permissions.approver = self._ask_approval
        session.plan_mode.approver = self.review_plan
        from baton.tools.todo_write import latest_todos

        self.todos.show_todos(latest_todos(session.messages) or [], collapsed=True)
        session.mcp.elicitor = self.ask_mcp_question
        self.transcript.text_only_model = lambda: None if "image" in session.model.input else session.model.ref
        self.completer.commands = [*command_list(), *startup.prompt_command_items(session)]
        self.editor.prompt_history = [*startup.prompt_history(session.messages), *self.editor.prompt_history]
        if session.messages:
            await self.transcript.load_history(list(session.messages))
        for problem in startup.opening_problems(session):
            self.notice(f"⚠ {one_line(problem, 300)}", "warning")
        self.warn_if_no_key()
        theme = session.settings.theme
        if theme and not self.set_theme_name(theme):
            self.notice(f"⚠ Unknown theme {one_line(theme, 40)!r} in settings; use /theme to pick one.", "warning")
        self.refresh_status()
        startup.ask_project_trust(self)
        # MCP servers start once the screen is up and settled: importing the SDK takes seconds
        # of CPU that would otherwise compete with the first paint. A prompt sent before then
        # starts them itself.
        self.set_timer(MCP_START_DELAY_S, session.extensions.start_mcp)
        if self._initial_prompt or self._initial_images:
            text, images = self._initial_prompt or "", self._initial_images
            self._initial_prompt = self._initial_images = None
            # Files named on the command line are already attached.
            self.call_after_refresh(lambda: self.sender.send(text, images, attach_files=False))
        self.sender.release_waiting()
        self.call_after_refresh(self.opened.set)  # after the waiting prompts: keys typed later follow them
        if self.freeze_startup_objects:
            import gc

            self.call_after_refresh(gc.freeze)

    def key_waits_for_session(self, message: Message) -> bool:
        """True for a key the app binds to an action on the session (Shift+Tab, Ctrl+R...) while
        the session is not open and no modal screen (the session picker) takes keys: typed before
        the app is up, it acts once the session is open instead of being dropped."""
        if self._session is not None or isinstance(self.screen, ModalScreen) or not isinstance(message, events.Key):
            return False
        bindings = [b for key in message.aliases for b in self._bindings.key_to_bindings.get(key, [])]
        return any(binding.action.split("(", 1)[0] in SESSION_ACTIONS for binding in bindings)

    def warn_if_no_key(self) -> None:
        """Warn when the model cannot be reached for want of an API key."""
        if (warning := startup.missing_key_warning(self.session)) is not None:
            self.notice(warning, "warning")

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

    def _build_driver(self, headless: bool, inline: bool, mouse: bool, size: tuple[int, int] | None) -> Driver:
        """Textual's choice of driver, except ``--inline`` on a POSIX terminal: Textual's inline
        driver polls its input ten times a second; :class:`QuietInlineDriver` sleeps."""
        from textual.drivers.linux_driver import LinuxDriver

        if inline and not headless and issubclass(self.driver_class, LinuxDriver):
            from textual import constants

            from baton.tui.app.handoff_driver import QuietInlineDriver

            driver = self._driver = QuietInlineDriver(self, debug=constants.DEBUG, mouse=mouse, size=size)
            return driver
        return super()._build_driver(headless, inline, mouse, size)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- state -----------------------------------------------------------------------------------

    @property
    def busy(self) -> Busy:
        """What runs now."""
        return self._busy

    def set_busy(self, busy: Busy) -> None:
        """Say what runs now: the editor takes messages for the agent while it works, and the
        activity line goes when nothing runs."""
        self._busy = busy
        self.editor.running = busy.agent_working
        if busy.idle:
            self.activity.stop()

    @property
    def is_busy(self) -> bool:
        """True while a prompt, compaction or shell command is running."""
        return not self._busy.idle

    def notice(self, content: Content | str, level: NoticeLevel = "info") -> None:
        """Add a notice to the transcript (untrusted strings are shown as plain text)."""
        self.transcript.add_notice(content, level)

    def refresh_status(self) -> None:
        """Recompute the status bar from the session."""
        if self._session is None:
            return
        try:
            info = status_from_session(self._session, branch=self._branch)
        except Exception as exc:  # the status bar must never take the app down
            self.log.warning(f"status unavailable: {exc!r}")
            return
        self.status_bar.set_info(info)

    def reload_transcript(self) -> None:
        """Rebuild the transcript from the session's messages (after /new, /resume, /fork,
        /tree and compactions: the session reports them with events)."""
        self.transcript.reset(list(self.session.messages))
        self.refresh_status()

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

    # -- sending ---------------------------------------------------------------------------------

    @on(PromptEditor.Changed, "#editor")
    def _editor_changed(self) -> None:
        self.attachments.update_for(self.editor.text)

    @on(PromptEditor.Submitted)
    def _submitted(self, message: PromptEditor.Submitted) -> None:
        self.editor.remember(message.text)
        self.editor.set_text("")
        self.sender.submit(message.text, message.follow_up)

    async def ask_mcp_question(self, question: ElicitationQuestion) -> ElicitationAnswer:
        """An MCP server's question (elicitation), as a form."""
        from baton.tui.app.widgets.elicitation import ask_with_form

        return await ask_with_form(self, question)

    def is_prompt_command(self, name: str) -> bool:
        """True when ``/name`` is a prompt template (it expands in the session, not here)."""
        return any(n == name for n, _ in startup.prompt_command_items(self.session))

    def send_prompt_command(self, text: str) -> None:
        """Send a template invocation as a prompt (queued while the agent works)."""
        if self._busy.queues_messages:
            self.sender.queue(text, follow_up=False)
        else:
            self.sender.send(text, None)

    @on(PromptEditor.DequeueRequested)
    def _dequeue(self) -> None:
        texts = self.sender.take_back()
        if not texts:
            return
        current = self.editor.text
        self.editor.set_text("\n\n".join([*texts, current] if current.strip() else texts))

    # -- keys --------------------------------------------------------------------------------------

    def _modal_open(self) -> bool:
        # While starting there is no session to act on: model and thinking keys wait too.
        return isinstance(self.screen, ModalScreen) or self._session is None

    async def _ask_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The session's approver: the panel asks (with a word to the user when away); meanwhile
        the call says it waits, not runs."""
        self.notifier.approval_waiting(request.tool_name)
        self.transcript.set_waiting_for_approval(request.tool_call_id, True)
        try:
            return await self.approval.ask(request)
        finally:
            self.transcript.set_waiting_for_approval(request.tool_call_id, False)

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
        if self._session is not None and self.is_busy:
            self._session.abort()
            return
        now = time.monotonic()
        if now - self._last_interrupt < QUIT_WINDOW:
            self.exit(0)
            return
        self._last_interrupt = now
        if self.editor.text:
            self.editor.set_text("")
        self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW)

    @on(ApprovalPanel.Closed)
    def _approval_closed(self) -> None:
        self.editor.focus()

    @on(PromptEditor.EscapePressed)
    def _escape(self) -> None:
        if self._session is None:
            return  # starting: nothing to abort or rewind yet
        if self.is_busy:
            self._session.abort()
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
        if self._transcript is None:
            return  # starting: nothing to scroll
        # Not animated: a held or repeated key must move a page per press (an animated scroll
        # starts each page from wherever the previous animation has got to).
        if message.direction < 0:
            self._transcript.scroll_page_up(animate=False)
        else:
            self._transcript.scroll_page_down(animate=False)

    def action_pick_model(self) -> None:
        """Ctrl+L: the model picker."""
        if self._modal_open():
            raise SkipAction()
        self.run_worker(dispatch(self, ParsedCommand("model", "")), group="command", exit_on_error=False)

    async def action_cycle_model(self, direction: int) -> None:
        """Ctrl+P / Shift+Ctrl+P: the next / previous favourite model."""
        if self._modal_open():
            raise SkipAction()
        previous = self.session.model
        try:
            model = await self.session.models.cycle(direction)
        except Exception as exc:
            self.notice(f"Could not switch model: {one_line(str(exc), 300)}", "error")
            return
        if model is None:
            self.notice(f"No favourite models to cycle: add favoriteModels to {baton_home_display()}/settings.json, "
                        "or use Ctrl+L.", "warning")
            return
        from baton.tui.app.commands import handoff_summary

        self.notice(model_switched(previous, model, handoff_summary(self, model)))
        self.refresh_status()

    def action_cycle_mode(self) -> None:
        """Shift+Tab: the next mode of ``ask`` (default) → ``plan`` → ``auto`` (accept edits)."""
        if self._modal_open():
            raise SkipAction()
        current = self.session.permissions.mode
        self.set_approval_mode(MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)]
                               if current in MODE_CYCLE else MODE_CYCLE[0])

    async def review_plan(self, request: PlanRequest) -> PlanAnswer:
        """The plan-mode approver: show the plan, return the user's verdict."""
        from baton.sessions.plan_mode import PlanAnswer
        from baton.tui.app.widgets.plan_review import PlanReviewScreen

        answer: asyncio.Future[PlanAnswer] = asyncio.get_running_loop().create_future()

        def settle(result: PlanAnswer | None) -> None:
            if not answer.done():
                answer.set_result(result if result is not None else PlanAnswer("cancel"))

        screen = PlanReviewScreen(request.plan)
        self.push_screen(screen, settle)
        try:
            return await answer
        finally:  # an abort while the plan is shown takes the screen away
            if self.screen is screen:
                screen.dismiss(None)

    def action_cycle_thinking(self) -> None:
        """Ctrl+R: the next thinking level."""
        if self._modal_open():
            raise SkipAction()
        if not self.session.model.reasoning:
            self.notice(f"{self.session.model.ref} does not support thinking.", "warning")
            return
        self.session.models.cycle_thinking()
        self.refresh_status()

    async def action_paste_image(self) -> None:
        """Ctrl+V: attach the clipboard's image (saved under ``$BATON_HOME/tmp``)."""
        from baton.tui.app.clipboard import keep_clipboard_image, read_clipboard_image

        image = await asyncio.to_thread(read_clipboard_image)
        if image.data is None:
            if self.clipboard and self.focused is self.editor:
                self.editor.action_paste()  # what was copied inside the app, as the editor would
                return
            self.notice(f"Ctrl+V: {image.problem}.", "warning")
            return
        from baton.providers.paths import baton_home
        from baton.tui.cli.attachments import reference_for

        try:
            path = keep_clipboard_image(image.data, baton_home() / "tmp")
        except OSError as exc:
            self.notice(f"Ctrl+V: cannot keep the image ({exc.strerror or exc}).", "error")
            return
        self.editor.insert(reference_for(path, self.cwd) + " ")
        self.editor.focus()

    def action_toggle_thinking(self) -> None:
        """Ctrl+T: show or hide all thinking blocks."""
        self._show_thinking = not self._show_thinking
        if self._transcript is not None:  # else applied when the transcript is made
            self._transcript.set_view_flag("-show-thinking", self._show_thinking)

    def action_toggle_tools(self) -> None:
        """Ctrl+O: expand or collapse all tool output (and open or close every subagent's transcript)."""
        self._expand_tools = not self._expand_tools
        if self._transcript is not None:
            self._transcript.set_view_flag("-expand-tools", self._expand_tools)

    @on(PromptEditor.ExternalEditorRequested)
    def _external_editor(self) -> None:
        from baton.tui.app.external_editor import edit_prompt_externally

        edit_prompt_externally(self)

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Open web links from Markdown; ignore anything else (a model wrote them)."""
        event.stop()
        if event.href.startswith(("https://", "http://")):
            self.open_url(event.href)

    # -- model, thinking, approval, compaction -----------------------------------------------------

    async def switch_model(self, model: Model, summary: str | None) -> None:
        """Switch to ``model`` and say so (with what the handoff changes)."""
        previous = self.session.model
        await self.session.models.switch(model)
        self.notice(model_switched(previous, self.session.model, summary))
        self.refresh_status()

    def set_thinking(self, level: str) -> None:
        """Set the thinking level and say what the model will use."""
        from baton.providers.models import THINKING_LEVELS

        known = next((name for name in THINKING_LEVELS if name == level), None)
        if known is None:
            self.notice(f"Unknown thinking level {one_line(level, 40)!r}.", "error")
            return
        applied = self.session.models.set_thinking(known)
        if applied != level:
            self.notice(f"Thinking: {applied} ({self.session.model.ref} cannot do {level}).", "warning")
        else:
            self.notice(f"Thinking: {applied}.")
        self.refresh_status()

    def set_approval_mode(self, mode: str) -> None:
        """Switch the approval mode (``/approval``) and say what it means."""
        applied = self.session.permissions.set_mode(mode)
        meaning = APPROVAL_MEANINGS[applied]
        self.notice(f"Approval: {applied} — {meaning}", "warning" if applied == "full" else "info")
        self.refresh_status()

    async def compact(self, focus: str | None) -> None:
        """``/compact``: summarise the conversation so far."""
        from baton.sessions.errors import NothingToCompactError

        self.set_busy(replace(self._busy, compacting=True))
        if self._events is not None:
            self._events.compaction_reported = False
        self.activity.start("Compacting")
        try:
            await self.session.compact(focus)
        except NothingToCompactError as exc:
            self.notice(f"{exc}.")
        except Exception as exc:
            if self._events is None or not self._events.compaction_reported:
                self.notice(f"Compaction failed: {one_line(str(exc) or type(exc).__name__, 300)}", "error")
        finally:
            self.set_busy(replace(self._busy, compacting=False))


async def run_interactive_async(
    session: CodingSession | None = None,
    *,
    initial_prompt: str | None = None,
    initial_images: list[ImageContent] | None = None,
    inline: bool = False,
    opener: SessionOpener | None = None,
    pick_session: SessionPicker | None = None,
    instant_frame: InstantFrame | None = None,
) -> int:
    """Run the interactive UI inside the running event loop; the exit code. Give the
    ``session``, or an ``opener`` that opens it once the first frame is painted (then
    :class:`SessionOpenError` carries an opening failure). ``inline``: render below the prompt
    instead of on the alternate screen. ``instant_frame``: the
    :class:`~baton.tui.app.instant_frame.InstantFrame` painted before Textual loaded, to take over."""
    from baton.tui.cli.termination import on_terminate

    app = BatonApp(session, initial_prompt=initial_prompt, initial_images=initial_images, opener=opener,
                   pick_session=pick_session)
    app.freeze_startup_objects = True
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


def run_interactive(
    session: CodingSession, *, initial_prompt: str | None = None, initial_images: list[ImageContent] | None = None
) -> int:
    """Run the interactive UI on ``session`` until the user quits; the exit code."""
    return asyncio.run(
        run_interactive_async(session, initial_prompt=initial_prompt, initial_images=initial_images)
    )

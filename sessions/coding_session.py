"""The coding session: one object the TUI, print, JSON, RPC and ACP modes drive.

It owns the :class:`~agent.agent.Agent` and the session file (:class:`SessionStore`), runs a
prompt to its end and switches session files and branches. Each other concern is a part of its
own, found by name:

- ``session.models`` — model and thinking level, handoff preview (:mod:`sessions.model_switching`);
- ``session.compaction`` — when and with which model to compact (:mod:`sessions.compaction_runner`);
- what happens when a run ends: overflow recovery, retry, Stop hooks (:mod:`sessions.after_run`);
- ``session.recorder`` — the session file kept in step (:mod:`sessions.recording`);
- ``session.events`` — subscribers and notices (:mod:`sessions.event_hub`);
- ``session.extensions``, ``session.permissions``, ``session.checkpointing`` — hooks and MCP
  servers, the permission policy, snapshots and rewind; each sees the session only through
  :class:`~sessions.extension_host.SessionHost`;
- opening, and the settings a trusted project brings later (:mod:`sessions.opening`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from baton.agent.agent import Agent, AgentBusyError
from baton.agent.events import AgentEndEvent, AgentEvent, MessageEndEvent, MessageStartEvent
from baton.agent.messages import AgentMessage, BashExecutionMessage
from baton.providers.messages import AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage
from baton.providers.models import Model, ThinkingLevel
from baton.sessions import compaction as compaction_mod
from baton.sessions.advisor import attach as attach_advisor
from baton.sessions.after_run import finish_run, provider_retry_notifier, run_stop_hooks
from baton.sessions.agents import AgentDefinition
from baton.sessions.background_jobs import SessionBackground
from baton.sessions.budget import open_budget, within_budget
from baton.sessions.checkpoints.records import Checkpoint
from baton.sessions.checkpoints.tracker import RestoreMode, RewindResult
from baton.sessions.checkpoints.tracker import attach as attach_checkpoints
from baton.sessions.compaction import CompactionResult
from baton.sessions.compaction_runner import SessionCompaction
from baton.sessions.context_breakdown import ContextBreakdown, context_breakdown
from baton.sessions.entries import CustomMessageEntry, MessageEntry
from baton.sessions.errors import SessionBusyError, SessionError
from baton.sessions.event_hub import EventHub, Listener
from baton.sessions.events import ExtensionNoticeEvent, SessionChangedEvent, SessionChangeReason, todo_update_for
from baton.sessions.extensions import SessionExtensions
from baton.sessions.failover import SessionFailover
from baton.sessions.listing import default_session_dir, find_session
from baton.sessions.mcp_sampling import SessionSampler
from baton.sessions.memory import MemoryFile
from baton.sessions.model_switching import SessionModels
from baton.sessions.opening import SessionParts, adopt_trusted_settings, read_parts
from baton.sessions.options import SessionOptions
from baton.sessions.permissions.setup import install_permissions, resumed_mode
from baton.sessions.plan_mode import SessionPlanMode
from baton.sessions.prompt_commands import PromptCommand
from baton.sessions.queue_report import QueueReport
from baton.sessions.recording import SessionRecorder
from baton.sessions.resume import open_store
from baton.sessions.retry import RetryNumbering, retry_stream_options
from baton.sessions.roles import RoleBinding, role_bindings
from baton.sessions.settings import load_settings
from baton.sessions.stats import ContextUsage, SessionStats, session_stats
from baton.sessions.store import SessionStore
from baton.sessions.subagents import CallIds, SubagentRunner
from baton.sessions.subagents import attach as attach_subagents
from baton.sessions.tokens import count_text_tokens, start_loading_tokenizer
from baton.sessions.tool_gates import ToolGates
from baton.sessions.tree import TreeNode, build_tree
from baton.sessions.user_bash import UserBash
from baton.sessions.web_search import install_web_search
from baton.tools import tool_type
from baton.tools.mcp.manager import McpManager

logger = logging.getLogger(__name__)


def _user_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.text for b in content if isinstance(b, TextContent))
    return ""


class CodingSession:
    """A live coding session. Create with :meth:`open`."""

    def __init__(self, parts: SessionParts) -> None:
        options, settings, store = parts.options, parts.settings, parts.store
        self.options = options
        self.settings = settings
        self.store = store
        self.cwd = parts.cwd
        self.session_dir = parts.session_dir
        self.tool_names = parts.tool_names
        self.context_files: list[Path] = [f.path for f in parts.context_files]
        self._context_texts = [f.content for f in parts.context_files]
        self.prompt_library = parts.prompt_library
        """Skills and prompt templates (``/name`` and ``/skill:name`` expand in :meth:`prompt`)."""
        self.tool_env = parts.tool_env
        """The environment this session's commands, hooks and MCP servers start in."""
        self.process_slots = parts.process_slots
        """At most ``tools.maxProcesses`` of this session's commands run at once."""
        self.events = EventHub()
        self.tool_gates = ToolGates()
        """Checks around every tool call (hooks, permissions, checkpoints register here)."""
        self.permission_hints: dict[str, str] = {}
        """Tool call id → ``"allow"`` or ``"ask"``: what a PreToolUse hook said about that call,
        for the permission policy (which still lets deny rules and protected paths win)."""
        self.abort_on_save_error = True
        """Abort the run when an entry cannot be saved (interactive). Print and JSON modes turn
        it off: the run finishes, its answer is shown, and the save error is reported after."""
        self.abort_signal = asyncio.Event()
        """Set by :meth:`abort`; a new one for each prompt or compaction."""
        self._busy = False
        self._closed = False
        self.retry_numbering = RetryNumbering()
        """Numbers the retries of one request across the adapter's and the session's attempts."""
        self._queue_report = QueueReport()
        self.models = SessionModels(self, parts.requested_thinking, parts.model.provider)
        self.compaction = SessionCompaction(self)
        self.failover = SessionFailover(self)
        """Failing over to ``fallbackModels`` (:mod:`sessions.failover`)."""
        self.budget = open_budget(settings, options, store)
        """What the session may spend (``budget.sessionUsd``, ``--max-cost``)."""
        # Every hook goes into the constructor: nothing patches the agent afterwards.
        self.agent = Agent(
            model=parts.model,
            before_tool_call=self.tool_gates.before,
            after_tool_call=self.tool_gates.after,
            tools=parts.tools,
            system_prompt=parts.system_prompt,
            thinking=parts.thinking,
            messages=parts.messages,
            get_api_key=self.models.api_key,
            transform_context=within_budget(self.budget, self.compaction.refuse_known_overflow),
            stream_options=replace(
                retry_stream_options(settings.retry),
                thinking_handoff=settings.thinking_handoff,
                session_id=store.session_id,
                on_retry=provider_retry_notifier(self),
            ),
        )
        self.failover.restore()
        self.recorder = SessionRecorder(self)
        self._unsubscribe_agent = self.agent.subscribe(self._on_agent_event)
        self.bash = UserBash(self)
        """The user's ``!cmd`` commands."""
        self.background = SessionBackground(self, parts.background)
        """Background commands (``run_in_background``, ``!& cmd``): ``background.registry``."""
        self.extensions = SessionExtensions.create(self.cwd, settings, options=options, environment=self.tool_env)
        """Hooks and MCP servers, and the project trust they need."""
        self.extensions.attach(self)  # first: a permission policy registered later sees the hooks' hints
        self.extensions.on_trust(lambda: adopt_trusted_settings(self))
        self.permissions = install_permissions(self, options.approval)
        """The permission policy, sandbox and approver."""
        self.plan_mode = SessionPlanMode(self, frozenset(t.name for t in parts.tools) - set(parts.tool_names))
        """What plan mode offers the model, and the user's verdict on its plan."""
        install_web_search(self)
        self.extensions.mcp.sampler = SessionSampler(self)  # servers' sampling: asked, bounded, counted
        self.extensions.hooks.approval_mode = lambda: self.permissions.policy.mode
        self.permissions.on_wait = lambda request: self.extensions.notify_waiting(
            tool_type(request.tool_name).claude_code_name or request.tool_name)
        self.recorder.record_settings_if_changed()
        self.recorder.repair_interrupted_tool_calls()
        if options.preload_tokenizer:
            start_loading_tokenizer()
        self.checkpointing = attach_checkpoints(self)
        """Snapshots and rewinds."""
        self.subagents = attach_subagents(self)
        self.advisor = attach_advisor(self)
        """Answers ``ask_model`` (the ``advisor`` role's model)."""
        """Runs the ``task`` tool's subagents (``None`` when ``subagents.maxDepth`` is 0)."""

    @classmethod
    async def open(cls, options: SessionOptions) -> CodingSession:
        """Open (or create) a session as ``options`` say.

        Raises :class:`SessionLockedError` / :class:`SessionFileError` /
        :class:`SessionNotFoundError` for the session file, and :class:`NoModelError` when no
        model is given and none can be resolved."""
        cwd = Path(options.cwd).expanduser().resolve()
        settings = options.settings or load_settings(project_dir=cwd, trust_project=options.trust_project)
        if options.trust_project is not None:  # --trust-project (this run), or never
            settings = settings.with_trust(options.trust_project)
        session_dir = options.session_dir or default_session_dir(cwd)
        store = open_store(options.session, cwd, session_dir, options.new_session_id)
        try:
            return cls(read_parts(options, settings, store, cwd, session_dir))
        except BaseException:
            store.close()
            raise

    # ------------------------------------------------------------------ state

    @property
    def mcp(self) -> McpManager:
        """The MCP servers: ``statuses()``, ``restart(name)``, ``add_servers(...)`` (e.g. from ACP)."""
        return self.extensions.mcp

    @property
    def model(self) -> Model:
        """The current model (used from the next model call on; switch with ``models.switch``)."""
        return self.agent.model

    @property
    def thinking_level(self) -> ThinkingLevel:
        """The current thinking level (clamped to the model)."""
        return self.agent.thinking

    @property
    def session_file(self) -> Path | None:
        """The session file (``None`` in memory only; it appears with the first message)."""
        return self.store.path if self.store.is_persisted else None

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.store.session_id

    @property
    def session_name(self) -> str | None:
        """The name given with :meth:`set_name`, if any."""
        return self.store.name

    @property
    def is_running(self) -> bool:
        """True while a prompt runs (including its compaction and retries)."""
        return self._busy or self.agent.is_running

    @property
    def messages(self) -> list[AgentMessage]:
        """The current branch as the model will see it (compaction summaries included)."""
        return self.agent.messages

    @property
    def warnings(self) -> list[str]:
        """Problems found while loading the session file and the settings."""
        notice = self.checkpointing.notice
        return [
            *self.store.warnings,
            *self.settings.problems,
            *self.prompt_library.warnings,
            *self.extensions.problems,
            *([notice] if notice else []),
            *self.permissions.warnings,
            *(self.subagents.catalog.warnings if self.subagents is not None else []),
            *([lost] if (lost := self.background.lost_notice) else []),
        ]

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent event and session event (sync or async listener)."""
        return self.events.subscribe(listener)

    async def _on_agent_event(self, event: AgentEvent) -> None:
        """The agent's listener: a finished message is saved before the subscribers hear of it."""
        self.retry_numbering.observe(event)
        if isinstance(event, MessageEndEvent):
            self.recorder.save(event.message)
            if isinstance(event.message, AssistantMessage):
                cost = self.model.cost
                if warning := self.budget.observe(event.message, priced=bool(cost.input or cost.output)):
                    self.events.emit_soon(ExtensionNoticeEvent("budget", warning))
            elif isinstance(event.message, ToolResultMessage):
                self.budget.observe_result(event.message.details)  # subagents, the advisor
        await self.events.emit(event)
        if (todos := todo_update_for(event)) is not None:
            await self.events.emit(todos)
        if isinstance(event, AgentEndEvent):
            self.recorder.sync()  # the run's entries reach the disk (a process kill never loses them)
        if isinstance(event, MessageStartEvent | AgentEndEvent):
            self._report_queue()  # a queued message may have been delivered

    def _report_queue(self) -> None:
        """A ``queue_changed`` event when the messages waiting for delivery changed."""
        if (changed := self._queue_report.changed(self.agent)) is not None:
            self.events.emit_soon(changed)

    # ------------------------------------------------------------------ prompting

    def prompt_commands(self) -> list[PromptCommand]:
        """The prompt templates, skills and MCP prompts usable as ``/name`` (name, description,
        argument hint)."""
        commands = self.prompt_library.commands()
        taken = {c.name for c in commands}
        for name, prompt in self.mcp.prompt_commands():
            if name not in taken:
                commands.append(PromptCommand(name, prompt.description or f"MCP prompt {prompt.name}", prompt.hint()))
        return commands

    async def prompt(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Run the agent on ``text`` (plus images) until it is idle again: auto-compaction and
        auto-retry included. A leading ``/template`` or ``/skill:name`` expands first
        (:class:`PromptRefusedError` for an unknown skill). Raises :class:`SessionBusyError`
        while a prompt is running (use :meth:`steer` / :meth:`follow_up`)."""
        if self.is_running:
            raise SessionBusyError("The session is already running; use steer() or follow_up() to queue a message")
        template = self.prompt_library.template_for(text)
        text = self.prompt_library.expand(text)
        with self._running():
            if template is not None:
                from baton.sessions.command_context import with_command_context

                text = await with_command_context(self, template, text)
            self.bash.flush()
            await self.failover.before_prompt()
            await self.compaction.before_prompt()
            self.recorder.raise_save_error()
            if self.abort_signal.is_set():
                return  # aborted while compacting: the prompt is not sent
            await self.agent.prompt(await self.extensions.prompt_messages(text, images))
            await finish_run(self)
            while not self.abort_signal.is_set() and self.agent.queued_messages:
                # Queued after the agent's last look at its queues (while this prompt was still
                # finishing up): deliver now instead of leaving it for the next prompt.
                await self.agent.continue_()
                await finish_run(self)
            await run_stop_hooks(self)
        self.recorder.raise_save_error()

    def steer(self, text: str) -> None:
        """Deliver ``text`` after the current tool batch (templates expand as in :meth:`prompt`)."""
        self.agent.steer(self.prompt_library.expand_or_keep(text))
        self._report_queue()

    def follow_up(self, text: str) -> None:
        """Deliver ``text`` once the current run would end (templates expand as in :meth:`prompt`)."""
        self.agent.follow_up(self.prompt_library.expand_or_keep(text))
        self._report_queue()

    def dequeue(self) -> list[str]:
        """Remove the queued steering and follow-up messages; returns their texts."""
        texts = [_user_text(getattr(m, "content", "")) for m in self.agent.clear_queues()]
        self._report_queue()
        return texts

    def abort(self) -> None:
        """Abort whatever runs: the model call, tools, a compaction, a retry wait, a ``!cmd``."""
        self.abort_signal.set()
        self.bash.abort()
        self.agent.abort()

    def abort_bash(self) -> None:
        """Stop the running ``!cmd`` (only that: a model run goes on)."""
        self.bash.abort()

    async def run_bash(
        self,
        command: str,
        exclude_from_context: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> BashExecutionMessage:
        """Run a shell command for the user (``!cmd``; ``!!cmd``: ``exclude_from_context``).

        ``on_output`` receives the output so far (its tail) while it runs. The result is added
        to the conversation (after the current run, if one is in progress) and to the file.
        :meth:`abort` stops the command."""
        return await self.bash.run(command, exclude_from_context, on_output)

    async def compact(self, focus: str | None = None) -> CompactionResult:
        """Summarise the older part of the conversation now (``/compact [focus]``).

        Raises :class:`CompactionError` when there is nothing to compact or summarising fails,
        :class:`CompactionAborted` when :meth:`abort` interrupted it (nothing changed then), and
        :class:`SessionBusyError` while a prompt runs."""
        if self.is_running:
            raise SessionBusyError("Cannot compact while the session is running; abort first")
        with self._running():
            result = await self.compaction.run("manual", will_retry=False, focus=focus, raise_errors=True)
        assert result is not None
        return result

    @contextlib.contextmanager
    def _running(self) -> Iterator[None]:
        """Busy (with a fresh abort signal) for the block."""
        self._busy = True
        self.abort_signal = asyncio.Event()
        try:
            yield
        finally:
            self._busy = False

    # ------------------------------------------------------------------ session files and branches

    async def new_session(self) -> None:
        """Start a new, empty session (same directory, model and thinking level)."""
        await self._stop()
        old = self.store
        if old.is_persisted:
            self.store = SessionStore.create(self.session_dir, self.cwd)
        else:
            self.store = SessionStore.in_memory(self.cwd)
        old.close()
        self._load_branch("new")
        await self.events.emit(SessionChangedEvent("new"))

    async def fork(self, entry_id: str) -> str:
        """A new session file holding the branch up to (not including) the user message
        ``entry_id``; returns that message's text (for the editor)."""
        entry = self.store.get(entry_id)
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)):
            raise SessionError(f"Entry {entry_id} is not a user message; only user messages can be forked from")
        await self._stop()
        text = _user_text(entry.message.content)
        old = self.store
        self.store = old.fork(entry.parent_id, self.session_dir if old.is_persisted else None)
        old.close()
        self._load_branch("fork")
        await self.events.emit(SessionChangedEvent("fork"))
        return text

    def remember(self, target: MemoryFile, text: str) -> None:
        """``# text``: append a line to the memory file ``target`` and read the context files
        again, so the model sees it from the next request (raises :class:`MemoryFileError`)."""
        from baton.sessions.memory import append_memory
        from baton.sessions.opening import build_session_prompt

        append_memory(target, text)
        if self.options.system_prompt is None:
            tools = [t for t in self.agent.tools if t.name in self.tool_names]
            prompt, files = build_session_prompt(self.options, self.cwd, tools, self.prompt_library, [])
            self.agent.system_prompt = prompt
            self.context_files = [f.path for f in files]
            self._context_texts = [f.content for f in files]

    async def clone(self) -> None:
        """A new session file holding the whole current branch (pi's ``clone``: a fork at the
        current leaf, which it includes); the session continues there."""
        leaf = self.store.leaf_id
        if leaf is None:
            raise SessionError("Cannot clone session: no current entry selected")
        await self._stop()
        old = self.store
        self.store = old.fork(leaf, self.session_dir if old.is_persisted else None)
        old.close()
        self._load_branch("fork")
        await self.events.emit(SessionChangedEvent("fork"))

    def navigate(self, entry_id: str) -> str | None:
        """Move to another point of the tree (``/tree``); the branch left stays in the file.

        Choosing a user message moves to just before it and returns its text (to edit and
        resend); any other entry becomes the new leaf (returns ``None``)."""
        if self.is_running:
            raise SessionBusyError("Cannot move in the session tree while the session is running")
        entry = self.store.get(entry_id)
        if entry is None:
            raise SessionError(f"Entry {entry_id} not found in this session")
        text: str | None = None
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            self.store.branch(entry.parent_id)
            text = _user_text(entry.message.content)
        elif isinstance(entry, CustomMessageEntry):
            self.store.branch(entry.parent_id)
            text = _user_text(entry.content)
        else:
            self.store.branch(entry_id)
        self.agent.replace_messages(self.store.build_context().messages)
        # The live model and thinking level stay as they are; the new branch records them so
        # that resuming it (baton -c) restores what the footer shows.
        self.recorder.record_settings_if_changed()
        self.events.emit_soon(SessionChangedEvent("navigate"))
        return text

    async def switch_session(self, path_or_id: str) -> None:
        """Resume another session file (path or id prefix)."""
        path = find_session(path_or_id, self.cwd, self.session_dir)
        new = SessionStore.open(path, cwd=self.cwd)  # may raise: the current session stays as is
        try:
            await self._stop()
        except BaseException:
            new.close()
            raise
        old, self.store = self.store, new
        old.close()
        self._load_branch("resume")
        await self.events.emit(SessionChangedEvent("resume"))

    def set_name(self, name: str) -> None:
        """Give the session a display name (a ``session_info`` entry)."""
        if not name.strip():
            raise ValueError("A session name cannot be empty")
        self.store.append_session_info(name)

    def fork_points(self) -> list[tuple[str, str]]:
        """``(entry_id, text)`` of the user messages on the current branch (for ``/fork``)."""
        return [
            (e.id, _user_text(e.message.content))
            for e in self.store.branch_path()
            if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)
        ]

    def tree(self) -> list[TreeNode]:
        """Every entry of the session tree, depth first (for ``/tree``)."""
        return build_tree(self.store.entries, self.store.leaf_id, self.store.labels)

    def agents(self) -> list[AgentDefinition]:
        """The agents a ``task`` call may name (``/agents``): built-ins, then the files found."""
        runner = self.subagents or SubagentRunner(self, CallIds(self))
        return list(runner.catalog.agents.values())

    def role_bindings(self) -> list[RoleBinding]:
        """The model roles and what each resolves to now (``/model``)."""
        return role_bindings(self.settings, self.model, self.options.extra_models)

    def checkpoints(self) -> list[Checkpoint]:
        """Points to rewind to, newest first: this branch's prompts (with the files the agent
        changed after each) and the states saved before earlier rewinds."""
        return self.checkpointing.checkpoints()

    async def rewind(
        self, entry_id: str, restore: RestoreMode = "both", *, confirm_hand_edits: bool = False
    ) -> RewindResult:
        """Rewind to checkpoint ``entry_id`` (from :meth:`checkpoints`).

        ``restore="code"`` saves the workspace as a "before rewind" checkpoint (so this can be
        undone), then restores the files the checkpoint tracked and deletes files created since;
        ignored files are left alone. ``"conversation"`` moves the leaf to just before the prompt
        (a branch; ``result.text`` is the prompt). ``"both"`` does both. When files changed by
        hand would be overwritten, nothing is done and ``result.needs_confirmation`` is set:
        call again with ``confirm_hand_edits=True``. Raises :class:`SessionBusyError` while
        running, :class:`SessionError` for an unknown entry."""
        return await self.checkpointing.rewind(entry_id, restore, confirm_hand_edits=confirm_hand_edits)

    # ------------------------------------------------------------------ figures and export

    def stats(self) -> SessionStats:
        """Message counts, tokens and cost over the whole session file (all branches)."""
        return session_stats(self.store, self.session_file)

    def context_usage(self) -> ContextUsage:
        """Tokens in the context now: the last reported usage plus estimates for later messages
        (with no usage yet: estimates, system prompt included)."""
        estimate = compaction_mod.estimate_context_tokens(self.agent.messages)
        tokens = estimate.tokens
        if estimate.last_usage_index < 0:
            tokens += count_text_tokens(self.agent.system_prompt)
        window = self.model.context_window
        return ContextUsage(tokens, window, (100.0 * tokens / window) if window else 0.0)

    def context_breakdown(self) -> ContextBreakdown:
        """What fills the context window now, part by part (``/context``)."""
        return context_breakdown(
            system_prompt=self.agent.system_prompt,
            context_texts=self._context_texts,
            tool_schemas=[tool.schema() for tool in self.agent.tools if self.plan_mode.offers(tool)],
            messages=self.agent.messages,
            window=self.model.context_window,
        )

    def export_html(self, path: Path | None = None) -> Path:
        """Write the current branch as a self-contained HTML page; returns its path."""
        from baton.sessions.export import write_export

        return write_export(self.store, path, "html")

    def export_markdown(self, path: Path | None = None) -> Path:
        """Write the current branch as Markdown; returns its path."""
        from baton.sessions.export import write_export

        return write_export(self.store, path, "markdown")

    # ------------------------------------------------------------------ closing

    async def close(self) -> None:
        """Stop everything and release the session file."""
        if self._closed:
            return
        self._closed = True
        await self._stop()
        await self.background.registry.close()
        await self.extensions.close()
        await self.permissions.close()
        self.bash.flush()
        self._unsubscribe_agent()
        self.store.close()

    async def __aenter__(self) -> CodingSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _stop(self) -> None:
        """Abort any run and wait until idle."""
        if self.is_running:
            self.abort()
            await self.agent.wait_idle()
            for _ in range(200):  # the prompt task finishes its bookkeeping
                if not self._busy:
                    break
                await asyncio.sleep(0.005)
        self.agent.clear_queues()

    def _load_branch(self, reason: SessionChangeReason) -> None:
        """Adopt the store's current branch: messages, and on resume its model and thinking."""
        self.agent.stream_options.session_id = self.store.session_id
        ctx = self.store.build_context()
        self.agent.replace_messages(ctx.messages)
        if reason == "resume":
            self.models.restore(ctx)
            self.permissions.set_mode(resumed_mode(self.permissions.mode, self.store, None))
        self.background.session_file_changed()
        self.recorder.record_settings_if_changed()
        self.recorder.repair_interrupted_tool_calls()


__all__ = [
    "AgentBusyError",
    "CodingSession",
    "ContextUsage",
    "SessionOptions",
    "SessionStats",
]

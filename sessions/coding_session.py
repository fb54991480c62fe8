"""The coding session: one object the TUI, print mode and JSON mode drive.

It owns the :class:`~agent.agent.Agent`, the session file (:class:`SessionStore`), the model and
thinking level, compaction and retry. Every message the agent adds is written to the file (and
synced) in the ``message_end`` handler *before* subscribers hear about it, so whatever a UI has
shown as finished is on disk.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_snake

from baton.agent.agent import Agent, AgentBusyError
from baton.agent.events import AgentEvent, MessageEndEvent
from baton.agent.listeners import Listeners
from baton.agent.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    UserMessage,
)
from baton.providers.models import Model, ThinkingLevel, clamp_thinking_level
from baton.sessions import compaction as compaction_mod
from baton.sessions import context_fit
from baton.sessions.checkpoints.records import Checkpoint
from baton.sessions.checkpoints.tracker import RestoreMode, RewindResult, SessionCheckpoints
from baton.sessions.checkpoints.tracker import attach as attach_checkpoints
from baton.sessions.compaction import CompactionAborted, CompactionResult
from baton.sessions.context_breakdown import ContextBreakdown, context_breakdown
from baton.sessions.context_files import ContextFile, load_append_system_md, load_context_files, load_system_md
from baton.sessions.entries import CompactionEntry, CustomMessageEntry, MessageEntry
from baton.sessions.errors import (
    CompactionError,
    NothingToCompactError,
    PromptRefusedError,
    SessionBusyError,
    SessionError,
    SessionSaveError,
)
from baton.sessions.events import (
    AnySessionEvent,
    AutoCompactionEndEvent,
    AutoCompactionStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionReason,
    ExtensionNoticeEvent,
    ModelChangeEvent,
    SessionChangedEvent,
    SessionChangeReason,
    ThinkingLevelChangeEvent,
)
from baton.sessions.extensions import SessionExtensions
from baton.sessions.handoff import HandoffPreview, handoff_preview
from baton.sessions.listing import default_session_dir, find_session
from baton.sessions.models import (
    ModelChoice,
    available_models,
    find_model,
    model_choices,
    next_in_cycle,
    parse_thinking_level,
    thinking_levels_for,
)
from baton.sessions.options import SessionOptions, read_text_or_file
from baton.sessions.permissions import ApprovalMode, ApprovalModeChangeEvent, Approver, Permissions
from baton.sessions.permissions.rules import RuleSet
from baton.sessions.permissions.setup import install_permissions
from baton.sessions.prompt_commands import PromptCommand, PromptCommands
from baton.sessions.resume import interrupted_tool_results, open_store, resolve_model
from baton.sessions.retry import (
    RETRY_CANCELLED,
    is_retryable_error,
    retry_delay_ms,
    retry_stream_options,
    sleep_unless_aborted,
)
from baton.sessions.settings import Settings, load_settings
from baton.sessions.skills import skills_prompt_section
from baton.sessions.stats import ContextUsage, SessionStats, session_stats
from baton.sessions.store import SessionStore
from baton.sessions.system_prompt import DEFAULT_TOOLS, build_system_prompt
from baton.sessions.tokens import count_text_tokens, start_loading_tokenizer
from baton.sessions.tool_gates import ToolGates
from baton.sessions.tree import TreeNode, build_tree
from baton.sessions.trust import ProjectTrust, ignored_summary
from baton.sessions.user_bash import run_user_bash
from baton.tools.mcp.manager import McpManager
from baton.tools.tool_env import set_pass_env

logger = logging.getLogger(__name__)

Listener = Callable[[AnySessionEvent], Any]


def _user_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.text for b in content if isinstance(b, TextContent))
    return ""


@dataclass(frozen=True, slots=True)
class _AgentSetup:
    """What the session builds its agent from (the session adds its own hooks)."""

    model: Model
    tools: list[Any]
    system_prompt: str
    thinking: ThinkingLevel
    messages: list[AgentMessage]
    requested_thinking: ThinkingLevel
    """The level asked for, before clamping to what the model supports."""


class CodingSession:
    """A live coding session. Create with :meth:`open`."""

    def __init__(
        self,
        *,
        options: SessionOptions,
        settings: Settings,
        store: SessionStore,
        agent_setup: _AgentSetup,
        cwd: Path,
        session_dir: Path,
        tool_names: list[str],
        context_files: list[ContextFile],
        tool_gates: ToolGates | None = None,
        prompt_library: PromptCommands | None = None,
        extensions: SessionExtensions | None = None,
    ) -> None:
        self.options = options
        self.prompt_library = prompt_library or PromptCommands([], [], [])
        """Skills and prompt templates (``/name`` and ``/skill:name`` expand in :meth:`prompt`)."""
        self.extensions = extensions or SessionExtensions.create(cwd, settings.with_trust(False))
        """Hooks and MCP servers, and the project trust they need."""
        self.tool_gates = tool_gates or ToolGates()
        """Checks around every tool call (hooks, permissions, checkpoints register here)."""
        self.permission_hints: dict[str, str] = {}
        """Tool call id → ``"allow"`` or ``"ask"``: what a PreToolUse hook said about that call,
        for the permission policy (which still lets deny rules and protected paths win)."""
        self.settings = settings
        self.store = store
        # Every hook goes into the constructor: nothing patches the agent afterwards.
        self.agent = agent = Agent(
            model=agent_setup.model,
            before_tool_call=self.tool_gates.before,
            after_tool_call=self.tool_gates.after,
            tools=agent_setup.tools,
            system_prompt=agent_setup.system_prompt,
            thinking=agent_setup.thinking,
            messages=agent_setup.messages,
            get_api_key=self._api_key,
            transform_context=self._refuse_known_overflow,
            stream_options=replace(
                retry_stream_options(settings.retry),
                thinking_handoff=settings.thinking_handoff,
                session_id=store.session_id,
                on_retry=self._on_provider_retry,
            ),
        )
        self.cwd = cwd
        self.session_dir = session_dir
        self.tool_names = tool_names
        self.context_files: list[Path] = [f.path for f in context_files]
        self._context_texts = [f.content for f in context_files]
        self._listeners: Listeners[AnySessionEvent] = Listeners("session")
        self._busy = False
        self._signal = asyncio.Event()
        self._bash_signal: asyncio.Event | None = None
        self._pending_bash: list[BashExecutionMessage] = []
        self._persist_error: Exception | None = None
        self.abort_on_save_error = True
        """Abort the run when an entry cannot be saved (interactive). Print and JSON modes turn
        it off: the run finishes, its answer is shown, and the save error is reported after."""
        self._requested_thinking: ThinkingLevel = agent_setup.requested_thinking
        self._key_provider = agent.model.provider
        self._previous_model: Model | None = None
        self._closed = False
        self._tasks: set[asyncio.Future[Any]] = set()
        self._unsubscribe_agent = agent.subscribe(self._on_agent_event)
        self.permissions: Permissions | None = None
        """The permission policy, sandbox and approver (installed by :meth:`open`)."""
        self.checkpointing: SessionCheckpoints | None = None
        """Snapshots and rewinds (``None`` until :meth:`open` has set them up)."""

    # ------------------------------------------------------------------ opening

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
        store = open_store(options.session, cwd, session_dir)
        try:
            return cls._build(options, settings, store, cwd, session_dir)
        except BaseException:
            store.close()
            raise

    @classmethod
    def _build(
        cls, options: SessionOptions, settings: Settings, store: SessionStore, cwd: Path, session_dir: Path
    ) -> CodingSession:
        ctx = store.build_context()
        model = options.model or resolve_model(ctx.model, settings, options.extra_models)
        requested: ThinkingLevel = (
            options.thinking or parse_thinking_level(ctx.thinking_level) or settings.default_thinking_level or "off"
        )
        thinking = clamp_thinking_level(model, requested)
        tool_names = list(DEFAULT_TOOLS) if options.tools is None else list(options.tools)
        tools = _make_tools(tool_names, cwd)
        _limit_tool_processes(settings.tools.max_processes)
        refused: list[str] = []  # project files not read (symlinked out, FIFOs, devices): one line each
        files = load_context_files(cwd, warnings=refused) if options.context_files else []
        library = PromptCommands.load(cwd) if options.prompt_commands else PromptCommands([], [], [])
        custom = read_text_or_file(options.system_prompt) or load_system_md(cwd, warnings=refused)
        appends = [a for a in (load_append_system_md(cwd, warnings=refused),
                               read_text_or_file(options.append_system_prompt)) if a]
        library.warnings[:0] = refused  # the library's warnings are the prompt's files' warnings
        prompt = build_system_prompt(
            cwd=cwd,
            tools=tool_names,
            tool_descriptions={t.name: t.description for t in tools},
            custom_prompt=custom,
            append="\n\n".join(appends) or None,
            context_files=files,
            skills_section=skills_prompt_section(library.skills),
        )
        set_pass_env(settings.bash.pass_env)
        session = cls(
            options=options,
            settings=settings,
            store=store,
            agent_setup=_AgentSetup(model, tools, prompt, thinking, ctx.messages, requested),
            cwd=cwd,
            session_dir=session_dir,
            tool_names=tool_names,
            context_files=files,
            prompt_library=library,
            extensions=SessionExtensions.create(cwd, settings, options=options),
        )
        session.extensions.attach(session, session._extension_notice)
        session.extensions.on_trust(session._apply_project_trust)
        session.permissions = install_permissions(session, options.approval)
        session._record_settings_if_changed()
        session._repair_interrupted_tool_calls()
        if options.preload_tokenizer:
            start_loading_tokenizer()
        session.checkpointing = attach_checkpoints(session)
        return session

    # ------------------------------------------------------------------ state

    @property
    def mcp(self) -> McpManager:
        """The MCP servers: ``statuses()``, ``restart(name)``, ``add_servers(...)`` (e.g. from ACP)."""
        return self.extensions.mcp

    @property
    def model(self) -> Model:
        """The current model (used from the next model call on)."""
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
        notice = self.checkpointing.notice if self.checkpointing is not None else None
        return [
            *self.store.warnings,
            *self.settings.problems,
            *self.prompt_library.warnings,
            *self.extensions.problems,
            *([notice] if notice else []),
            *(self.permissions.warnings if self.permissions is not None else []),
        ]

    # ------------------------------------------------------------------ permissions

    @property
    def approver(self) -> Approver | None:
        """Who answers approval questions (None: nobody can be asked, so such calls are denied)."""
        return self.permissions.approver if self.permissions is not None else None

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        if self.permissions is not None:
            self.permissions.approver = approver

    @property
    def approval_mode(self) -> ApprovalMode:
        """``ask``, ``auto`` or ``full`` (see the README's Permissions section)."""
        return self.permissions.mode if self.permissions is not None else "full"

    def set_approval_mode(self, mode: str) -> ApprovalMode:
        """Switch the approval mode; raises ValueError for anything but ask, auto and full."""
        from baton.sessions.permissions import APPROVAL_MODES

        if mode not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {mode!r}: use ask, auto or full")
        if self.permissions is not None and self.permissions.policy.mode != mode:
            self.permissions.policy.mode = mode
            self._emit_soon(ApprovalModeChangeEvent(mode))
        return self.approval_mode

    # ------------------------------------------------------------------ project trust

    @property
    def pending_trust(self) -> ProjectTrust | None:
        """What of the project waits for the user's trust: settings that widen anything, hooks,
        ``.mcp.json`` servers and the scripts they run (``None``: nothing waits)."""
        return self.extensions.pending_trust

    def trust_project(self, *, remember: bool = True) -> None:
        """The user trusts the project: its waiting settings, hooks and servers apply from now
        (remembered by content hash unless ``remember=False``)."""
        self.extensions.trust_project(remember=remember)

    def ignored_project_settings(self, how_to_trust: str) -> str | None:
        """One line saying exactly what of the project is ignored now (``None``: nothing)."""
        return ignored_summary(self.pending_trust, self.settings.refused, self.cwd, how_to_trust)

    def _apply_project_trust(self) -> None:
        """The settings that waited for trust apply (those read only at start-up from the next one)."""
        held = self.settings.held
        self.settings = self.settings.with_trust()
        if self.permissions is not None:
            section = held.get("permissions")
            allow = section.get("allow") if isinstance(section, dict) else None
            rules = RuleSet.parse(allow if isinstance(allow, list) else [])
            for rule in rules.allow:
                self.permissions.policy.rules.add("allow", rule)
            self.permissions.warnings.extend(rules.problems)
        set_pass_env(self.settings.bash.pass_env)
        _limit_tool_processes(self.settings.tools.max_processes)
        later = [key for key in held if to_snake(key) in _AT_START_ONLY]
        if later:
            self._extension_notice("trust", "info", f"{', '.join(later)} from the project apply from the next start")

    def available_models(self) -> list[Model]:
        """Models that can be used now (keys present, local servers, extra models)."""
        return available_models(self.options.extra_models, self.model)

    def model_choices(self) -> list[ModelChoice]:
        """Every known model, usable ones first; the others name the API key they need."""
        return model_choices(self.options.extra_models, self.model)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent event and session event (sync or async listener)."""
        return self._listeners.add(listener)

    async def _emit(self, event: AnySessionEvent) -> None:
        await self._listeners.emit(event)

    def _emit_soon(self, event: AnySessionEvent) -> None:
        """Emit from synchronous code: sync listeners now, async ones as tasks."""
        for result in self._listeners.emit_nowait(event):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _on_provider_retry(self, attempt: int, max_attempts: int, delay: float, error: str) -> None:
        """The adapter is retrying a request that failed before streaming anything."""
        self._emit_soon(AutoRetryStartEvent(attempt, max_attempts, round(delay * 1000), error, source="provider"))

    async def _on_agent_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            self._persist_message(event.message)
        await self._emit(event)

    def _persist_message(self, message: AgentMessage) -> None:
        if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
            return  # stored as their own entries
        try:
            if isinstance(message, CustomMessage):
                self.store.append_custom_message(message.custom_type, message.content, message.display, message.details)
            else:
                self.store.append_message(message)
        except (OSError, ValueError) as exc:  # ValueError: what JSON cannot encode
            if self._persist_error is None:
                self._persist_error = exc
                if self.abort_on_save_error:  # else the caller reports it once, after the run
                    logger.error("could not write session file: %s", exc)
            if self.abort_on_save_error:
                self.agent.abort()

    def _check_persisted(self) -> None:
        error = self._persist_error
        if error is not None:
            self._persist_error = None
            raise SessionSaveError(f"Could not save the session to {self.store.path}: {error}") from error

    # ------------------------------------------------------------------ prompting

    def prompt_commands(self) -> list[PromptCommand]:
        """The prompt templates and skills usable as ``/name`` (name, description, argument hint)."""
        return self.prompt_library.commands()

    def expand_prompt(self, text: str) -> str:
        """``text`` with a leading ``/template`` or ``/skill:name`` expanded (as :meth:`prompt` does).

        Raises :class:`PromptRefusedError` for an unknown skill."""
        return self.prompt_library.expand(text)

    async def prompt(self, text: str, images: list[ImageContent] | None = None) -> None:
        """Run the agent on ``text`` (plus images) until it is idle again: auto-compaction and
        auto-retry included. Raises :class:`SessionBusyError` while a prompt is running (use
        :meth:`steer` / :meth:`follow_up`)."""
        if self.is_running:
            raise SessionBusyError("The session is already running; use steer() or follow_up() to queue a message")
        text = self.expand_prompt(text)
        self._busy = True
        self._signal = asyncio.Event()
        try:
            self._flush_pending_bash()
            await self._compact_if_needed_before_prompt()
            self._check_persisted()
            if self._signal.is_set():
                return  # aborted while compacting: the prompt is not sent
            await self.agent.prompt(await self.extensions.prompt_messages(text, images))
            await self._after_run()
            while not self._signal.is_set() and self.agent.queued_messages:
                # Queued after the agent's last look at its queues (while this prompt was still
                # finishing up): deliver now instead of leaving it for the next prompt.
                await self.agent.continue_()
                await self._after_run()
            await self._run_stop_hooks()
        finally:
            self._busy = False
        self._check_persisted()

    async def _run_stop_hooks(self) -> None:
        """Stop hooks may send the model back to work (a bounded number of times)."""
        rounds = 0
        while not self._signal.is_set():
            last = self._last_message_if_assistant()
            if last is None or last.stop_reason in ("error", "aborted"):
                return
            follow = await self.extensions.stop_continuation(rounds)
            if follow is None or self._signal.is_set():
                return
            rounds += 1
            await self.agent.prompt(follow)
            await self._after_run()

    def _extension_notice(self, source: str, level: str, text: str) -> None:
        self._emit_soon(ExtensionNoticeEvent(source, text, level))  # type: ignore[arg-type]

    def steer(self, text: str) -> None:
        """Deliver ``text`` after the current tool batch (templates expand as in :meth:`prompt`)."""
        self.agent.steer(self._expand_queued(text))

    def follow_up(self, text: str) -> None:
        """Deliver ``text`` once the current run would end (templates expand as in :meth:`prompt`)."""
        self.agent.follow_up(self._expand_queued(text))

    def _expand_queued(self, text: str) -> str:
        try:
            return self.expand_prompt(text)
        except PromptRefusedError as exc:
            logger.warning("%s; sending the text as typed", exc)
            return text

    def dequeue(self) -> list[str]:
        """Remove the queued steering and follow-up messages; returns their texts."""
        return [_user_text(getattr(m, "content", "")) for m in self.agent.clear_queues()]

    def abort(self) -> None:
        """Abort whatever runs: the model call, tools, a compaction, a retry wait, a ``!cmd``."""
        self._signal.set()
        if self._bash_signal is not None:
            self._bash_signal.set()
        self.agent.abort()

    def abort_bash(self) -> None:
        """Stop the running ``!cmd`` (only that: a model run goes on)."""
        if self._bash_signal is not None:
            self._bash_signal.set()

    async def _after_run(self) -> None:
        """Overflow recovery, auto-retry and threshold compaction after a run ended."""
        adapter_attempts = self.agent.stream_options.max_retries
        try:
            await self._recover_after_run()
        finally:
            self.agent.stream_options.max_retries = adapter_attempts

    async def _recover_after_run(self) -> None:
        overflow_retried = False
        attempt = 0
        while not self._signal.is_set():
            last = self._last_message_if_assistant()
            if last is None:
                break
            if not overflow_retried and self._is_own_overflow(last):
                overflow_retried = True
                result = await self._run_compaction("overflow", will_retry=True)
                if result is None or self._signal.is_set():
                    break
                await self.agent.continue_()
                continue
            retry = self.settings.retry
            if retry.enabled and is_retryable_error(last, self.model.context_window):
                attempt += 1
                if attempt > retry.max_retries:
                    await self._emit(AutoRetryEndEvent(False, attempt - 1, last.error_message))
                    break
                delay = retry_delay_ms(attempt, retry.base_delay_ms)
                await self._emit(
                    AutoRetryStartEvent(attempt, retry.max_retries, delay, last.error_message or "Unknown error")
                )
                self._drop_trailing_error()
                if not await sleep_unless_aborted(delay, self._signal):
                    await self._emit(AutoRetryEndEvent(False, attempt, RETRY_CANCELLED))
                    break
                # The adapter already spent its own attempts on the first failure: each retry of
                # the session is one request, or a dead network costs attempts times rounds.
                self.agent.stream_options.max_retries = 1
                await self.agent.continue_()
                continue
            if attempt > 0:
                ok = last.stop_reason not in ("error", "aborted")
                await self._emit(AutoRetryEndEvent(ok, attempt, None if ok else last.error_message))
            if last.stop_reason not in ("error", "aborted") and self._over_threshold():
                await self._run_compaction("threshold", will_retry=False)
            break

    def _last_message_if_assistant(self) -> AssistantMessage | None:
        messages = self.agent.messages
        if messages and isinstance(messages[-1], AssistantMessage):
            return messages[-1]
        return None

    def _is_own_overflow(self, message: AssistantMessage) -> bool:
        from baton.providers.overflow import is_context_overflow

        model = self.model
        if not self.settings.compaction.enabled or message.stop_reason != "error":
            return False
        if (message.provider, message.model) != (model.provider, model.id):
            return False  # an error from a model we have since left
        return is_context_overflow(message, model.context_window)

    def _drop_trailing_error(self) -> None:
        messages = self.agent.messages
        if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
            self.agent.replace_messages(messages[:-1])

    def _over_threshold(self) -> bool:
        tokens = self.context_usage().tokens
        return compaction_mod.should_compact(tokens, self.model.context_window, self.settings.compaction)

    async def _compact_if_needed_before_prompt(self) -> None:
        leaf = self.store.get(self.store.leaf_id) if self.store.leaf_id else None
        if isinstance(leaf, CompactionEntry):
            return  # just compacted: what is left is the recent part, compacting again cannot help
        if any(isinstance(m, AssistantMessage) for m in self.agent.messages) and self._over_threshold():
            await self._run_compaction("threshold", will_retry=False)

    # ------------------------------------------------------------------ compaction

    async def compact(self, focus: str | None = None) -> CompactionResult:
        """Summarise the older part of the conversation now (``/compact [focus]``).

        Raises :class:`CompactionError` when there is nothing to compact or summarising fails,
        :class:`CompactionAborted` when :meth:`abort` interrupted it (nothing changed then), and
        :class:`SessionBusyError` while a prompt runs."""
        if self.is_running:
            raise SessionBusyError("Cannot compact while the session is running; abort first")
        self._busy = True
        self._signal = asyncio.Event()
        try:
            result = await self._run_compaction("manual", will_retry=False, focus=focus, raise_errors=True)
        finally:
            self._busy = False
        assert result is not None
        return result

    async def _run_compaction(
        self,
        reason: CompactionReason,
        *,
        will_retry: bool,
        focus: str | None = None,
        raise_errors: bool = False,
    ) -> CompactionResult | None:
        model = self.model
        try:
            preparation = compaction_mod.prepare_compaction(
                self.store.branch_path(), self.settings.compaction, model.context_window
            )
        except NothingToCompactError:
            if raise_errors:
                raise
            return None
        await self.extensions.pre_compact(reason, focus)
        await self._emit(AutoCompactionStartEvent(reason))
        try:
            summarizer = self._summarizer_for(preparation)
            result = await compaction_mod.compact(
                preparation,
                summarizer,
                self.settings.compaction,
                api_key=await self._api_key_async(summarizer.provider),
                focus=focus,
                signal=self._signal,
            )
            if self._signal.is_set():
                raise CompactionAborted("Compaction aborted")
            entry = self.store.append_compaction(
                result.summary, result.first_kept_entry_id, result.tokens_before, result.details
            )
        except CompactionAborted as exc:
            await self._emit(AutoCompactionEndEvent(None, aborted=True))
            if raise_errors:
                raise
            logger.info("compaction aborted: %s", exc)
            return None
        except (CompactionError, OSError) as exc:
            message = str(exc) if isinstance(exc, CompactionError) else f"Could not save the compaction: {exc}"
            await self._emit(AutoCompactionEndEvent(None, error_message=message))
            if raise_errors:
                raise CompactionError(message) from exc
            return None
        result.entry_id = entry.id
        messages = self.store.build_context().messages
        last = messages[-1] if messages else None
        if will_retry and isinstance(last, AssistantMessage) and last.stop_reason == "error":
            messages = messages[:-1]  # the overflowing request is retried, without its error
        self.agent.replace_messages(messages)
        await self._emit(AutoCompactionEndEvent(result, will_retry=will_retry))
        return result

    # ------------------------------------------------------------------ models and thinking

    async def set_model(self, model: Model) -> None:
        """Switch models (idle or mid-run: the next model call uses it). Records a
        ``model_change`` entry and clamps the thinking level to what the model supports."""
        previous = self.agent.model
        if model.same_model(previous.provider, previous.api, previous.id) and model == previous:
            return
        self.agent.model = model
        self._previous_model = previous
        self.store.append_model_change(model.provider, model.id)
        await self._emit(ModelChangeEvent(model, previous))
        level = clamp_thinking_level(model, self._requested_thinking)
        if level != self.agent.thinking:
            self.agent.thinking = level
            self.store.append_thinking_level_change(level)
            await self._emit(ThinkingLevelChangeEvent(level))

    async def cycle_model(self, direction: int = 1) -> Model | None:
        """Switch to the next favourite model (settings ``favorite_models``), or the next
        available one; ``None`` when there is nothing else to switch to."""
        candidates = [
            m for m in (find_model(ref, self.options.extra_models) for ref in self.settings.favorite_models) if m
        ] or self.available_models()
        target = next_in_cycle(candidates, self.model, direction)
        if target is None:
            return None
        await self.set_model(target)
        return target

    def set_thinking_level(self, level: ThinkingLevel) -> ThinkingLevel:
        """Set the thinking level (clamped to the model); returns the level in effect."""
        self._requested_thinking = level
        effective = clamp_thinking_level(self.model, level)
        if effective != self.agent.thinking:
            self.agent.thinking = effective
            self.store.append_thinking_level_change(effective)
            self._emit_soon(ThinkingLevelChangeEvent(effective))
        return effective

    def cycle_thinking_level(self) -> ThinkingLevel:
        """The next thinking level the model supports (``off`` for models without reasoning)."""
        levels = thinking_levels_for(self.model)
        current = self.agent.thinking
        index = levels.index(current) if current in levels else -1
        return self.set_thinking_level(levels[(index + 1) % len(levels)])

    def handoff_preview(self, model: Model) -> HandoffPreview:
        """What the next request to ``model`` will lose or change that the current model keeps
        (and whether the conversation must be compacted first to fit its window)."""
        tokens = self.context_usage().tokens
        summarizer = context_fit.choose_summarizer(tokens, model, self._summarizer_candidates(), self._can_call)
        return handoff_preview(
            self.agent.messages, model, thinking_handoff=self.settings.thinking_handoff,
            context_tokens=tokens, summarizer=summarizer, current=self.model,
        )

    # ------------------------------------------------------------------ fitting the window

    def _summarizer_candidates(self) -> list[Model]:
        """Models that held this conversation: the previous model first, then those that
        answered on the branch (newest first)."""
        out = [self._previous_model] if self._previous_model is not None else []
        for provider, model_id in context_fit.models_on_branch(self.agent.messages):
            found = find_model(f"{provider}/{model_id}", [*self.options.extra_models, *out])
            if found is not None and found not in out:
                out.append(found)
        return out

    def _can_call(self, model: Model) -> bool:
        """True when a request to ``model`` can be made now (a key, a local server, or an
        in-process provider that needs none)."""
        if model.is_local or self._api_key(model.provider):
            return True
        from baton.providers.dispatch import resolve

        handler = resolve(model.api)
        return handler is not None and not hasattr(handler, "build_request")

    def _summarizer_for(self, preparation: compaction_mod.CompactionPreparation) -> Model:
        """The model to compact with: the current one when it can read the whole context,
        else one that held it (the previous model first). Raises :class:`CompactionError`
        when the part to summarise fits no callable model (the request would overflow)."""
        tokens = self.context_usage().tokens
        chosen = context_fit.choose_summarizer(tokens, self.model, self._summarizer_candidates(), self._can_call)
        if chosen is not None:
            return chosen
        to_read = context_fit.summary_input_tokens(
            [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        )
        if not context_fit.overflows(to_read, self.model):
            return self.model
        previous = self._previous_model.ref if self._previous_model is not None else "the previous model"
        raise CompactionError(
            f"Cannot compact: the conversation (~{context_fit.format_k(tokens)} tokens) does not fit "
            f"{self.model.ref}'s {context_fit.format_k(self.model.context_window)} window and no model that "
            f"can read it is available (set the key for {previous}, or switch back to it)"
        )

    async def _refuse_known_overflow(self, history: list[AgentMessage], signal: asyncio.Event) -> list[AgentMessage]:
        """The agent's ``transform_context``: a request whose context is known not to fit the
        model is not sent; its error is an overflow, so the session compacts and continues."""
        model = self.model
        if model.context_window <= 0:
            return history
        estimate = compaction_mod.estimate_context_tokens(history)
        tokens = estimate.tokens
        if estimate.last_usage_index < 0:
            tokens += count_text_tokens(self.agent.system_prompt)
        if context_fit.overflows(tokens, model):
            raise context_fit.ContextTooLargeError(
                context_fit.CONTEXT_TOO_LARGE.format(tokens=tokens, model=model.ref, window=model.context_window)
            )
        return history

    def _api_key(self, provider: str) -> str | None:
        if self.options.api_key and provider == self._key_provider:
            return self.options.api_key
        from baton.providers.api_keys import get_api_key

        try:
            return get_api_key(provider)
        except Exception:
            return None

    async def _api_key_async(self, provider: str) -> str | None:
        return self._api_key(provider)

    # ------------------------------------------------------------------ bash (!cmd)

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
        signal = asyncio.Event()
        self._bash_signal = signal
        try:
            message = await run_user_bash(
                command, str(self.cwd), signal, exclude_from_context=exclude_from_context, on_output=on_output
            )
        finally:
            self._bash_signal = None
        if self.is_running:
            self._pending_bash.append(message)
        else:
            self._add_message(message)
        return message

    def _flush_pending_bash(self) -> None:
        pending, self._pending_bash = self._pending_bash, []
        for message in pending:
            self._add_message(message)

    def _add_message(self, message: AgentMessage) -> None:
        self.store.append_message(message)
        self.agent.replace_messages([*self.agent.messages, message])

    # ------------------------------------------------------------------ session management

    async def new_session(self) -> None:
        """Start a new, empty session (same directory, model and thinking level)."""
        await self._stop()
        old = self.store
        if old.is_persisted:
            self.store = SessionStore.create(self.session_dir, self.cwd)
        else:
            self.store = SessionStore.in_memory(self.cwd)
        old.close()
        self.agent.replace_messages([])
        self._after_switch()
        self._record_settings_if_changed()
        await self._emit(SessionChangedEvent("new"))

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
        await self._emit(SessionChangedEvent("fork"))
        return text

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
        self._record_settings_if_changed()
        self._emit_soon(SessionChangedEvent("navigate"))
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
        await self._emit(SessionChangedEvent("resume"))

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

    def checkpoints(self) -> list[Checkpoint]:
        """Points to rewind to, newest first: this branch's prompts (with the files the agent
        changed after each) and the states saved before earlier rewinds."""
        if self.checkpointing is None:
            return []
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
        running, :class:`SessionError` for an unknown entry or when checkpoints are off."""
        if self.checkpointing is None:
            raise SessionError("Checkpoints are not set up for this session")
        return await self.checkpointing.rewind(entry_id, restore, confirm_hand_edits=confirm_hand_edits)

    def tree(self) -> list[TreeNode]:
        """Every entry of the session tree, depth first (for ``/tree``)."""
        return build_tree(self.store.entries, self.store.leaf_id, self.store.labels)

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
            tool_schemas=[tool.schema() for tool in self.agent.tools],
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

    async def close(self) -> None:
        """Stop everything and release the session file."""
        if self._closed:
            return
        self._closed = True
        await self._stop()
        await self.extensions.close()
        if self.permissions is not None:
            await self.permissions.close()
        self._flush_pending_bash()
        self._unsubscribe_agent()
        self.store.close()

    async def __aenter__(self) -> CodingSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ internals

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

    def _after_switch(self) -> None:
        self.agent.stream_options.session_id = self.store.session_id

    def _load_branch(self, reason: SessionChangeReason) -> None:
        """Adopt the store's current branch: messages, and on resume its model and thinking."""
        self._after_switch()
        ctx = self.store.build_context()
        self.agent.replace_messages(ctx.messages)
        if reason == "resume" and ctx.model is not None:
            restored = find_model(f"{ctx.model[0]}/{ctx.model[1]}", self.options.extra_models)
            if restored is not None:
                self.agent.model = restored
        if reason == "resume":
            level = parse_thinking_level(ctx.thinking_level)
            if level is not None:
                self._requested_thinking = level
            self.agent.thinking = clamp_thinking_level(self.model, self._requested_thinking)
        self._record_settings_if_changed()
        self._repair_interrupted_tool_calls()

    def _record_settings_if_changed(self) -> None:
        """Record the model and thinking level when the branch says otherwise (or nothing)."""
        ctx = self.store.build_context()
        model = self.model
        if ctx.model is None or (ctx.model[0], ctx.model[1]) != (model.provider, model.id):
            self.store.append_model_change(model.provider, model.id)
        if ctx.thinking_level != self.agent.thinking:
            self.store.append_thinking_level_change(self.agent.thinking)

    def _repair_interrupted_tool_calls(self) -> None:
        """A branch ending in tool calls without results (crash mid-tool) gets error results
        saying the execution was interrupted."""
        results = interrupted_tool_results(self.agent.messages)
        for result in results:
            self.store.append_message(result)
        if results:
            self.agent.replace_messages([*self.agent.messages, *results])


# ---------------------------------------------------------------------- helpers


_AT_START_ONLY = ("default_model", "checkpoints", "mcp")
"""Project settings a session reads only as it opens: trusted later, they apply from the next start."""


def _limit_tool_processes(limit: int) -> None:
    from baton.tools.process_slots import PROCESS_SLOTS

    PROCESS_SLOTS.set_limit(limit)


def _make_tools(names: list[str], cwd: Path) -> list[Any]:
    if not names:
        return []
    from baton.tools import tools_by_name

    return list(tools_by_name(names, str(cwd)))


__all__ = [
    "AgentBusyError",
    "CodingSession",
    "ContextUsage",
    "SessionOptions",
    "SessionStats",
]

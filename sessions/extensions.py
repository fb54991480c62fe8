"""The session's extensions from the ecosystem: hooks, MCP servers, and the trust they need.

Global hooks (``$BATON_HOME/settings.json``) always apply. A project's hooks
(``.baton/settings.json``) and MCP servers (``.mcp.json``) run commands, so they apply only when
the user trusts the project (:mod:`baton.sessions.trust`): remembered from an earlier answer, given
for this run (``--trust-project``), or given now through :meth:`SessionExtensions.trust_project`
(the app asks). Until then :attr:`SessionExtensions.pending_trust` says what waits. A trusted
hook or server whose workspace script changed since does not run (one notice).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from baton.agent.execution import AfterToolCallContext, AfterToolCallResult, BeforeToolCallResult, ToolCallContext
from baton.agent.messages import AgentMessage, CustomMessage
from baton.providers.messages import ImageContent, TextContent, UserMessage
from baton.providers.paths import baton_home
from baton.sessions.errors import PromptRefusedError
from baton.sessions.event_hub import NoticeLevel
from baton.sessions.events import McpStatusEvent
from baton.sessions.hooks.config import CommandHook, parse_hooks
from baton.sessions.hooks.manager import HookManager, HookVerdict
from baton.sessions.trust import ProjectTrust, ignored_summary, remember_trust, unreadable_mcp_file
from baton.tools.mcp.config import McpServerConfig, merge_servers, read_config_file
from baton.tools.mcp.manager import McpManager
from baton.tools.tool_env import ToolEnvironment

if TYPE_CHECKING:
    from baton.sessions.extension_host import SessionHost
    from baton.sessions.options import SessionOptions
    from baton.sessions.settings import Settings

logger = logging.getLogger(__name__)

HOOK_CONTEXT_TYPE = "hook_context"
MAX_STOP_CONTINUATIONS = 5
NOTIFICATION_PERMISSION = "permission_prompt"
"""The Notification type of an approval the session waits for (Claude Code's name)."""
"""A Stop hook may send the model back to work this many times in a row, no more."""

Notify = Callable[[str, NoticeLevel, str], None]
"""``(source, level, text)``."""


class SessionExtensions:
    """Hooks (and MCP servers) of one session, with the project trust they depend on."""

    def __init__(self, cwd: Path, hooks: HookManager, project_hooks: list[CommandHook],
                 pending_trust: ProjectTrust | None, problems: list[str], mcp: McpManager | None = None,
                 project_servers: list[McpServerConfig] | None = None, start_mcp: bool = True,
                 refused: list[str] | None = None, mcp_enabled: bool = True) -> None:
        self.cwd = cwd
        self._mcp_enabled = mcp_enabled
        """False under ``--no-mcp``: no server starts, the project's included."""
        self.refused = refused or []
        """What the project's settings tried that only the user's own may do (ignored, trusted or not)."""
        self.hooks = hooks
        self.mcp = mcp or McpManager(cwd, baton_home() / "logs")
        """The MCP servers (none configured: an empty manager)."""
        self._project_servers = project_servers or []
        self._start_mcp = start_mcp
        self.pending_trust = pending_trust
        """The project's settings, hooks and ``.mcp.json`` servers waiting for the user's trust
        (``None``: nothing waits)."""
        self.problems = problems
        self._project_hooks = project_hooks
        self._notify: Notify = lambda source, level, text: logger.warning("%s: %s", source, text)
        self._session_start: asyncio.Task[list[str]] | None = None
        self._on_trust: list[Callable[[], object]] = []
        self._background: set[asyncio.Future[HookVerdict]] = set()

    @classmethod
    def create(cls, cwd: Path, settings: Settings, *, options: SessionOptions | None = None,
               environment: ToolEnvironment | None = None) -> SessionExtensions:
        """Read the hooks and MCP servers; the project's are used as ``settings`` decided its trust
        (:attr:`Settings.project_trusted`), each pinned to the workspace files it runs. Their
        commands start in the session's ``environment``."""
        problems: list[str] = []
        global_raw = settings.global_data.get("hooks")
        if global_raw is None and not settings.global_data and not settings.project_data:
            global_raw = (settings.model_extra or {}).get("hooks")  # settings built in code
        global_hooks = parse_hooks(global_raw, "global", problems)
        trust = settings.project_trust
        project_hooks: list[CommandHook] = []
        if trust is not None:
            project_hooks = [replace(hook, pins=trust.hook_pins.get(hook.command, ()))
                             for hook in parse_hooks(settings.held.get("hooks"), "project", problems)]
        trusted = settings.project_trusted
        manager = HookManager([], cwd, lambda: "", lambda: None, environment=environment)
        manager.add(global_hooks)
        if trusted:
            manager.add(project_hooks)
        mcp = McpManager(cwd, baton_home() / "logs", tool_timeout=settings.mcp.tool_timeout_ms / 1000,
                         startup_timeout=settings.mcp.startup_timeout_ms / 1000, environment=environment)
        project_servers: list[McpServerConfig] = []
        if options is None or options.mcp:
            home_servers = read_config_file(baton_home() / "mcp.json", "global", problems)
            if trust is not None:
                project_servers = list(trust.servers)
                problems += trust.mcp_problems
            else:
                problems += unreadable_mcp_file(cwd)
            cli_servers: list[McpServerConfig] = []
            for path in options.mcp_config_files if options is not None else []:
                if not path.is_file():
                    problems.append(f"--mcp-config {path}: no such file")
                cli_servers += read_config_file(path, "cli", problems)
            mcp.add_servers(merge_servers(home_servers, project_servers if trusted else [], cli_servers))
            mcp.problems = problems
        start = options.start_mcp if options is not None else True
        return cls(cwd, manager, project_hooks, settings.pending_trust, problems, mcp, project_servers, start,
                   settings.refused, mcp_enabled=options is None or options.mcp)

    @property
    def project_trusted(self) -> bool:
        """Whether the project's hooks and servers are in use."""
        return self.pending_trust is None

    def attach(self, session: SessionHost) -> None:
        """Wire into ``session``: tool gates (registered first, so a permission policy added
        later sees the hooks' hints), notices, and the SessionStart hooks (started now)."""
        events = session.events
        self._notify = events.notice
        self.hooks.warn = lambda text: events.notice("hooks", "warning", text)
        self.hooks.permission_hints = session.permission_hints
        self.hooks.session_id = lambda: session.session_id
        self.hooks.transcript_path = lambda: str(session.session_file) if session.session_file else None
        session.tool_gates.add_before("hooks", self._before_tool)
        session.tool_gates.add_after("hooks", self._after_tool)
        base_tools = list(session.agent.tools)

        def tools_changed() -> None:
            names = {t.name for t in base_tools}
            session.agent.tools = [*base_tools, *(t for t in self.mcp.tools() if t.name not in names)]
            events.emit_soon(McpStatusEvent(self.mcp.summary()))

        self.mcp.on_tools_changed = tools_changed
        self.mcp.notify = lambda level, text: events.notice("mcp", _level(level), text)
        if self.mcp.connections:
            tools_changed()
            if self._start_mcp:
                self.mcp.start()
        if self.hooks.has("SessionStart"):
            source = "resume" if session.messages else "startup"
            self._session_start = asyncio.ensure_future(self._run_session_start(source))

    def ignored_project_settings(self, how_to_trust: str) -> str | None:
        """One line saying exactly what of the project is ignored now (``None``: nothing)."""
        return ignored_summary(self.pending_trust, self.refused, self.cwd, how_to_trust, servers=self._mcp_enabled)

    def on_trust(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` when the project becomes trusted (e.g. to start its MCP servers)."""
        self._on_trust.append(callback)

    def trust_project(self, *, remember: bool = True) -> None:
        """Trust what waits — the project's settings, hooks and servers (remembered unless
        ``remember=False``); the callbacks apply the settings (see :meth:`on_trust`)."""
        commands = self.pending_trust
        if commands is None:
            return
        if remember:
            try:
                remember_trust(commands)
            except OSError as exc:
                self._notify("trust", "warning", f"could not remember the trust decision: {exc}")
        self.pending_trust = None
        self.hooks.add(self._project_hooks)
        if self._project_servers:
            self.mcp.add_servers(self._project_servers)
        for callback in self._on_trust:
            callback()

    # ---------------------------------------------------------------- events

    async def _before_tool(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        return await self.hooks.before_tool(context, signal)

    async def _after_tool(self, context: AfterToolCallContext, signal: asyncio.Event) -> AfterToolCallResult | None:
        return await self.hooks.after_tool(context, signal)

    async def _run_session_start(self, source: str) -> list[str]:
        verdict = await self.hooks.run("SessionStart", source=source)
        return verdict.context

    async def prompt_messages(self, text: str, images: Sequence[ImageContent] | None) -> list[AgentMessage]:
        """The messages a prompt becomes: the SessionStart context (first prompt only), the user
        message, then what UserPromptSubmit hooks add. Raises :class:`PromptRefusedError` when a
        UserPromptSubmit hook blocks the prompt."""
        out: list[AgentMessage] = []
        if self.mcp.connections:
            await self.mcp.wait_startup()
        if self._session_start is not None:
            task, self._session_start = self._session_start, None
            try:
                out += [_context_message("SessionStart", c) for c in await task]
            except Exception as exc:
                self._notify("hooks", "warning", f"SessionStart hooks failed: {exc}")
        content: list[TextContent | ImageContent] = [TextContent(text=text), *(images or ())]
        if self.mcp.connections:
            content = await self._mcp_content(text, content)
        out.append(UserMessage(content=content))
        if self.hooks.has("UserPromptSubmit"):
            verdict = await self.hooks.run("UserPromptSubmit", prompt=text)
            if verdict.blocked:
                raise PromptRefusedError(f"Prompt blocked by a UserPromptSubmit hook: {verdict.reason}")
            out += [_context_message("UserPromptSubmit", c) for c in verdict.context]
        return out

    async def _mcp_content(self, text: str,
                           content: list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
        """A ``/mcp__server__prompt`` line becomes the server's prompt; ``@server:uri`` mentions
        attach those resources after the prompt (:mod:`tools.mcp.prompts`)."""
        from baton.tools.mcp.prompts import McpPromptError

        try:
            expanded = await self.mcp.expand_prompt(text)
        except McpPromptError as exc:
            raise PromptRefusedError(f"{text.split()[0]}: {exc}") from exc
        if expanded is not None:
            return [*expanded, *content[1:]]
        return [*content, *await self.mcp.mentioned_resources(text)]

    async def stop_continuation(self, round_: int) -> AgentMessage | None:
        """Run the Stop hooks after a run ended; a message to continue with when one blocks."""
        if round_ >= MAX_STOP_CONTINUATIONS or not self.hooks.has("Stop"):
            return None
        verdict = await self.hooks.run("Stop", stop_hook_active=round_ > 0)
        if not verdict.blocked:
            return None
        return CustomMessage(custom_type=HOOK_CONTEXT_TYPE, content=f"Stop hook feedback:\n{verdict.reason}",
                             display=True)

    async def pre_compact(self, trigger: str, focus: str | None) -> None:
        """Run the PreCompact hooks (they cannot stop a compaction)."""
        if self.hooks.has("PreCompact"):
            await self.hooks.run("PreCompact", trigger="manual" if trigger == "manual" else "auto",
                                 custom_instructions=focus or "")

    def start_mcp(self) -> None:
        """Start the MCP servers now (the app calls this after its first paint)."""
        self.mcp.start()

    def notify_waiting(self, tool_name: str) -> None:
        """The session waits for the user's approval of a ``tool_name`` call: the Notification
        hooks run in the background (Claude Code's ``permission_prompt``); they cannot answer it."""
        if not self.hooks.has("Notification"):
            return
        message = f"baton needs your permission to use {tool_name}"
        task = asyncio.ensure_future(self.hooks.run("Notification", match=NOTIFICATION_PERMISSION,
                                                    message=message, notification_type=NOTIFICATION_PERMISSION))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        """Run the SessionEnd hooks, then stop what still runs: the MCP servers, a SessionStart
        hook nobody waited for, Notification hooks still running."""
        if self.hooks.has("SessionEnd"):
            try:
                await self.hooks.run("SessionEnd", reason="other")
            except Exception as exc:  # a hook never keeps baton from closing
                logger.warning("SessionEnd hooks failed: %s", exc)
        for waiting in list(self._background):
            waiting.cancel()
            with contextlib.suppress(BaseException):
                await waiting
        task, self._session_start = self._session_start, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        await self.mcp.close()


def _level(level: str) -> NoticeLevel:
    """An MCP notice's level (``warning`` for anything unexpected)."""
    if level == "info":
        return "info"
    return "error" if level == "error" else "warning"


def _context_message(event: str, text: str) -> CustomMessage:
    return CustomMessage(custom_type=HOOK_CONTEXT_TYPE, content=f"{event} hook additional context:\n{text}",
                         display=False)

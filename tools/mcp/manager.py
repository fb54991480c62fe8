"""All MCP servers of a session: configured, started in the background, their tools collected.

Nothing blocks: :meth:`McpManager.start` only schedules the connections. A prompt waits for
servers still starting at most ``startup_timeout`` (:meth:`McpManager.wait_startup`) and goes on
without the late ones (one notice each); their tools join the agent as soon as they are ready.

Every session has a manager, most have no server: the connection, its prompts and its tools
(with what they import) are loaded once a server is added (~0.6 MB of RSS otherwise).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from baton.agent.tool import AgentTool
from baton.providers.json_types import JsonObject
from baton.providers.messages import ImageContent, TextContent
from baton.tools.mcp.config import McpServerConfig, Source, parse_servers
from baton.tools.mcp.elicitation import ElicitationAnswer, ElicitationQuestion, ElicitationRefused, Elicitor
from baton.tools.mcp.sampling import Sampler, SamplingAnswer, SamplingRefused, SamplingRequest
from baton.tools.tool_env import ToolEnvironment

if TYPE_CHECKING:
    from baton.tools.mcp.connection import McpConnection
    from baton.tools.mcp.prompts import ServerPrompt

Notify = Callable[[str, str], None]
"""``(level, text)``."""


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """One line of ``/mcp`` and ``--list-mcp``."""

    name: str
    status: str
    transport: str
    tool_count: int
    error: str | None
    source: str
    target: str
    tools: tuple[str, ...] = ()


class McpManager:
    """The session's MCP servers."""

    def __init__(self, cwd: Path, log_dir: Path, *, tool_timeout: float = 120.0, startup_timeout: float = 10.0,
                 notify: Notify | None = None, on_tools_changed: Callable[[], None] | None = None,
                 environment: ToolEnvironment | None = None) -> None:
        self.cwd = cwd
        self.environment = environment or ToolEnvironment()
        """The session's environment for the stdio servers it starts (see :mod:`tools.tool_env`)."""
        self.log_dir = log_dir
        self.tool_timeout = tool_timeout
        self.startup_timeout = startup_timeout
        self.notify: Notify = notify or (lambda level, text: None)
        self.on_tools_changed: Callable[[], None] = on_tools_changed or (lambda: None)
        self.problems: list[str] = []
        self.connections: dict[str, McpConnection] = {}
        self._started = False
        self._tools: list[AgentTool] = []
        self._late_noticed: set[str] = set()
        self._previous: dict[str, str] = {}
        self._stopping: set[asyncio.Future[None]] = set()
        self.sampler: Sampler | None = None
        """Answers servers' sampling requests (the session sets it; :mod:`tools.mcp.sampling`)."""
        self.elicitor: Elicitor | None = None
        """Asks the user servers' questions (a front end sets it; :mod:`tools.mcp.elicitation`)."""
        self.one_at_a_time = asyncio.Lock()
        """Calls to tools not marked read-only take turns (see :mod:`tools.mcp.tool`)."""

    # ---------------------------------------------------------------- configuration

    def add_servers(self, servers: Iterable[McpServerConfig] | JsonObject, source: Source = "client") -> list[str]:
        """Add (or replace) servers at run time, e.g. those an editor passes over ACP. Takes
        configs or a ``{"mcpServers": {...}}`` / ``{name: entry}`` object; returns the names
        added. Started at once when the manager runs."""
        if isinstance(servers, dict):
            data: JsonObject = servers if "mcpServers" in servers else {"mcpServers": servers}
            configs = parse_servers(data, source, source, self.problems)
        else:
            configs = list(servers)
        if configs:
            from baton.tools.mcp.connection import McpConnection
        for config in configs:
            old = self.connections.pop(config.name, None)
            if old is not None:
                task = asyncio.ensure_future(old.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)
            connection = McpConnection(config, self.log_dir, cwd=self.cwd, on_change=self._changed,
                                       environment=self.environment)
            connection.sampler = self._sample
            connection.elicitor = self._elicit
            self.connections[config.name] = connection
            if self._started:
                connection.start()
        if configs:
            self._rebuild_tools()
        return [c.name for c in configs]

    @property
    def started(self) -> bool:
        """Whether :meth:`start` ran."""
        return self._started

    def start(self) -> None:
        """Start every server in the background (idempotent, returns at once)."""
        if self._started:
            return
        self._started = True
        for connection in self.connections.values():
            connection.start()

    async def wait_startup(self) -> None:
        """Wait for servers still starting, at most ``startup_timeout`` in all; each one still not
        ready is named once in a notice and the prompt goes on without it."""
        self.start()
        starting = [c for c in self.connections.values() if c.status == "starting"]
        if not starting:
            return
        await asyncio.wait([asyncio.ensure_future(c.wait_ready(self.startup_timeout)) for c in starting])
        for connection in starting:
            if connection.status == "starting" and connection.name not in self._late_noticed:
                self._late_noticed.add(connection.name)
                self.notify("warning", f"MCP server '{connection.name}' is not ready after "
                                       f"{self.startup_timeout:g}s; going on without it for now")

    # ---------------------------------------------------------------- state

    def tools(self) -> list[AgentTool]:
        """The agent tools of every ready (or crashed, to be restarted) server, and the resource
        tools (:mod:`tools.mcp.resources`) while a server offers resources."""
        return list(self._tools)

    def statuses(self) -> list[ServerStatus]:
        """Each server's state, for ``/mcp`` and ``--list-mcp``."""
        return [
            ServerStatus(c.name, c.status, c.config.transport, len(c.tools), c.error, c.config.source,
                         c.config.describe(), tuple(t.name for t in c.tools))
            for c in self.connections.values()
        ]

    def summary(self) -> str:
        """Footer text: ``MCP 2/3`` (ready of all), with what is wrong; empty without servers."""
        if not self.connections:
            return ""
        statuses = [c.status for c in self.connections.values()]
        text = f"MCP {statuses.count('ready')}/{len(statuses)}"
        if "starting" in statuses:
            text += " starting"
        bad = [c.name for c in self.connections.values() if c.status in ("failed", "crashed")]
        if bad:
            text += " ✗ " + ",".join(bad)
        return text

    async def _sample(self, request: SamplingRequest) -> SamplingAnswer:
        if self.sampler is None:
            raise SamplingRefused("this baton session does not answer sampling requests")
        return await self.sampler(request)

    async def _elicit(self, question: ElicitationQuestion) -> ElicitationAnswer:
        if self.elicitor is None:
            raise ElicitationRefused("baton cannot ask the user in this mode (print or JSON)")
        return await self.elicitor(question)

    def prompt_commands(self) -> list[tuple[str, ServerPrompt]]:
        """``(command name, prompt)`` of every ready server's prompts (``/mcp__server__prompt``)."""
        commands: list[tuple[str, ServerPrompt]] = []
        if not self.connections:
            return commands
        from baton.tools.mcp.prompts import command_name

        for connection in self.connections.values():
            if connection.status == "ready":
                commands += [(command_name(connection.name, p.name), p) for p in connection.prompts]
        return commands

    async def expand_prompt(self, text: str) -> list[TextContent | ImageContent] | None:
        """The content a ``/mcp__server__prompt args`` line stands for (``None``: ``text`` is no
        MCP prompt). Raises :class:`~tools.mcp.prompts.McpPromptError` with the reason."""
        head, _, rest = text.strip().partition(" ")
        if not head.startswith("/mcp__") or not self.connections:
            return None
        from baton.tools.mcp.connection import McpCallError
        from baton.tools.mcp.prompts import McpPromptError, command_name, prompt_content, split_arguments

        wanted = head[1:].lower()
        for connection in self.connections.values():
            for prompt in connection.prompts if connection.status == "ready" else []:
                if command_name(connection.name, prompt.name).lower() != wanted:
                    continue
                arguments = split_arguments(prompt, rest)
                try:
                    result = await connection.get_prompt(prompt.name, arguments, timeout=self.tool_timeout)
                except McpCallError as exc:
                    raise McpPromptError(str(exc)) from exc
                return prompt_content(result)
        return None

    async def mentioned_resources(self, text: str) -> list[TextContent | ImageContent]:
        """What the ``@server:uri`` mentions in ``text`` attach (:mod:`tools.mcp.prompts`)."""
        servers = {c.name: c for c in self.connections.values() if c.has_resources}
        content: list[TextContent | ImageContent] = []
        if not servers:
            return content
        from baton.tools.mcp.prompts import mentions, read_mention

        for server, uri in mentions(text, set(servers)):
            content += await read_mention(servers[server], uri, self.tool_timeout)
        return content

    async def restart(self, name: str) -> None:
        """Restart one server (``/mcp restart NAME``); raises KeyError for an unknown name."""
        connection = self.connections[name]
        self._late_noticed.discard(name)
        await connection.restart(manual=True)

    async def close(self) -> None:
        """Stop every server."""
        connections = list(self.connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    # ---------------------------------------------------------------- internals

    def _changed(self, connection: McpConnection) -> None:
        previous = self._previous.get(connection.name)
        self._previous[connection.name] = connection.status
        if connection.status == "failed" and previous != "failed":
            where = f" (log: {connection.log_path})" if connection.config.transport == "stdio" else ""
            self.notify("error", f"MCP server '{connection.name}' failed to start: {connection.error}{where}")
        elif connection.status == "crashed":
            self.notify("warning", f"MCP server '{connection.name}' crashed ({connection.error}); "
                                   "it restarts on the next call")
        elif connection.status == "ready" and connection.name in self._late_noticed:
            self.notify("info", f"MCP server '{connection.name}' is ready ({len(connection.tools)} tools)")
        if connection.status in ("ready", "stopped", "failed"):
            self._rebuild_tools()
        else:
            self.on_tools_changed()

    def _rebuild_tools(self) -> None:
        tools: list[AgentTool] = []
        seen: set[str] = set()
        if self.connections:
            from baton.tools.mcp.tool import make_mcp_tool
        for connection in self.connections.values():
            if connection.status not in ("ready", "crashed", "starting") and not connection.tools:
                continue
            for server_tool in connection.tools:
                tool = make_mcp_tool(connection, server_tool, self.tool_timeout, self.one_at_a_time)
                if tool.name not in seen:
                    seen.add(tool.name)
                    tools.append(tool)
        if any(c.has_resources for c in self.connections.values()):
            from baton.tools.mcp.resources import ListMcpResources, ReadMcpResource

            tools += [t for t in (ReadMcpResource(self), ListMcpResources(self)) if t.name not in seen]
        self._tools = tools
        self.on_tools_changed()

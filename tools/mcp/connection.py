"""One MCP server: started in the background, its tools listed, calls made, crashes survived.

The SDK's client lives in a task of its own (its context must be entered and left in one task);
calls come from the agent's tool tasks. A call whose connection closes (the server crashed or
disconnected) fails with a clear error and marks the server crashed; the next call restarts it,
at most :data:`MAX_RESTARTS_PER_MINUTE` times a minute. Aborting a call cancels it, and the SDK
sends the server ``notifications/cancelled``. An answer the SDK cannot read (nested too deeply,
not JSON-RPC) fails its call at once with the reason and leaves the server connected
(:mod:`tools.mcp.unreadable`). A stdio server's stderr goes to a log file, redacted
(:mod:`tools.mcp.stderr_log`). A stdio server starts in the environment bash commands get (no
credentials, :mod:`tools.tool_env`) plus the ``env`` its entry names.

baton serves the client side of the protocol that :mod:`tools.mcp.client_side` describes (roots,
log messages, list_changed), sends a ``progressToken`` with every call (progress reaches the
tool's live updates), and does not offer tools that require task augmentation (baton runs no
MCP tasks). It speaks the revision the SDK negotiates: 2026-07-28 with a server that has it,
else the initialize handshake (2025-11-25 and older).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO, TypeVar

from baton.providers.errors import BatonError
from baton.providers.json_types import JsonObject
from baton.providers.redact import redact
from baton.tools.file_pins import changed_files
from baton.tools.mcp.client_side import Refresher, ServerLog, roots_result
from baton.tools.mcp.config import McpServerConfig
from baton.tools.mcp.stderr_log import RedactedStderr
from baton.tools.mcp.unreadable import PARSE_ERROR, UNREADABLE_PREFIX, quiet_sdk_parse_errors, readable_answers
from baton.tools.tool_env import ToolEnvironment

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client._transport import Transport
    from mcp.client.session import ClientRequestContext, IncomingMessage
    from mcp_types import (
        CallToolResult,
        CreateMessageRequestParams,
        CreateMessageResult,
        ElicitRequestParams,
        ElicitResult,
        ErrorData,
        GetPromptResult,
        Implementation,
        ListRootsResult,
        ReadResourceResult,
        Resource,
    )

    from baton.tools.mcp.elicitation import Elicitor
    from baton.tools.mcp.prompts import ServerPrompt
    from baton.tools.mcp.sampling import Sampler

Status = Literal["stopped", "starting", "ready", "failed", "crashed"]
MAX_RESTARTS_PER_MINUTE = 3
CONNECT_TIMEOUT_S = 60.0
"""A server that has not finished its handshake by then has failed to start."""
_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http")
_Answer = TypeVar("_Answer")
ProgressReport = Callable[[float, "float | None", "str | None"], None]
"""``(progress, total, message)`` as the server reported them."""


class McpCallError(BatonError):
    """A call could not be made or did not finish (the message says why, for the model)."""


class McpUntrustedChange(BatonError):
    """A project server's workspace script changed since the user trusted the project."""


@dataclass(frozen=True, slots=True)
class ServerTool:
    """A tool as the server lists it. ``read_only``: the server says the tool changes nothing
    (its ``readOnlyHint``), which spares a checkpoint before it runs and nothing else."""

    name: str
    description: str
    input_schema: JsonObject
    read_only: bool = False


_sdk_loaded: asyncio.Future[None] | None = None


async def import_sdk() -> None:
    """Import the SDK in a daemon thread (seconds on a slow machine): the UI stays live, and
    quitting meanwhile does not wait for the import as it would for an executor thread."""
    global _sdk_loaded
    if all(name in sys.modules for name in _SDK_MODULES):
        return
    loop = asyncio.get_running_loop()
    if _sdk_loaded is None or _sdk_loaded.get_loop() is not loop:
        future: asyncio.Future[None] = loop.create_future()
        _sdk_loaded = future

        def settle(error: BaseException | None) -> None:
            if future.done():
                return
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)

        def load() -> None:
            error: BaseException | None = None
            try:
                for name in _SDK_MODULES:
                    importlib.import_module(name)
            except BaseException as exc:
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settle, error)

        threading.Thread(target=load, name="mcp-sdk-import", daemon=True).start()
    await asyncio.shield(_sdk_loaded)


class McpConnection:
    """A configured server and, while it runs, its client."""

    def __init__(self, config: McpServerConfig, log_dir: Path, *, cwd: Path,
                 on_change: Callable[[McpConnection], None] | None = None,
                 environment: ToolEnvironment | None = None) -> None:
        self.config = config
        self.log_dir = log_dir
        self.cwd = cwd
        self.environment = environment or ToolEnvironment()
        """The session's environment for what it starts (a stdio server gets it, plus its ``env``)."""
        self.on_change = on_change or (lambda _: None)
        self.status: Status = "stopped"
        self.error: str | None = None
        self.tools: list[ServerTool] = []
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._restarts: list[float] = []
        self._lock = asyncio.Lock()
        self._unreadable = 0
        """How many messages from the server could not be read (see :mod:`tools.mcp.unreadable`)."""
        self._last_unreadable = ""
        self.skipped_tools: list[str] = []
        """Tools the server lists that baton does not offer (they require task augmentation)."""
        self.server_log = ServerLog(self.log_path)
        self.refresher = Refresher(self._refresh_lists)
        """Lists the tools (and prompts) again when the server says they changed."""
        self.sampler: Sampler | None = None
        self.elicitor: Elicitor | None = None
        """Asks the user the server's questions (the session's; :mod:`tools.mcp.elicitation`)."""
        """Answers the server's sampling requests (the session's; :mod:`tools.mcp.sampling`)."""
        self.prompts: list[ServerPrompt] = []
        """The server's prompts (slash commands, :mod:`tools.mcp.prompts`)."""

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.config.name

    @property
    def log_path(self) -> Path:
        """Where a stdio server's stderr goes."""
        return self.log_dir / f"mcp-{self.config.name}.log"

    def start(self) -> None:
        """Start connecting in the background (no-op while running or starting)."""
        if self._task is not None and not self._task.done():
            return
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._set("starting", None)
        self._task = asyncio.ensure_future(self._run())

    async def wait_ready(self, timeout: float) -> bool:
        """Wait until the server is ready or has failed; False when it is still starting."""
        if self.status != "starting":
            return self.status == "ready"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self.status == "ready"

    async def stop(self) -> None:
        """Close the client (and the server process)."""
        task, self._task = self._task, None
        self._stop.set()
        if task is not None and not task.done():
            if self._client is not None:  # running: let it close the session and the process
                with contextlib.suppress(TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(task), 5)
            if not task.done():  # still starting (nothing to close politely), or stuck
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._client = None
        if self.status in ("ready", "starting"):
            self._set("stopped", None)

    async def restart(self, *, manual: bool = False) -> None:
        """Stop and start again; ``manual`` (``/mcp``) also forgets the crash budget."""
        async with self._lock:
            if manual:
                self._restarts.clear()
            await self.stop()
            self.start()

    # ---------------------------------------------------------------- the client task

    async def _run(self) -> None:
        log: TextIO | None = None
        stderr: RedactedStderr | None = None
        try:
            changed = changed_files(self.config.pins)
            if changed:  # checked at every start: a restart must not run a rewritten server either
                raise McpUntrustedChange(f"not started: {', '.join(changed)} changed since you trusted this "
                                         "project (baton asks again at the next start)")
            await import_sdk()
            from mcp import Client

            quiet_sdk_parse_errors()

            log = self._open_log()
            if self.config.transport != "http":
                stderr, log = RedactedStderr(log), None  # the pump closes the log at EOF
            transport = readable_answers(self._transport(stderr.writer if stderr is not None else None),
                                         self._note_unreadable)
            self.server_log = ServerLog(self.log_path)
            client = Client(transport, client_info=_client_info(), list_roots_callback=self._roots,
                            logging_callback=self.server_log, message_handler=self._on_message,
                            sampling_callback=self._sample, elicitation_callback=self._elicit,
                            log_level="info")
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT_S):
                    await client.__aenter__()
            finally:
                if stderr is not None:
                    stderr.release()  # started (or failed to): the server holds its own copy
            listening: asyncio.Task[None] | None = None
            try:
                self.tools = await self._list_tools(client)
                self.prompts = await self._list_prompts(client)
                self._client = client
                self._set("ready", None)
                self._ready.set()
                listening = self._listen_for_changes(client)
                await self._stop.wait()
            finally:
                self._client = None
                self.refresher.cancel()
                if listening is not None:
                    listening.cancel()
                    with contextlib.suppress(BaseException):
                        await listening
                with contextlib.suppress(BaseException):
                    await client.__aexit__(None, None, None)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self._set("failed", f"did not finish starting within {CONNECT_TIMEOUT_S:g}s")
        except BaseException as exc:  # an ExceptionGroup from the SDK's task groups included
            self._set("failed", _describe(exc))
        finally:
            self._ready.set()
            if stderr is not None:
                stderr.release()
            if log is not None:
                with contextlib.suppress(OSError):
                    log.close()

    def _open_log(self) -> TextIO:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log: TextIO = self.log_path.open("a", encoding="utf-8", errors="replace")
        log.write(redact(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting {self.config.describe()}\n"))
        log.flush()
        return log

    def _note_unreadable(self, line: str) -> None:
        """A message from the server could not be read: a line in its log (kept for a call that
        then times out, to say why)."""
        self._unreadable += 1
        self._last_unreadable = line.removeprefix("baton: ")
        with contextlib.suppress(OSError), self.log_path.open("a", encoding="utf-8", errors="replace") as log:
            log.write(redact(f"{line}\n"))

    def _transport(self, log: TextIO | None) -> Transport:
        config = self.config
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=dict(config.headers)) if config.headers else None
            return streamable_http_client(config.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        cwd = Path(config.cwd).expanduser() if config.cwd else self.cwd
        if not cwd.is_absolute():
            cwd = self.cwd / cwd
        # The user's keys stay out; what the server's entry names (its ``env``) goes in.
        params = StdioServerParameters(command=config.command, args=list(config.args),
                                       env={**self.environment.build(), **config.env}, cwd=str(cwd))
        return stdio_client(params, errlog=log if log is not None else sys.stderr)

    async def _roots(self, context: ClientRequestContext) -> ListRootsResult:
        return roots_result(self.cwd)

    async def _sample(self, context: ClientRequestContext,
                      params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        from baton.tools.mcp.sampling import answer

        return await answer(self.sampler, self.name, params)

    async def _elicit(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        from baton.tools.mcp.elicitation import answer

        return await answer(self.elicitor, self.name, params)

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp_types import PromptListChangedNotification, ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification | PromptListChangedNotification):
            self.refresher.request()

    def _listen_for_changes(self, client: Client) -> asyncio.Task[None] | None:
        """On a 2026 connection, change notices come on a ``subscriptions/listen`` stream."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        capabilities = client.server_capabilities
        tools = capabilities.tools is not None and capabilities.tools.list_changed is True
        prompts = capabilities.prompts is not None and capabilities.prompts.list_changed is True
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (tools or prompts):
            return None

        async def listen() -> None:
            try:
                async with client.listen(tools_list_changed=tools, prompts_list_changed=prompts) as changes:
                    async for _ in changes:
                        self.refresher.request()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server refused or dropped it: tools are still listed at start
                self.server_log.write("info", "baton", f"no change notices: {_describe(exc)}")

        return asyncio.ensure_future(listen())

    async def _refresh_lists(self) -> None:
        client = self._client
        if client is None:
            return
        self.tools = await self._list_tools(client, refresh=True)
        self.prompts = await self._list_prompts(client, refresh=True)
        self.on_change(self)

    async def _list_prompts(self, client: Client, *, refresh: bool = False) -> list[ServerPrompt]:
        """The server's prompts (none when it has none, or cannot list them: a line in its log)."""
        if client.server_capabilities.prompts is None:
            return []
        from baton.tools.mcp.prompts import ServerPrompt

        prompts: list[ServerPrompt] = []
        cursor: str | None = None
        try:
            for _ in range(100):
                page = await client.list_prompts(cursor=cursor, cache_mode="refresh" if refresh else "use")
                prompts += [ServerPrompt.from_sdk(p) for p in page.prompts]
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:
            self.server_log.write("info", "baton", f"its prompts could not be listed: {_describe(exc)}")
            return []
        return prompts

    async def get_prompt(self, name: str, arguments: dict[str, str], *, timeout: float) -> GetPromptResult:
        """``prompts/get`` (errors as for :meth:`call`)."""
        client = await self._ensure_running(timeout)
        return await self._request(f"MCP prompt {self.name}/{name}", f"the prompt {name}",
                                   client.get_prompt(name, arguments), timeout, None)

    async def _list_tools(self, client: Client, *, refresh: bool = False) -> list[ServerTool]:
        tools: list[ServerTool] = []
        skipped: list[str] = []
        cursor: str | None = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
            for tool in page.tools:
                if tool.execution is not None and tool.execution.task_support == "required":
                    skipped.append(tool.name)
                    continue
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}
                hints = tool.annotations
                read_only = hints is not None and hints.read_only_hint is True
                tools.append(ServerTool(tool.name, tool.description or tool.title or "", dict(schema), read_only))
            cursor = page.next_cursor
            if not cursor:
                break
        if skipped and skipped != self.skipped_tools:
            self.server_log.write("info", "baton", "not offered (they require task augmentation, which baton "
                                                   f"does not run): {', '.join(skipped)}")
        self.skipped_tools = skipped
        return tools

    def _set(self, status: Status, error: str | None) -> None:
        self.status, self.error = status, error
        self.on_change(self)

    # ---------------------------------------------------------------- calls

    async def _ensure_running(self, timeout: float) -> Client:
        if self.status in ("crashed", "failed", "stopped"):
            now = time.monotonic()
            self._restarts = [t for t in self._restarts if now - t < 60]
            if len(self._restarts) >= MAX_RESTARTS_PER_MINUTE:
                raise McpCallError(
                    f"MCP server '{self.name}' {self.status} and was already restarted "
                    f"{MAX_RESTARTS_PER_MINUTE} times in the last minute; not restarting yet "
                    f"(last error: {self.error or 'unknown'}; /mcp can restart it)"
                )
            self._restarts.append(now)
            async with self._lock:
                await self.stop()
                self.start()
        if not await self.wait_ready(timeout) or self._client is None:
            reason = self.error or "still starting"
            raise McpCallError(f"MCP server '{self.name}' is not available: {reason}")
        return self._client

    async def call(self, tool: str, arguments: JsonObject, *, timeout: float,
                   signal: asyncio.Event | None = None, on_progress: ProgressReport | None = None) -> CallToolResult:
        """Call ``tool``; the SDK's ``CallToolResult``. Raises :class:`McpCallError` (crash,
        timeout, server unavailable) and :class:`asyncio.CancelledError`-free ``McpAborted`` when
        ``signal`` is set (the server is sent a cancellation). ``on_progress`` hears the server's
        progress notices. When the server said its tools changed during the call, the call
        returns once they are listed again, so the next request offers them."""
        client = await self._ensure_running(timeout)

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        result = await self._request(f"MCP tool {self.name}/{tool}", f"the call to {tool}",
                                     client.call_tool(tool, arguments, progress_callback=report), timeout, signal)
        if self.refresher.pending:
            await self.refresher.settle()
        return result

    @property
    def has_resources(self) -> bool:
        """Whether the running server offers resources."""
        client = self._client
        return client is not None and client.server_capabilities.resources is not None

    async def read_resource(self, uri: str, *, timeout: float,
                            signal: asyncio.Event | None = None) -> ReadResourceResult:
        """``resources/read``: the resource's contents (errors as for :meth:`call`)."""
        client = await self._ensure_running(timeout)
        return await self._request(f"MCP resource {self.name}:{uri}", "a resource read",
                                   client.read_resource(uri), timeout, signal)

    async def list_resources(self, *, timeout: float, limit: int) -> list[Resource]:
        """``resources/list``, page by page, at most ``limit`` resources."""
        client = await self._ensure_running(timeout)
        found: list[Resource] = []
        cursor: str | None = None
        for _ in range(100):
            page = await self._request(f"MCP resources of {self.name}", "a resource listing",
                                       client.list_resources(cursor=cursor), timeout, None)
            found += page.resources
            cursor = page.next_cursor
            if not cursor or len(found) >= limit:
                break
        return found[:limit]

    async def _request(self, label: str, what: str, request: Coroutine[object, object, _Answer], timeout: float,
                       signal: asyncio.Event | None) -> _Answer:
        """Await ``request`` with a timeout and the abort signal; failures as :class:`McpCallError`."""
        unreadable_before = self._unreadable
        call = asyncio.ensure_future(request)
        waiters: set[asyncio.Future[_Answer] | asyncio.Future[Literal[True]]] = {call}
        stop: asyncio.Future[Literal[True]] | None = None
        if signal is not None:
            stop = asyncio.ensure_future(signal.wait())
            waiters.add(stop)
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if stop is not None:
                stop.cancel()
        if call not in done:
            call.cancel()
            with contextlib.suppress(BaseException):
                await call
            if stop is not None and signal is not None and signal.is_set():
                raise McpAborted(f"Aborted: {label} was cancelled (the server was told)")
            meanwhile = f"; meanwhile baton {self._last_unreadable}" if self._unreadable > unreadable_before else ""
            raise McpCallError(f"{label} timed out after {timeout:g}s (the server was told to stop){meanwhile}")
        try:
            return call.result()
        except Exception as exc:
            if _connection_closed(exc):
                self._set("crashed", f"connection closed during {what}")
                self._stop.set()
                raise McpCallError(
                    f"MCP server '{self.name}' crashed or disconnected during {what}; "
                    "it will be restarted on the next call"
                ) from exc
            reason = _unreadable_reason(exc)
            if reason is not None:
                raise McpCallError(
                    f"{label} failed: its answer could not be read: {reason}. "
                    "The server is still connected; its other calls work."
                ) from exc
            raise McpCallError(f"{label} failed: {_describe(exc)}") from exc


class McpAborted(McpCallError):
    """The call was aborted by the user."""


def _connection_closed(exc: BaseException) -> bool:
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    return code == -32000 or isinstance(exc, ConnectionError | EOFError)


def _unreadable_reason(exc: BaseException) -> str | None:
    """The reason of an error :mod:`tools.mcp.unreadable` made for an unreadable answer."""
    error = getattr(exc, "error", None)
    message = getattr(error, "message", None)
    if getattr(error, "code", None) != PARSE_ERROR or not isinstance(message, str):
        return None
    return message.removeprefix(UNREADABLE_PREFIX) if message.startswith(UNREADABLE_PREFIX) else None


def _describe(exc: BaseException) -> str:
    """A one-line reason, unwrapping the SDK's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _client_info() -> Implementation:
    from importlib.metadata import PackageNotFoundError, version

    from mcp_types import Implementation

    try:
        release = version("baton-code")
    except PackageNotFoundError:
        release = "0"
    return Implementation(name="baton", version=release)

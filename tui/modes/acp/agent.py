"""The ACP agent: the protocol methods, mapped onto baton's coding sessions.

Methods take what the SDK's router passes (snake_case keyword arguments, protocol objects as
the SDK's pydantic models) or, on the start-up fast path, the raw JSON parameters; they return
JSON-ready dicts (camelCase, as on the wire). Sessions are baton's JSONL session files, so
``baton -c`` continues an editor's session and ``session/load`` takes any baton session id.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.tui.modes.acp.errors import AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, AcpError

if TYPE_CHECKING:
    from baton.providers.models import Model, ThinkingLevel
    from baton.sessions import CodingSession, SessionOptions
    from baton.sessions.settings import Settings
    from baton.tui.cli.args import CliArgs
    from baton.tui.modes.acp.client import AcpClient
    from baton.tui.modes.acp.session import AcpSession

logger = logging.getLogger(__name__)
PROTOCOL_VERSION = 1
LIST_PAGE = 50
"""Sessions per ``session/list`` answer; ``nextCursor`` leads to the next page."""
_CURSOR_PREFIX = "baton-list:"


def as_dict(value: object) -> JsonObject:
    """A protocol object (SDK model or raw JSON) as a camelCase dict."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if dump is None:
        return {}
    result: JsonObject = dump(mode="json", by_alias=True, exclude_none=True)
    return result


def _required(params: JsonMapping, name: str) -> JsonValue:
    if name not in params:
        raise AcpError(INVALID_PARAMS, f'"{name}" is required')
    return params[name]


def _required_text(params: JsonMapping, name: str) -> str:
    value = _required(params, name)
    if not isinstance(value, str):
        raise AcpError(INVALID_PARAMS, f'"{name}" must be a string')
    return value


@dataclass(eq=False)
class Opening:
    """A new session opening behind its ``session/new`` answer."""

    task: asyncio.Future[None] = field(init=False)
    waiting: int = 0
    """Prompts waiting for it."""
    cancelled: bool = False
    """``session/cancel`` came while prompts waited for it: they end ``cancelled``."""
    closed: bool = False
    """``session/close`` (or shutdown) came while it opened: it is closed as soon as it is open."""


class BatonAcpAgent:
    """Every ACP session of one connection, by id."""

    def __init__(self, args: CliArgs, client: AcpClient) -> None:
        self.args = args
        self.client = client
        self.sessions: dict[str, AcpSession] = {}
        self.openings: dict[str, Opening] = {}
        """New sessions still opening behind their answer, or that failed to open (kept, so that
        each request for one is answered with the cause)."""
        self._warming: threading.Thread | None = None
        self._later: set[asyncio.Future[None]] = set()

    def warm_up(self) -> None:
        """After the first ``session/new`` is answered: probe the sandbox (a bwrap child; the
        result is cached for the process) in a thread while the main thread loads the session
        modules behind the answer, so that the opening finds it done. The permission set-up
        still asks for it as always."""
        from baton.tools.sandbox import probe

        def run() -> None:
            try:
                probe()
            except Exception:  # asked again (and reported) where the session needs it
                logger.exception("the sandbox probe failed")

        self._warming = threading.Thread(target=run, name="baton-sandbox-probe", daemon=True)
        self._warming.start()

    def _warmed(self) -> None:
        """Wait for :meth:`warm_up`'s probe (one probe per process, never two at once)."""
        if self._warming is not None:
            self._warming.join()
            self._warming = None

    # ------------------------------------------------------------------ fast path (raw JSON)

    async def handle_raw(self, method: str, params: JsonMapping) -> JsonObject:
        """``initialize`` / ``session/new`` from raw JSON parameters (before the SDK loads)."""
        if method == "initialize":
            return await self.initialize(
                protocol_version=_required(params, "protocolVersion"),
                client_capabilities=params.get("clientCapabilities"),
                client_info=params.get("clientInfo"),
            )
        if method == "session/new":
            cwd = _required_text(params, "cwd")
            return await self.new_session(cwd=cwd, mcp_servers=params.get("mcpServers") or [])
        raise AcpError(INVALID_PARAMS, f"not a start-up method: {method}")

    # ------------------------------------------------------------------ connection

    async def initialize(
        self, protocol_version: object, client_capabilities: object = None, client_info: object = None, **_: object
    ) -> JsonObject:
        """Version negotiation and capabilities; no authentication (keys come from the environment)."""
        from baton import __version__

        if not isinstance(protocol_version, int):
            raise AcpError(INVALID_PARAMS, '"protocolVersion" must be an integer')
        self.client.capabilities = as_dict(client_capabilities)
        info = as_dict(client_info)
        logger.info("client %s %s, capabilities %s", info.get("name"), info.get("version"), self.client.capabilities)
        return {
            "protocolVersion": min(protocol_version, PROTOCOL_VERSION) if protocol_version >= 1 else PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": True, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
            },
            "agentInfo": {"name": "baton", "title": "Baton", "version": __version__},
            "authMethods": [],
        }

    async def authenticate(self, method_id: str, **_: object) -> JsonObject:
        """Nothing to authenticate: API keys come from the environment or models.json."""
        return {}

    # ------------------------------------------------------------------ sessions

    async def new_session(self, cwd: str, mcp_servers: object = None, **_: object) -> JsonObject:
        """Open a new baton session in ``cwd`` (client MCP servers connect when baton has MCP).

        Answered from the settings and the command line (:mod:`~baton.tui.modes.acp.preview`);
        the session opens behind the answer, and every request for it waits for that."""
        from baton.tui.modes.acp.config import describe
        from baton.tui.modes.acp.preview import preview_session

        options = self._prepare(cwd, "none" if self.args.no_session else "new", self.args.model is not None)
        preview = preview_session(options)
        answer: JsonObject | None = None
        if preview is not None:
            try:
                answer = {"sessionId": preview.session_id, **describe(preview.as_session())}
            except AttributeError:  # the description reads more than the preview has: open first
                logger.warning("session/new answered after the opening: the preview lacks a field", exc_info=True)
        if preview is None or answer is None:
            session = await self._open_with(options, resumed=False)
            acp_session = self._adopt(session, mcp_servers)
            return {"sessionId": acp_session.id, **acp_session.describe()}
        options.new_session_id = preview.session_id
        opening = Opening()
        self.openings[preview.session_id] = opening
        opening.task = asyncio.ensure_future(self._open_behind(opening, options, mcp_servers, answer))
        opening.task.add_done_callback(lambda task: task.cancelled() or task.exception())  # told, not lost
        return answer

    async def _open_behind(self, opening: Opening, options: SessionOptions, mcp_servers: object,
                           answer: JsonObject) -> None:
        """Open the session ``answer`` described; a failure is told to the editor (a notice now,
        an error answer to each request for the session) and kept in :attr:`openings`."""
        session_id = str(answer["sessionId"])
        await asyncio.sleep(0)  # the answer goes out first
        try:
            session = await self._open_with(options, resumed=False)
        except Exception as exc:
            if not isinstance(exc, AcpError):
                logger.exception("opening session %s failed", session_id)
            if not opening.closed:
                self._tell_open_failure(session_id, exc)
            raise
        if opening.closed:  # closed (or shut down) while it opened: nothing of it stays
            await session.close()
            return
        try:
            acp_session = self._adopt(session, mcp_servers)
        except Exception as exc:
            logger.exception("setting up session %s failed", session_id)
            self.sessions.pop(session_id, None)
            await session.close()
            self._tell_open_failure(session_id, exc)
            raise
        del self.openings[session_id]
        self._correct(acp_session, answer)

    def _tell_open_failure(self, session_id: str, exc: Exception) -> None:
        from baton.tui.modes.acp.session import notice_update

        self.client.update(session_id, notice_update(
            "Session not opened", f"The session could not be opened: {_cause(exc)}", "other",
            {"notice": "session_open_failed", "error": _cause(exc)}))

    def _correct(self, session: AcpSession, answer: JsonObject) -> None:
        """Tell the editor what the opened session differs in from the answer it got (nothing,
        unless the preview missed something the opening did)."""
        described = session.describe()
        if all(described.get(key) == answer.get(key) for key in described):
            return
        logger.warning("session %s opened differently from its session/new answer", session.id)
        modes = described.get("modes")
        if isinstance(modes, dict):
            session.send({"sessionUpdate": "current_mode_update", "currentModeId": modes.get("currentModeId")})
        session.send({"sessionUpdate": "config_option_update", "configOptions": described.get("configOptions")})

    async def _ready(self, session_id: str) -> AcpSession:
        """The open session ``session_id``, once its opening is done; an error naming the cause
        when it failed to open."""
        opening = self.openings.get(session_id)
        if opening is not None:
            try:
                await asyncio.shield(opening.task)  # a cancelled request leaves the opening be
            except Exception as exc:
                raise AcpError(INTERNAL_ERROR, f"Session {session_id} could not be opened: {_cause(exc)}",
                               {"details": _cause(exc)}) from exc
        return self._session(session_id)

    async def _settle(self, session_id: str) -> None:
        """Wait for ``session_id``'s opening, if any, to end (a failed one is forgotten)."""
        opening = self.openings.get(session_id)
        if opening is None:
            return
        await asyncio.gather(opening.task, return_exceptions=True)
        if self.openings.get(session_id) is opening:
            del self.openings[session_id]

    async def announce(self, session_id: str) -> None:
        """Send what an editor wants right after ``session/new`` once the session has opened."""
        opening = self.openings.get(session_id)
        if opening is not None:
            await asyncio.gather(opening.task, return_exceptions=True)
        session = self.sessions.get(session_id)
        if session is not None:
            session.announce()

    def announce_later(self, session_id: str) -> None:
        """:meth:`announce` after the current answer is out."""
        task = asyncio.ensure_future(self.announce(session_id))
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: object = None, **_: object) -> JsonObject:
        """Open a stored session and replay it as updates, then answer."""
        acp_session = await self._open_stored(cwd, session_id, mcp_servers)
        acp_session.replay()
        acp_session.announce()
        return acp_session.describe()

    async def resume_session(self, cwd: str, session_id: str, mcp_servers: object = None, **_: object) -> JsonObject:
        """``session/resume``: open a stored session (or keep it, when open already) without
        replaying it; the editor has the conversation."""
        await self._settle(session_id)
        open_already = self.sessions.get(session_id)
        if open_already is not None and open_already.cwd == cwd:
            servers = [as_dict(s) for s in mcp_servers] if isinstance(mcp_servers, list) else []
            if servers:
                connect_mcp_servers(open_already.session, servers)
            return open_already.describe()
        acp_session = await self._open_stored(cwd, session_id, mcp_servers)
        acp_session.announce()
        return acp_session.describe()

    async def close_session(self, session_id: str, **_: object) -> JsonObject:
        """``session/close``: abort its run (saved as aborted), stop its MCP servers, forget it."""
        opening = self.openings.pop(session_id, None)
        if opening is not None:  # still opening (it closes itself once open) or failed to open
            opening.closed = True
            await asyncio.gather(opening.task, return_exceptions=True)
            return {}
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise AcpError(RESOURCE_NOT_FOUND, f"No open session {session_id}")
        session.cancel()
        await session.close()
        return {}

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: object) -> JsonObject:
        """baton's sessions of ``cwd`` (newest first), :data:`LIST_PAGE` at a time."""
        from baton.sessions.listing import list_sessions

        start = _cursor_offset(cursor)
        if not cwd:
            return {"sessions": []}
        infos = list_sessions(cwd, self._session_dir())
        sessions: list[JsonValue] = []
        for info in infos[start:start + LIST_PAGE]:
            title = info.name or " ".join((info.first_message or "").split())[:80]
            entry: JsonObject = {"sessionId": info.id, "cwd": info.cwd, "updatedAt": info.modified.isoformat()}
            if title:
                entry["title"] = title
            sessions.append(entry)
        answer: JsonObject = {"sessions": sessions}
        if start + LIST_PAGE < len(infos):
            answer["nextCursor"] = f"{_CURSOR_PREFIX}{start + LIST_PAGE}"
        return answer

    async def _open_stored(self, cwd: str, session_id: str, mcp_servers: object) -> AcpSession:
        """Open a stored session by id (closing this connection's copy of it first)."""
        from baton.sessions.errors import SessionError
        from baton.sessions.listing import find_session

        await self._settle(session_id)
        existing = self.sessions.pop(session_id, None)
        if existing is not None:
            await existing.close()
        try:
            path = find_session(session_id, cwd, self._session_dir())
        except (SessionError, OSError) as exc:
            raise AcpError(RESOURCE_NOT_FOUND, f"No session {session_id}: {exc}") from exc
        session = await self._open_with(self._prepare(cwd, str(path), True), resumed=True)
        return self._adopt(session, mcp_servers)

    def _session_dir(self) -> Path | None:
        return Path(self.args.session_dir).expanduser() if self.args.session_dir else None

    def _prepare(self, cwd: str, mode: str, model_named: bool) -> SessionOptions:
        """What a session in ``cwd`` opens with (``mode``: ``new``, ``none`` (not saved) or a
        session file): the settings, the model and the command line's options."""
        from baton.sessions.settings import load_settings

        if not Path(cwd).is_absolute():
            raise AcpError(INVALID_PARAMS, f'"cwd" must be an absolute path (got {cwd!r})')
        if not Path(cwd).is_dir():
            raise AcpError(INVALID_PARAMS, f"No such directory: {cwd}")
        settings = load_settings(project_dir=Path(cwd), trust_project=True if self.args.trust_project else None)
        model, level = self._model(settings, mode not in ("new", "none"), model_named)
        return self._options(cwd, mode, settings, model, level)

    async def _open_with(self, options: SessionOptions, resumed: bool) -> CodingSession:
        """Open the session ``options`` describe (after the sandbox probe: one at a time)."""
        from baton.sessions.coding_session import CodingSession  # loads while the probe runs
        from baton.sessions.errors import SessionError

        self._warmed()
        try:
            session = await CodingSession.open(options)
        except (SessionError, ValueError, OSError) as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        if resumed and options.model is None:
            self._warn_without_key(session)
        return session

    def _model(self, settings: Settings, resumed: bool, model_named: bool) -> tuple[Model | None, ThinkingLevel | None]:
        """The model the arguments or settings name (``None`` for a resumed session: its own),
        never the demo model unless it was named."""
        from baton.tui.cli.errors import CliError
        from baton.tui.cli.session_setup import resolve_model

        if resumed and not self.args.model:
            return None, None
        try:
            model, level = resolve_model(self.args, settings)
        except CliError as exc:
            raise AcpError(AUTH_REQUIRED if "API key" in str(exc) else INVALID_PARAMS, str(exc)) from exc
        if model is not None and model.provider == "demo" and not model_named:
            raise AcpError(AUTH_REQUIRED, "No model has an API key: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
                                          "GEMINI_API_KEY (or configure $BATON_HOME/models.json), or start "
                                          "baton with --model PROVIDER/ID")
        return model, level

    def _options(self, cwd: str, mode: str, settings: Settings, model: Model | None,
                 level: ThinkingLevel | None) -> SessionOptions:
        from baton.sessions.options import SessionOptions
        from baton.tui.cli.errors import CliError
        from baton.tui.cli.session_setup import mcp_config_files

        args = self.args
        try:
            config_files = mcp_config_files(args)
        except CliError as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        tools: list[str] | None = [] if args.no_tools else (
            [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None)
        return SessionOptions(
            cwd=Path(cwd), model=model, thinking=level, tools=tools, session=mode,
            session_dir=self._session_dir(), system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt, context_files=not args.no_context_files,
            api_key=args.api_key, settings=settings, preload_tokenizer=False,
            trust_project=True if args.trust_project else None, mcp=not args.no_mcp,
            mcp_config_files=config_files, start_mcp=True, approval=args.approval,
            fallback_models=args.fallback or None, max_cost_usd=args.max_cost,
        )

    def _warn_without_key(self, session: CodingSession) -> None:
        """A resumed session's own model without a key: kept open (the editor can switch to a
        model with a key), said in the log."""
        from baton.tui.cli.errors import CliError
        from baton.tui.cli.session_setup import ensure_api_key

        try:
            ensure_api_key(session.model, self.args.api_key)
        except CliError as exc:
            logger.warning("%s", exc)

    def _adopt(self, session: CodingSession, mcp_servers: object) -> AcpSession:
        from baton.tui.modes.acp.session import AcpSession

        acp_session = AcpSession(session, self.client)
        self.sessions[acp_session.id] = acp_session
        servers = [as_dict(s) for s in mcp_servers] if isinstance(mcp_servers, list) else []
        if servers:
            connect_mcp_servers(session, servers)
        return acp_session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise AcpError(INVALID_PARAMS, f"Unknown session: {session_id}")
        return session

    # ------------------------------------------------------------------ prompting

    async def prompt(self, session_id: str, prompt: list[object], **_: object) -> JsonObject:
        """Run a prompt; updates stream while it runs; answers with the stop reason."""
        from baton.tui.modes.acp.prompt import PromptError, prompt_from_blocks

        opening = self.openings.get(session_id)
        if opening is not None:
            opening.waiting += 1
        try:
            session = await self._ready(session_id)
        finally:
            if opening is not None:
                opening.waiting -= 1
        try:
            text, images = prompt_from_blocks(prompt)
        except (PromptError, ValueError) as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        if not text.strip() and not images:
            raise AcpError(INVALID_PARAMS, "The prompt is empty")
        if opening is not None and opening.cancelled:  # cancelled while the session opened
            return {"stopReason": "cancelled"}
        return await session.prompt(text, images)

    async def cancel(self, session_id: str, **_: object) -> None:
        """Abort the session's run (a notification: nothing is answered; the prompt ends ``cancelled``)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()
        elif session_id in self.openings and self.openings[session_id].waiting:
            self.openings[session_id].cancelled = True  # the prompts waiting for it end cancelled

    # ------------------------------------------------------------------ configuration

    async def set_config_option(self, config_id: str, session_id: str, value: JsonValue, **_: object) -> JsonObject:
        """``session/set_config_option``: the model or the thinking level (``tui/actions``)."""
        options = await (await self._ready(session_id)).set_config_option(config_id, value)
        return {"configOptions": options}

    async def set_session_mode(self, session_id: str, mode_id: str, **_: object) -> JsonObject:
        """``session/set_mode`` (ACP's session modes): same switch as the ``mode`` config option."""
        from baton.tui.actions.approval import MODE_OPTION

        await (await self._ready(session_id)).set_config_option(MODE_OPTION, mode_id)
        return {}

    async def set_session_model(self, session_id: str, model_id: str, **_: object) -> JsonObject:
        """The unstable ``session/set_model``: same switch as the ``model`` config option."""
        from baton.tui.actions.models import MODEL_OPTION

        await (await self._ready(session_id)).set_config_option(MODEL_OPTION, model_id)
        return {}

    async def handle_unstable(self, method: str, params: object) -> JsonObject | None:
        """Methods the SDK's router does not know or keeps behind its unstable flag
        (``session/resume``, ``session/close`` in SDK 0.12); ``None`` for any other method."""
        raw = params if isinstance(params, dict) else {}
        if method == "session/resume":
            return await self.resume_session(_required_text(raw, "cwd"), _required_text(raw, "sessionId"),
                                             raw.get("mcpServers") or [])
        if method == "session/close":
            return await self.close_session(_required_text(raw, "sessionId"))
        if method != "session/set_model":
            return None
        session_id, model_id = raw.get("sessionId"), raw.get("modelId")
        if not isinstance(session_id, str) or not isinstance(model_id, str):
            raise AcpError(INVALID_PARAMS, '"sessionId" and "modelId" are required strings')
        return await self.set_session_model(session_id, model_id)

    # ------------------------------------------------------------------ shutdown

    async def shutdown(self) -> None:
        """Abort every run (saved as aborted) and close every session file (those still opening
        are closed as soon as they are open)."""
        openings, self.openings = list(self.openings.values()), {}
        for opening in openings:
            opening.closed = True
        await asyncio.gather(*(o.task for o in openings), return_exceptions=True)
        self._warmed()  # the probe's bwrap child ends before baton does
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            session.cancel()
        for session in sessions:
            try:
                await session.close()
            except Exception:
                logger.exception("closing session %s failed", session.id)


def _cause(exc: BaseException) -> str:
    """What went wrong, for the editor: the error's own words (its type when it has none)."""
    return str(exc) or type(exc).__name__


def _cursor_offset(cursor: str | None) -> int:
    """Where a ``session/list`` cursor (one this agent gave) continues."""
    if cursor is None:
        return 0
    number = cursor.removeprefix(_CURSOR_PREFIX)
    if not cursor.startswith(_CURSOR_PREFIX) or not number.isdigit():
        raise AcpError(INVALID_PARAMS, f"Not a cursor baton gave: {cursor[:80]!r}")
    return int(number)


def connect_mcp_servers(session: CodingSession, servers: list[JsonObject]) -> None:
    """Connect the editor's MCP servers through the session's MCP manager (started at once)."""
    from baton.tools.mcp.config import configs_from_acp

    problems: list[str] = []
    session.mcp.add_servers(configs_from_acp(servers, problems))
    for problem in problems:
        logger.warning("%s", problem)
    session.mcp.start()

"""The ACP agent: the protocol methods, mapped onto baton's coding sessions.

Methods take what the SDK's router passes (snake_case keyword arguments, protocol objects as
the SDK's pydantic models) or, on the start-up fast path, the raw JSON parameters; they return
JSON-ready dicts (camelCase, as on the wire). Sessions are baton's JSONL session files, so
``baton -c`` continues an editor's session and ``session/load`` takes any baton session id.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.tui.modes.acp.errors import AUTH_REQUIRED, INVALID_PARAMS, RESOURCE_NOT_FOUND, AcpError

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


class BatonAcpAgent:
    """Every ACP session of one connection, by id."""

    def __init__(self, args: CliArgs, client: AcpClient) -> None:
        self.args = args
        self.client = client
        self.sessions: dict[str, AcpSession] = {}
        self._warming: threading.Thread | None = None

    def warm_up(self) -> None:
        """After ``initialize``: probe the sandbox (a bwrap child; the result is cached for the
        process) in a thread while the main thread loads the session modules, so that
        ``session/new`` finds it done. The permission set-up still asks for it as always."""
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
        """Open a new baton session in ``cwd`` (client MCP servers connect when baton has MCP)."""
        session = await self._open(cwd, "none" if self.args.no_session else "new", self.args.model is not None)
        acp_session = self._adopt(session, mcp_servers)
        return {"sessionId": acp_session.id, **acp_session.describe()}

    async def load_session(self, cwd: str, session_id: str, mcp_servers: object = None, **_: object) -> JsonObject:
        """Open a stored session and replay it as updates, then answer."""
        acp_session = await self._open_stored(cwd, session_id, mcp_servers)
        acp_session.replay()
        acp_session.announce()
        return acp_session.describe()

    async def resume_session(self, cwd: str, session_id: str, mcp_servers: object = None, **_: object) -> JsonObject:
        """``session/resume``: open a stored session (or keep it, when open already) without
        replaying it; the editor has the conversation."""
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

        existing = self.sessions.pop(session_id, None)
        if existing is not None:
            await existing.close()
        try:
            path = find_session(session_id, cwd, self._session_dir())
        except (SessionError, OSError) as exc:
            raise AcpError(RESOURCE_NOT_FOUND, f"No session {session_id}: {exc}") from exc
        session = await self._open(cwd, str(path), True)
        return self._adopt(session, mcp_servers)

    def _session_dir(self) -> Path | None:
        return Path(self.args.session_dir).expanduser() if self.args.session_dir else None

    async def _open(self, cwd: str, mode: str, model_named: bool) -> CodingSession:
        """Open a session in ``cwd``: ``mode`` is ``new``, ``none`` (not saved) or a session file."""
        from baton.sessions import CodingSession, load_settings
        from baton.sessions.errors import SessionError

        if not Path(cwd).is_absolute():
            raise AcpError(INVALID_PARAMS, f'"cwd" must be an absolute path (got {cwd!r})')
        if not Path(cwd).is_dir():
            raise AcpError(INVALID_PARAMS, f"No such directory: {cwd}")
        settings = load_settings(project_dir=Path(cwd), trust_project=True if self.args.trust_project else None)
        self._warmed()
        resumed = mode not in ("new", "none")
        model, level = self._model(settings, resumed, model_named)
        try:
            session = await CodingSession.open(self._options(cwd, mode, settings, model, level))
        except (SessionError, ValueError, OSError) as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        if resumed and model is None:
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
        from baton.sessions import SessionOptions
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

        session = self._session(session_id)
        try:
            text, images = prompt_from_blocks(prompt)
        except (PromptError, ValueError) as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        if not text.strip() and not images:
            raise AcpError(INVALID_PARAMS, "The prompt is empty")
        return await session.prompt(text, images)

    async def cancel(self, session_id: str, **_: object) -> None:
        """Abort the session's run (a notification: nothing is answered; the prompt ends ``cancelled``)."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    # ------------------------------------------------------------------ configuration

    async def set_config_option(self, config_id: str, session_id: str, value: JsonValue, **_: object) -> JsonObject:
        """``session/set_config_option``: the model or the thinking level (``tui/actions``)."""
        options = await self._session(session_id).set_config_option(config_id, value)
        return {"configOptions": options}

    async def set_session_mode(self, session_id: str, mode_id: str, **_: object) -> JsonObject:
        """``session/set_mode`` (ACP's session modes): same switch as the ``mode`` config option."""
        from baton.tui.actions.approval import MODE_OPTION

        await self._session(session_id).set_config_option(MODE_OPTION, mode_id)
        return {}

    async def set_session_model(self, session_id: str, model_id: str, **_: object) -> JsonObject:
        """The unstable ``session/set_model``: same switch as the ``model`` config option."""
        from baton.tui.actions.models import MODEL_OPTION

        await self._session(session_id).set_config_option(MODEL_OPTION, model_id)
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
        """Abort every run (saved as aborted) and close every session file."""
        self._warmed()  # the probe's bwrap child ends before baton does
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            session.cancel()
        for session in sessions:
            try:
                await session.close()
            except Exception:
                logger.exception("closing session %s failed", session.id)


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

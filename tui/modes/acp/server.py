"""Running ``baton --mode acp``: JSON-RPC on stdin/stdout, logs in ``$BATON_HOME/logs/acp.log``.

Start-up fast path: importing the ACP SDK builds a few hundred pydantic models (0.5 s and more
on a busy machine), so ``initialize`` and the first ``session/new`` are answered from the raw
JSON before it loads; the SDK's connection (routing, parameter validation, requests to the
editor) takes over from the next message on. Both paths run the same agent methods, and give the
same bytes (``tests/tui/test_acp_start.py``).

``initialize`` is answered before the session modules load too (this module, the agent, the
client, the transport and :mod:`~baton.tui.modes.json_lines` import none of pydantic, the message
models or the tools). ``session/new`` is answered from the settings and the command line
(:mod:`~baton.tui.modes.acp.preview`); the session itself (its tools, agent, permissions and
sandbox, MCP servers) opens behind the answer, while the sandbox probe runs, and every request
for it waits for that.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from baton.tui.cli import start_up_gc
from baton.tui.modes.acp.agent import BatonAcpAgent
from baton.tui.modes.acp.client import AcpClient
from baton.tui.modes.acp.errors import AcpError
from baton.tui.modes.acp.transport import StdioTransport, error_message
from baton.tui.modes.json_lines import LineWriter
from baton.tui.modes.stdio_protocol import claim_stdout, log_to_file, open_stdin

if TYPE_CHECKING:
    from baton.tui.cli.args import CliArgs

logger = logging.getLogger(__name__)
_FAST_METHODS = ("initialize", "session/new")


async def run_acp_mode(args: CliArgs) -> int:
    """Serve ACP until the editor closes stdin (exit code 0) or stdout (1)."""
    out = claim_stdout()
    log_to_file("acp")
    writer = LineWriter(out)
    transport = StdioTransport(await open_stdin(), writer)
    agent = BatonAcpAgent(args, AcpClient(transport))
    try:
        if await answer_start_up(agent, transport):
            await serve_with_sdk(agent, transport)
    finally:
        await agent.shutdown()
        writer.flush()
    return 1 if writer.closed else 0


async def answer_start_up(agent: BatonAcpAgent, transport: StdioTransport) -> bool:
    """Answer ``initialize`` and the first ``session/new`` without the SDK; ``False`` at EOF.

    The cyclic garbage collector waits until then (:mod:`~baton.tui.cli.start_up_gc`: ``main``
    paused it already when the command line asked for ACP mode)."""
    start_up_gc.hold()
    try:
        return await _answer_start_up(agent, transport)
    finally:
        start_up_gc.release()


async def _answer_start_up(agent: BatonAcpAgent, transport: StdioTransport) -> bool:
    while True:
        message = await transport.receive()
        if message is None:
            return False
        method = message.get("method")
        if method not in _FAST_METHODS or "id" not in message:
            transport.push_back(message)
            return True
        params = message.get("params")
        try:
            result = await agent.handle_raw(method, params if isinstance(params, dict) else {})
        except AcpError as exc:
            start_up_gc.release()  # errors leave reference cycles: an editor repeating them is not held
            transport.send_now(error_message(message["id"], exc.code, str(exc), exc.data))
            continue
        except Exception as exc:  # the SDK path reports these as internal errors too
            start_up_gc.release()
            logger.exception("%s failed", method)
            transport.send_now(error_message(message["id"], -32603, "Internal error", {"details": str(exc)}))
            continue
        transport.send_now({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if method == "initialize":
            transport.flush()  # out before the session modules' import holds the loop
        elif method == "session/new":
            transport.flush()  # the answer first: the editor waits for nothing that follows
            agent.warm_up()  # the sandbox probe, while the session's modules load
            await agent.announce(str(result["sessionId"]))  # once the session has opened behind it
            transport.flush()  # out before the SDK's import holds the loop
            return True


async def serve_with_sdk(agent: BatonAcpAgent, transport: StdioTransport) -> None:
    """The rest of the connection, on the SDK's JSON-RPC machinery."""
    from acp.agent.router import build_agent_router
    from acp.connection import Connection
    from acp.exceptions import RequestError

    router = build_agent_router(agent)  # type: ignore[arg-type]

    async def handle(method: str, params: object, is_notification: bool) -> object:
        try:
            if not is_notification:
                result = await agent.handle_unstable(method, params)
                if result is not None:
                    return result
            result = await router(method, params, is_notification)
            if method == "session/new" and isinstance(result, dict) and "sessionId" in result:
                agent.announce_later(str(result["sessionId"]))  # runs after the response is written
            return result
        except AcpError as exc:
            raise RequestError(exc.code, str(exc), exc.data) from exc

    connection = Connection(handle, transport, listening=False)
    agent.client.connection = connection
    try:
        await connection.main_loop()
    finally:
        await agent.shutdown()
        await connection.close()

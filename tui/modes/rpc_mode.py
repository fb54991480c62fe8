"""RPC mode (``baton --mode rpc``): pi's RPC protocol over stdin/stdout.

Commands arrive as JSON lines on stdin (``{"id"?, "type": "<command>", ...}``); every command
gets one ``{"type": "response", "command", "success", "data"? | "error"?}`` line (with the
command's ``id`` when it had one). Events are JSON mode's lines (:func:`json_mode.event_line`).
``prompt`` answers at once and the run streams as events. A line that is not a JSON command gets
an error response (command ``parse``) and the process keeps reading; EOF on stdin aborts any
run, waits for it to be saved, and exits 0; so does a closed stdout (the client died, or stopped
reading), with exit code 1. The command handlers live in :mod:`rpc_commands` (and, for the
commands that are shared actions, in ``tui/actions``); the response shapes in :mod:`rpc_responses`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from baton.providers.json_depth import loads_bounded
from baton.providers.json_types import JsonObject
from baton.sessions.events import BackgroundProcessesEvent, QueueChangedEvent
from baton.tui.modes.json_lines import LineWriter, dumps
from baton.tui.modes.json_mode import event_line
from baton.tui.modes.rpc_commands import RpcCommands
from baton.tui.modes.rpc_responses import RpcError, error_response, response
from baton.tui.modes.session_features import ignored_project_notice
from baton.tui.modes.stdio_protocol import (
    LineTooLong,
    claim_stdout,
    log_to_file,
    open_stdin,
    read_line_unless_closed,
)

if TYPE_CHECKING:
    from baton.sessions import CodingSession


class RpcServer:
    """Reads commands, runs them (each as its own task, as pi does), writes responses and events."""

    def __init__(self, session: CodingSession, writer: LineWriter) -> None:
        self.session = session
        self.writer = writer
        self.commands = RpcCommands(session, self.emit)
        self._tasks: set[asyncio.Task[None]] = set()

    def emit(self, payload: JsonObject) -> None:
        """Write one protocol line."""
        self.writer.write(dumps(payload))

    def on_event(self, event: object) -> None:
        """Session/agent event → JSON line (the commands' bookkeeping first). Not ``queue_changed``
        nor ``background_processes``: baton's own events for its app, which pi's protocol does not have."""
        self.commands.observe(event)
        if not isinstance(event, QueueChangedEvent | BackgroundProcessesEvent):
            self.writer.write(event_line(event))

    def handle_line(self, raw: bytes) -> None:
        """Parse one input line and start its command."""
        if not raw.strip():
            return
        try:
            command = loads_bounded(raw)  # nested too deeply: a parse error like any other
        except ValueError as exc:
            self._emit_in_order(error_response("parse", None, f"Failed to parse command: {exc}"))
            return
        name = command.get("type") if isinstance(command, dict) else None
        if not isinstance(command, dict) or not isinstance(name, str):
            request_id = command.get("id") if isinstance(command, dict) else None
            message = 'Failed to parse command: expected an object with a "type"'
            self._emit_in_order(error_response("parse", request_id, message))
            return
        if name == "extension_ui_response":
            return  # baton has no extension dialogs to answer
        task = asyncio.create_task(self._run(name, command))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _emit_in_order(self, payload: JsonObject) -> None:
        """Emit after the commands already started have taken their first step, so that
        responses keep the order of the input lines where the commands allow it."""
        asyncio.get_running_loop().call_soon(self.emit, payload)

    async def _run(self, name: str, command: JsonObject) -> None:
        request_id = command.get("id")
        try:
            data, with_data = await self.commands.run(name, command)
        except RpcError as exc:
            self.emit(error_response(name, request_id, str(exc)))
        except Exception as exc:  # a failing command must not end the process
            message = str(exc) or type(exc).__name__
            self.emit(error_response(name, request_id, message))
        else:
            self.emit(response(name, request_id, data, with_data=with_data))

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Read commands until EOF, then abort whatever runs and wait for it to finish."""
        while not self.writer.closed:
            try:
                raw = await read_line_unless_closed(reader, self.writer.wait_closed())
            except LineTooLong as exc:
                self.emit(error_response("parse", None, f"Failed to parse command: {exc}"))
                continue
            if raw is None:
                break
            self.handle_line(raw)
        await self.shutdown()

    async def shutdown(self) -> None:
        """Abort any run, let the pending commands answer, flush."""
        self.session.abort()
        await self.commands.wait_idle()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        self.writer.flush()


async def run_rpc_mode(session: CodingSession) -> int:
    """Serve pi's RPC protocol on stdin/stdout until EOF; returns the exit code (0, or 1 when
    stdout closed first)."""
    out = claim_stdout()
    log_to_file("rpc")
    writer = LineWriter(out, on_closed=session.abort)
    server = RpcServer(session, writer)
    unsubscribe = session.subscribe(server.on_event)
    ignored = ignored_project_notice(session)
    if ignored is not None:
        server.emit(ignored)
    try:
        await server.serve(await open_stdin())
    finally:
        unsubscribe()
        writer.flush()
        try:
            out.flush()
        except (OSError, ValueError):
            pass
    return 1 if writer.closed else 0

"""JSON-RPC 2.0 messages over stdin/stdout, one per line: the SDK's message-level transport.

Input that is not a JSON-RPC message gets the error JSON-RPC prescribes (``-32700`` parse error,
``-32600`` invalid request) and reading goes on; the SDK's own stdio reader would drop such a
line silently, or stop on a JSON value that is not an object.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from baton.providers.json_depth import loads_bounded
from baton.tui.modes.json_lines import LineWriter, dumps
from baton.tui.modes.stdio_protocol import LineTooLong, read_line_unless_closed

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_message(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return "a JSON-RPC message must be a JSON object (batches are not supported)"
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        if "params" in message and not isinstance(message["params"], dict | list | type(None)):
            return '"params" must be an object'
        return None
    if "id" not in message:
        return "neither a request, a notification nor a response"
    return None


class StdioTransport:
    """Reads messages from ``reader``, writes them through ``writer`` (flushed once per tick)."""

    def __init__(self, reader: asyncio.StreamReader, writer: LineWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._pushed: deque[dict[str, Any]] = deque()

    def push_back(self, message: dict[str, Any]) -> None:
        """Make ``message`` the next one :meth:`receive` returns."""
        self._pushed.appendleft(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message; ``None`` at EOF, and once stdout has closed (the editor is
        gone: the connection ends, which aborts and saves every run)."""
        if self._pushed:
            return self._pushed.popleft()
        while True:
            if self._writer.closed:
                return None
            try:
                raw = await read_line_unless_closed(self._reader, self._writer.wait_closed())
            except LineTooLong as exc:
                self.send_now(error_message(None, PARSE_ERROR, "Parse error", {"details": str(exc)}))
                continue
            if raw is None:
                return None
            if not raw.strip():
                continue
            try:
                message = loads_bounded(raw)  # nested too deeply: a parse error like any other
            except ValueError as exc:
                self.send_now(error_message(None, PARSE_ERROR, "Parse error", {"details": str(exc)}))
                continue
            problem = _problem(message)
            if problem is not None:
                request_id = message.get("id") if isinstance(message, dict) else None
                self.send_now(error_message(request_id, INVALID_REQUEST, "Invalid request", {"details": problem}))
                continue
            return message

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message (the SDK's Transport interface)."""
        self.send_now(message)

    def send_now(self, message: dict[str, Any]) -> None:
        """Write one message from synchronous code; order on the wire is call order."""
        self._writer.write(dumps(message))

    def flush(self) -> None:
        """Write out what is buffered now (before a long synchronous step)."""
        self._writer.flush()

    async def close(self) -> None:
        """Flush what is buffered."""
        self._writer.flush()

    @property
    def closed(self) -> bool:
        """The reader of stdout has gone."""
        return self._writer.closed

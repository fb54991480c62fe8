"""An answer from an MCP server that the SDK cannot read fails its call at once, with the reason.

The SDK parses each message with pydantic, whose JSON parser stops at about 200 levels of
nesting. Over stdio a line it cannot parse reaches the session only as an ``Exception`` with no
request id: the call it answered waited for ``mcp.toolTimeoutMs`` and then reported a timeout,
and the SDK logged a traceback (with the start of the line) on stderr. Over HTTP the SDK turns it
into a JSON-RPC parse error for the request, whose message is pydantic's, not a reason.

:func:`readable_answers` wraps a transport so that such a message becomes a JSON-RPC error for the
call it answers (its top-level ``id``, found by a scan that needs no parsing), saying why: "nested
too deeply", or "not a valid JSON-RPC message". The connection stays up; the next call goes on.
A message without a recognisable response id (a broken notification or request) answers no call:
the SDK ignores it, the server's log gets a line, and a call that then times out names it.
:func:`quiet_sdk_parse_errors` keeps the SDK's own tracebacks for these off the screen (the
call's error and the server's log say it instead).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from baton.providers.json_depth import MAX_LINE_DEPTH, text_depth_exceeds

PARSE_ERROR = -32700
"""JSON-RPC's code for a message that could not be parsed (the SDK's ``PARSE_ERROR``)."""
UNREADABLE_PREFIX = "unreadable answer: "
"""Starts the message of an error this module made, so a call can tell it from the server's own."""
_SDK_PARSE_MESSAGES = ("Failed to parse JSONRPC message", "Error parsing SSE message", "Error parsing JSON response")
_SDK_LOGGERS = ("mcp.client.stdio", "mcp.client.streamable_http")

# Top-level structure of a JSON text: strings (skipped whole) and brackets, as providers.json_depth.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
_COLON = re.compile(r"\s*:")
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")')
_TOP_KEYS = frozenset({'"id"', '"result"', '"error"', '"method"'})


def reason_for(error: BaseException | str, line: str | None = None) -> str:
    """Why a server's message could not be read, in words (no part of the message itself):
    ``error`` is the SDK's exception or the message of the parse error it made."""
    text = error if isinstance(error, str) else _first_error(error)
    if "recursion limit" in text or (line is not None and text_depth_exceeds(line, MAX_LINE_DEPTH)):
        return f"nested too deeply (more than about {MAX_LINE_DEPTH} levels of JSON)"
    if isinstance(error, str) or not text:  # the SDK's text quotes the message: not repeated
        return "not a valid JSON-RPC message"
    return f"not a valid JSON-RPC message ({text})"


def response_id(line: str) -> int | str | None:
    """The ``id`` of a JSON-RPC response (an object with ``result`` or ``error`` at its top level
    and no ``method``), found without parsing the text (it may be too deep to parse); else None."""
    depth = 0
    found: int | str | None = None
    keys: set[str] = set()
    for match in _TOKENS.finditer(line):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
        elif depth == 1 and token in _TOP_KEYS and _COLON.match(line, match.end()):
            keys.add(token)
            value = _ID_VALUE.match(line, match.end()) if token == '"id"' else None
            if value is not None:
                parsed = json.loads(value.group(1))
                found = parsed if isinstance(parsed, int | str) else None
    if '"method"' in keys or not keys & {'"result"', '"error"'}:
        return None
    return found


def readable_answers(transport: AbstractAsyncContextManager[Any],
                     note: Callable[[str], None]) -> AbstractAsyncContextManager[Any]:
    """``transport`` (an SDK transport: an async context manager yielding ``(read, write)``) with
    unreadable answers turned into errors for their calls; ``note`` gets a line for the log."""

    @asynccontextmanager
    async def wrapped() -> AsyncIterator[Any]:
        async with transport as (read_stream, write_stream):
            yield _ReadableStream(read_stream, note), write_stream

    return wrapped()


class _ReadableStream:
    """The SDK's read stream, with each unreadable item replaced (see :func:`readable_answers`)."""

    def __init__(self, inner: Any, note: Callable[[str], None]) -> None:
        self._inner = inner
        self._note = note

    @property
    def last_context(self) -> Any:
        """The sender's context, as the SDK's own streams carry it."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        """The next item, an unreadable answer replaced by an error for its call."""
        return self._replace(await self._inner.receive())

    def __aiter__(self) -> _ReadableStream:
        return self

    async def __anext__(self) -> Any:
        return self._replace(await self._inner.__anext__())

    async def aclose(self) -> None:
        """Close the SDK's stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> _ReadableStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result

    def _replace(self, item: Any) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import JSONRPCError

        if isinstance(item, ValueError):  # what the SDK's parsers give for a line they cannot read
            source = _input_of(item)
            line = source if isinstance(source, str) else None
            reason = reason_for(item, line)
            request = response_id(line) if line is not None else _object_response_id(source)
            if request is None:
                self._note(f"baton: ignored a message from the server that could not be read: {reason}")
                return item
            self._note(f"baton: the server's answer to request {request} could not be read: {reason}")
            return SessionMessage(_error(request, reason))
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCError) and message.id is not None and _is_sdk_parse_error(message.error):
            reason = reason_for(message.error.message)
            self._note(f"baton: the server's answer to request {message.id} could not be read: {reason}")
            return SessionMessage(_error(message.id, reason))
        return item


def _error(request: int | str, reason: str) -> Any:
    from mcp_types import ErrorData, JSONRPCError

    return JSONRPCError(jsonrpc="2.0", id=request,
                        error=ErrorData(code=PARSE_ERROR, message=UNREADABLE_PREFIX + reason))


def _is_sdk_parse_error(error: Any) -> bool:
    message = str(getattr(error, "message", ""))
    return getattr(error, "code", None) == PARSE_ERROR and message.startswith("Failed to parse")


def _input_of(error: BaseException) -> Any:
    """What a pydantic ``ValidationError`` was given: the line when it is not JSON (too deep
    included), the parsed object when its shape was wrong; ``None`` for any other error."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return None
    try:
        found = errors()
    except Exception:
        return None
    return found[0].get("input") if found else None


def _object_response_id(message: Any) -> int | str | None:
    """:func:`response_id` for a message that parsed as JSON but not as JSON-RPC."""
    if not isinstance(message, dict) or "method" in message or not ("result" in message or "error" in message):
        return None
    request = message.get("id")
    return request if isinstance(request, int | str) and not isinstance(request, bool) else None


def _first_error(error: BaseException) -> str:
    """Pydantic's first complaint, without the input it quotes (it may hold anything)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            found = errors(include_input=False)
            if found:
                return str(found[0].get("msg", ""))
        except Exception:
            pass
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class _QuietParseErrors(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_SDK_PARSE_MESSAGES)


_quiet = _QuietParseErrors()


def quiet_sdk_parse_errors() -> None:
    """Drop the SDK's log records (tracebacks quoting the message) for messages it could not
    parse: the call's error and the server's log say what happened. Idempotent."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _quiet not in logger.filters:
            logger.addFilter(_quiet)

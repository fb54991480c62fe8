"""Unreadable MCP answers: the response id found without parsing, the stream wrapper, the quiet
SDK log. The end-to-end story (SDK servers over stdio and HTTP, ``baton -p``) is in
``tests/tui/test_mcp_unreadable_cli.py``."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import types
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError

from baton.tools.mcp.unreadable import (
    UNREADABLE_PREFIX,
    quiet_sdk_parse_errors,
    readable_answers,
    reason_for,
    response_id,
)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "result", "x", "method"]),
                                                                inner, max_size=3),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"a": value, "id": "inner"}
    return value


@given(request=st.integers(0, 2**31) | st.text(max_size=12), result=_JSON, kind=st.sampled_from(["result", "error"]),
       id_first=st.booleans())
def test_the_top_level_id_of_any_response_is_found(request: int | str, result: Any, kind: str,
                                                   id_first: bool) -> None:
    members = [("id", request), (kind, {"data": result, "id": "not-this-one"})]
    line = json.dumps(dict(members if id_first else members[::-1]))
    assert response_id(line) == request


@given(body=_JSON)
def test_requests_and_notifications_have_no_response_id(body: Any) -> None:
    assert response_id(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "sampling/createMessage",
                                   "params": {"result": body}})) is None
    assert response_id(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"data": body, "id": 3}})) is None


def test_a_line_far_too_deep_to_parse_still_gives_its_id() -> None:
    line = json.dumps({"jsonrpc": "2.0", "result": {"structuredContent": "X"}, "id": 17}).replace(
        '"X"', "[" * 200_000 + "]" * 200_000)
    assert response_id(line) == 17
    assert "nested too deeply" in reason_for("Invalid JSON: recursion limit exceeded at line 1")
    assert response_id('{"result": {"note": "\\"id\\": 5"}, "id": "abc"}') == "abc"
    assert response_id("not json at all") is None


def _parsed(line: str) -> Any:
    """What the SDK's stdio transport puts on its read stream for ``line``."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def test_the_stream_turns_unreadable_answers_into_errors_for_their_calls() -> None:
    deep_answer = json.dumps({"jsonrpc": "2.0", "id": 5, "result": {"content": [], "structuredContent": _nested(240)}})
    deep_notice = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": _nested(240)}})
    wrong_shape = json.dumps({"jsonrpc": "2.0", "id": "r-6", "result": 5})
    fine = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})
    send, receive = anyio.create_memory_object_stream[Any](10)
    notes: list[str] = []

    async with send:
        for line in (deep_answer, deep_notice, wrong_shape, fine):
            await send.send(_parsed(line))

    class Transport:
        async def __aenter__(self) -> tuple[Any, Any]:
            return receive, None

        async def __aexit__(self, *exc: Any) -> None:
            await receive.aclose()

    async with readable_answers(Transport(), notes.append) as (stream, _):
        items = [item async for item in stream]
    first, second, third, fourth = items
    assert isinstance(first.message, JSONRPCError) and first.message.id == 5
    assert first.message.error.message == UNREADABLE_PREFIX + reason_for("recursion limit")
    assert isinstance(second, ValueError)  # no call to answer: left for the SDK, noted
    assert isinstance(third.message, JSONRPCError) and third.message.id == "r-6"
    assert "not a valid JSON-RPC message" in third.message.error.message
    assert "5" not in third.message.error.message.removeprefix(UNREADABLE_PREFIX)  # nothing of the line
    assert fourth.message.id == 7 and not isinstance(fourth.message, JSONRPCError)
    assert len(notes) == 3 and "request 5" in notes[0] and notes[1].startswith("baton: ignored a message")


def test_the_sdks_parse_tracebacks_stay_off_the_screen(caplog: pytest.LogCaptureFixture) -> None:
    quiet_sdk_parse_errors()
    quiet_sdk_parse_errors()
    logger = logging.getLogger("mcp.client.stdio")
    with caplog.at_level(logging.WARNING):
        logger.error("Failed to parse JSONRPC message from server")
        logger.error("Reading from the MCP server's stdout failed mid-session")
        logging.getLogger("mcp.client.streamable_http").error("Error parsing SSE message")
    assert [r.getMessage() for r in caplog.records] == ["Reading from the MCP server's stdout failed mid-session"]
    assert len(logger.filters) == 1

"""The official ``anthropic`` SDK as a test-only oracle for the anthropic-messages adapter.

* Every request body the adapter builds (plain, with every thinking level, every cache
  retention, tool choices, and after a handoff from each other API) must fit the SDK's
  ``MessageCreateParamsStreaming`` TypedDict exactly: no unknown keys, all required keys, every
  value of the right type (checked by :mod:`tests.providers.typeddict_oracle`).
* For the same SSE bytes, the SDK's own SSE decoder plus its stream accumulator
  (``accumulate_event``, what ``MessageStream`` uses) and baton must agree on text, thinking,
  signatures, tool calls with their arguments, and usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic._streaming import SSEDecoder
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types.message_create_params import MessageCreateParamsStreaming

from baton.providers.anthropic_messages import ADAPTER, REDACTED_THINKING_TEXT, build_body
from baton.providers.messages import TextContent, ThinkingContent, ToolCall
from baton.providers.options import StreamOptions
from tests.providers.claude_gemini_support import (
    SOURCE_APIS,
    decode,
    fixture_body,
    handoff_transcript,
    model,
    prepared,
    run_stream,
)
from tests.providers.typeddict_oracle import Mismatch, check
from tests.replay_server import Reply, sse_events

API = "anthropic-messages"
TARGETS = [
    model(API, "claude-sonnet-4-5", max_tokens=64000),
    model(API, "claude-opus-4-6", max_tokens=128000),
    model(API, "claude-3-5-haiku", reasoning=False, max_tokens=8192),
]
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"thinking": "minimal", "cache_retention": "long"},
    {"thinking": "high", "tool_choice": "required"},
    {"thinking": "xhigh", "cache_retention": "none", "tool_choice": "read"},
    {"thinking": "off", "temperature": 0.5, "tool_choice": "none", "max_tokens": 1000},
]


def assert_valid_request(body: dict[str, Any]) -> None:
    """``body`` fits ``MessageCreateParamsStreaming`` with unknown keys forbidden.

    One documented exception: ``temperature``. SDK 2.14 dropped it from the request TypedDict,
    yet the Messages API still takes it (the recorded 2026 requests in the fixtures send
    ``temperature: 1.0`` and got streams back), and pi sends it when asked. It is checked here
    by hand (a number in [0, 1], never with thinking) and everything else goes to the SDK type.
    """
    body = dict(body)
    if "temperature" in body:
        temperature = body.pop("temperature")
        assert isinstance(temperature, int | float) and 0 <= temperature <= 1
        assert body.get("thinking", {}).get("type") in (None, "disabled")
    try:
        check(body, MessageCreateParamsStreaming)
    except Mismatch as exc:
        pytest.fail(f"request body does not fit MessageCreateParamsStreaming: {exc}")


def test_the_oracle_rejects_what_it_should() -> None:
    good = {"model": "m", "max_tokens": 5, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    check(good, MessageCreateParamsStreaming)
    bad_bodies = [
        {**good, "surprise": 1},
        {**good, "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}]},
        {**good, "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64"}}]}]},
        {**good, "max_tokens": "5"},
        {k: v for k, v in good.items() if k != "messages"},
        {**good, "thinking": {"type": "enabled"}},
    ]
    for bad in bad_bodies:
        with pytest.raises(Mismatch):
            check(bad, MessageCreateParamsStreaming)


@pytest.mark.parametrize("target", TARGETS, ids=lambda m: m.id)
@pytest.mark.parametrize("source", sorted(SOURCE_APIS))
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_request_after_handoff_fits_the_sdk_type(source: str, target: Any, options: dict[str, Any]) -> None:
    raw = handoff_transcript(source, target)
    context = prepared(target, raw)
    body = build_body(target, context, StreamOptions(**options))
    assert_valid_request(body)
    # the untransformed transcript too: the adapter never emits an invalid shape on its own
    assert_valid_request(build_body(target, raw, StreamOptions(**options)))
    blocks = [b for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]
    kinds = {b["type"] for b in blocks}
    assert {"tool_use", "tool_result", "image"} <= kinds
    if source == API:
        assert {"thinking", "redacted_thinking"} <= kinds  # same model: thinking replayed as thinking
    else:
        assert not kinds & {"thinking", "redacted_thinking"}  # foreign thinking: plain text or dropped


async def test_the_body_on_the_wire_fits_the_sdk_type() -> None:
    target = TARGETS[0]
    hello = sse_events([
        {"type": "message_start", "message": {"usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ], named=True)
    run = await run_stream(target, handoff_transcript("openai-responses"), [Reply.sse(hello)], thinking="medium")
    assert run.message.stop_reason == "stop"
    assert_valid_request(run.requests[0].json())


# ---------------------------------------------------------------------------------------------
# The SDK's accumulator and baton agree on the same bytes


def sdk_accumulate(body: bytes) -> Any:
    """The SDK's final message for ``body``: its SSE decoder, then ``accumulate_event``."""
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for sse in SSEDecoder().iter_bytes(iter([body])):
        if sse.event in ("ping", "error") or not sse.data:
            continue
        snapshot = accumulate_event(event=sse.json(), current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


def agree(body: bytes) -> None:
    sdk = sdk_accumulate(body)
    ours = decode(ADAPTER, TARGETS[0], body).message
    expected: list[tuple[Any, ...]] = []
    for block in sdk.content:
        if block.type == "text":
            expected.append(("text", block.text))
        elif block.type == "thinking":
            expected.append(("thinking", block.thinking, block.signature or None, None))
        elif block.type == "redacted_thinking":
            expected.append(("thinking", REDACTED_THINKING_TEXT, block.data, True))
        elif block.type == "tool_use":
            expected.append(("toolCall", block.id, block.name, block.input))
    got: list[tuple[Any, ...]] = []
    for ours_block in ours.content:
        if isinstance(ours_block, TextContent):
            got.append(("text", ours_block.text))
        elif isinstance(ours_block, ThinkingContent):
            got.append(("thinking", ours_block.thinking, ours_block.thinking_signature, ours_block.redacted))
        elif isinstance(ours_block, ToolCall):
            got.append(("toolCall", ours_block.id, ours_block.name, ours_block.arguments))
    assert got == expected
    usage = sdk.usage
    assert ours.usage.input == usage.input_tokens
    assert ours.usage.output == usage.output_tokens
    assert ours.usage.cache_read == (usage.cache_read_input_tokens or 0)
    assert ours.usage.cache_write == (usage.cache_creation_input_tokens or 0)


def test_sdk_and_baton_agree_on_every_recorded_stream(provider_streams: Path) -> None:
    paths = sorted((provider_streams / "anthropic-messages").glob("*.sse"))
    assert paths
    for path in paths:
        body = fixture_body(path)
        agree(body)
        agree(body.replace(b"\n", b"\r\n"))


def test_sdk_and_baton_agree_on_a_synthetic_tool_stream() -> None:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
         "model": "claude", "stop_reason": None, "stop_sequence": None,
         "usage": {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 3}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_9",
         "name": "write", "input": {}}},
    ]
    argument = (
        '{"path": "src/\\u00e9t\\u00e9.py", "content": "line1\\nline2 \\"quoted\\" {braces} [1, 2]", "n": -1.5e3}'
    )
    events += [
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": argument[i : i + 4]}}
        for i in range(0, len(argument), 4)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 99}},
        {"type": "message_stop"},
    ]
    body = sse_events(events, named=True)
    agree(body)
    ours = decode(ADAPTER, TARGETS[0], body).message
    assert ours.tool_calls[0].arguments == {"path": "src/été.py", "content": 'line1\nline2 "quoted" {braces} [1, 2]',
                                           "n": -1500.0}

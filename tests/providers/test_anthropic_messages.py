"""The anthropic-messages adapter: recorded streams (decoder and end to end over a socket),
request building, adversarial delivery and faults."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from baton.providers.adapter import ProviderError
from baton.providers.anthropic_messages import (
    ADAPTER,
    REDACTED_THINKING_TEXT,
    build_body,
    messages_url,
    tool_choice,
)
from baton.providers.events import TextDeltaEvent
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model
from baton.providers.options import StreamOptions
from tests.providers.claude_gemini_support import (
    PNG_1PX,
    TOOLS,
    assert_well_formed,
    decode,
    expected_cost,
    fixture_body,
    model,
    run_stream,
    usage_tuple,
)
from tests.replay_server import Reply, sse_events

API = "anthropic-messages"
CLAUDE = model(API, "claude-sonnet-4-5", max_tokens=64000)

# Expected message per recorded stream, block by block:
#   ("text", first 24 chars, length) | ("thinking", first 24 chars, length, signature start, signature
#   length, redacted) | ("toolCall", id, name, arguments)
EXPECTED: dict[str, dict[str, Any]] = {
    "claude-sonnet-4-5_text": {
        "blocks": [("text", "- Captain\n- Scoop", 17)],
        "usage": (17, 10, 0, 0, 27), "stop": "stop",
    },
    "claude-3-5-sonnet_prompt-cache-read": {
        "blocks": [("text", "Here are concise summari", 1016)],
        "usage": (4, 221, 1165, 0, 1390), "stop": "stop",
    },
    "claude-3-5-sonnet_prompt-cache-write": {
        "blocks": [("text", "Here are concise summari", 913)],
        "usage": (4, 201, 0, 1165, 1370), "stop": "stop",
    },
    "claude-3-5-sonnet_text_then-two-tool-uses_args-split": {
        "blocks": [
            ("text", "Certainly! I can help yo", 175),
            ("toolCall", "toolu_014x5X91kx3fvdhpLvwXZWE2", "get_weather",
             {"location": "San Francisco, CA", "unit": "celsius"}),
            ("toolCall", "toolu_0121kXsENLvoDZ72LCuAnCCz", "get_time", {"timezone": "America/Los_Angeles"}),
        ],
        "usage": (506, 153, 0, 0, 659), "stop": "toolUse",
    },
    "claude-haiku-4-5_two-tool-uses_empty-args": {
        "blocks": [
            ("toolCall", "toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
            ("toolCall", "toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}),
        ],
        "usage": (542, 62, 0, 0, 604), "stop": "toolUse",
    },
    "claude-sonnet-4-6_server-tool-search_then-tool-use_args-split": {
        "blocks": [
            ("text", "Let me search for a tool", 76),
            ("text", "I found the right tool! ", 82),
            ("toolCall", "toolu_01EFn5wTNBYA8Reni8rbmnHT", "get_exchange_rate",
             {"from_currency": "USD", "to_currency": "EUR"}),
        ],
        "usage": (1591, 175, 0, 0, 1766), "stop": "toolUse",
    },
    "claude-sonnet-4_thinking_signature-delta": {
        "blocks": [
            ("thinking", "This is a straightforwar", 202, "EvMCCkYICxgCKkCHP2cSuEdc", 504, None),
            ("text", "Here are the basic steps", 1021),
        ],
        "usage": (43, 282, 0, 0, 325), "stop": "stop",
    },
    "claude-haiku-4-5_thinking_signature_then-tool-use": {
        "blocks": [
            ("thinking", "The user wants me to:\n1.", 180, "EoQDCm0IDhgCKkCDzGs2kL2P", 524, None),
            ("toolCall", "toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {}),
        ],
        "usage": (598, 92, 0, 0, 690), "stop": "toolUse",
    },
    "claude-sonnet-4-5_redacted-thinking": {
        "blocks": [
            ("thinking", REDACTED_THINKING_TEXT, len(REDACTED_THINKING_TEXT), "EqkECkYIBxgCKkA8AZ4noDfV", 744, True),
            ("thinking", REDACTED_THINKING_TEXT, len(REDACTED_THINKING_TEXT), "EtgBCkYIBxgCKkDQfGkwzflE", 296, True),
            ("text", "I notice that you've sen", 359),
        ],
        "usage": (92, 189, 0, 0, 281), "stop": "stop",
    },
    "claude-fable-5-1_refusal_stop-details": {
        "blocks": [],
        "usage": (97, 0, 0, 0, 97), "stop": "error",
        "error": "The model refused to respond (reasoning_extraction): This request was blocked as it seems to "
        "violate Anthropic's Terms of Service",
    },
}


def _fixtures(root: Path) -> list[Path]:
    return sorted((root / "anthropic-messages").glob("*.sse"))


def check_message(message: AssistantMessage, expected: dict[str, Any]) -> None:
    """The message matches the expectation field by field."""
    assert message.api == API and message.role == "assistant"
    assert message.stop_reason == expected["stop"]
    if "error" in expected:
        assert message.error_message is not None and message.error_message.startswith(expected["error"])
    else:
        assert message.error_message is None
    assert len(message.content) == len(expected["blocks"])
    for block, spec in zip(message.content, expected["blocks"], strict=True):
        kind = spec[0]
        assert block.type == kind
        if kind == "text":
            assert isinstance(block, TextContent)
            assert block.text.startswith(spec[1]) and len(block.text) == spec[2]
            assert block.text_signature is None
        elif kind == "thinking":
            assert isinstance(block, ThinkingContent)
            assert block.thinking.startswith(spec[1]) and len(block.thinking) == spec[2]
            assert block.thinking_signature is not None
            assert block.thinking_signature.startswith(spec[3]) and len(block.thinking_signature) == spec[4]
            assert block.redacted is spec[5]
        else:
            assert isinstance(block, ToolCall)
            assert (block.id, block.name, block.arguments) == spec[1:]
            assert block.thought_signature is None
    assert usage_tuple(message.usage) == expected["usage"]


# ---------------------------------------------------------------------------------------------
# Recorded streams


def test_every_fixture_has_an_expectation(provider_streams: Path) -> None:
    assert {p.stem for p in _fixtures(provider_streams)} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_decoder_on_recorded_stream(provider_streams: Path, name: str) -> None:
    body = fixture_body(provider_streams / "anthropic-messages" / f"{name}.sse")
    out = decode(ADAPTER, CLAUDE, body)
    expected = EXPECTED[name]
    if "error" in expected:
        assert out.error is not None and out.error.message.startswith(expected["error"])
        assert not out.error.retryable
        out.message.stop_reason = "error"
        out.message.error_message = out.error.message
    else:
        assert out.error is None
    check_message(out.message, expected)
    # every delta is in the final text: the deltas are the message, nothing is lost or doubled
    texts = [e.delta for e in out.events if isinstance(e, TextDeltaEvent)]
    assert "".join(texts) == out.message.text


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_decoder_is_indifferent_to_chunking_and_line_endings(provider_streams: Path, name: str) -> None:
    body = fixture_body(provider_streams / "anthropic-messages" / f"{name}.sse")
    baseline = decode(ADAPTER, CLAUDE, body).message.to_json_dict()
    baseline.pop("timestamp")
    crlf = body.replace(b"\n", b"\r\n")
    for variant, size in ((body, 1), (crlf, 1), (crlf, 5), (body.replace(b"\n", b"\r"), 3)):
        got = decode(ADAPTER, CLAUDE, variant, chunk_size=size).message.to_json_dict()
        got.pop("timestamp")
        assert got == baseline


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_recorded_stream_end_to_end(provider_streams: Path, name: str) -> None:
    body = fixture_body(provider_streams / "anthropic-messages" / f"{name}.sse")
    context = Context(messages=[UserMessage(content="hi")])
    run = await run_stream(CLAUDE, context, [Reply.sse(body, chunk_size=97)])
    assert_well_formed(run.events)
    check_message(run.message, EXPECTED[name])
    assert run.message.usage.cost.total == pytest.approx(expected_cost(run.message.usage))
    assert len(run.requests) == 1
    request = run.requests[0]
    assert request.method == "POST" and request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "test-key"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.json()["stream"] is True


async def test_byte_by_byte_delivery_over_the_socket(provider_streams: Path) -> None:
    name = "claude-haiku-4-5_thinking_signature_then-tool-use"
    body = fixture_body(provider_streams / "anthropic-messages" / f"{name}.sse").replace(b"\n", b"\r\n")
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="hi")]), [Reply.sse(body, chunk_size=1)])
    assert_well_formed(run.events)
    check_message(run.message, EXPECTED[name])


# ---------------------------------------------------------------------------------------------
# Synthetic streams: edge cases of the protocol


def _start(input_tokens: int = 10) -> dict[str, Any]:
    return {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "claude", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}}


def _text_block(index: int, *parts: str) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}} for p in parts),
        {"type": "content_block_stop", "index": index},
    ]


def _end(reason: str = "end_turn", output: int = 5) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": output}},
            {"type": "message_stop"}]


def test_unknown_blocks_and_deltas_are_skipped_safely() -> None:
    events = [
        _start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "mystery_block", "x": 1}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "mystery_delta", "y": 2}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "web_search_tool_result",
         "tool_use_id": "srvtoolu_1", "content": []}},
        {"type": "content_block_stop", "index": 1},
        *_text_block(2, "Hel", "lo"),
        {"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta", "citation": {}}},
        {"type": "some_future_event", "data": 1},
        *_end("pause_turn"),
    ]
    out = decode(ADAPTER, CLAUDE, sse_events(events, named=True))
    assert out.error is None
    # A web search's result is kept as text (providers/web_search.py), whoever asked for it.
    assert [b.to_json_dict() for b in out.message.content] == [
        {"type": "text", "text": "[web search]: no results"}, {"type": "text", "text": "Hello"}]
    assert out.message.stop_reason == "stop"


def test_tool_input_given_whole_in_block_start() -> None:
    events = [_start(), {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"path": "."}}},
        {"type": "content_block_stop", "index": 0}, *_end("tool_use")]
    out = decode(ADAPTER, CLAUDE, sse_events(events, named=True))
    assert out.message.tool_calls[0].arguments == {"path": "."}
    assert out.message.stop_reason == "toolUse"


def test_max_tokens_is_length_and_truncated_arguments_parse_best_effort() -> None:
    events = [_start(), {"type": "content_block_start", "index": 0, "content_block": {
        "type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
         "partial_json": '{"path": "a.txt", "content": "hel'}}, *_end("max_tokens")]
    out = decode(ADAPTER, CLAUDE, sse_events(events, named=True))
    assert out.error is None
    assert out.message.stop_reason == "length"
    assert out.message.tool_calls[0].arguments["path"] == "a.txt"


def test_mid_stream_error_event_is_a_retryable_provider_error() -> None:
    body = sse_events([_start(), *_text_block(0, "par")], named=True)
    body += (b'event: error\ndata: {"type":"error","error":{"details":null,"type":"overloaded_error",'
             b'"message":"Overloaded"} }\n\n')
    out = decode(ADAPTER, CLAUDE, body)
    assert out.error is not None
    assert out.error.retryable and out.error.status == 529
    assert "Overloaded" in out.error.message and "overloaded_error" in out.error.message
    assert out.message.text == "par"


def test_stream_cut_before_message_stop_is_an_error() -> None:
    out = decode(ADAPTER, CLAUDE, sse_events([_start(), *_text_block(0, "Hi")], named=True))
    assert out.error is not None and "message_stop" in out.error.message
    assert out.message.text == "Hi"
    empty = decode(ADAPTER, CLAUDE, b"")
    assert empty.error is not None and "without any event" in empty.error.message


def test_malformed_json_event_is_an_error_naming_the_event() -> None:
    body = sse_events([_start()], named=True) + b"event: content_block_delta\ndata: {not json\n\n"
    out = decode(ADAPTER, CLAUDE, body)
    assert out.error is not None
    assert "Malformed JSON" in out.error.message and "content_block_delta" in out.error.message


def test_message_delta_usage_overwrites_only_the_fields_present() -> None:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1,
         "cache_read_input_tokens": 50, "cache_creation_input_tokens": 7}}},
        *_text_block(0, "x"),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 42}},
        {"type": "message_stop"},
    ]
    out = decode(ADAPTER, CLAUDE, sse_events(events, named=True))
    assert usage_tuple(out.message.usage) == (100, 42, 50, 7, 199)


# ---------------------------------------------------------------------------------------------
# Requests


def _body(context: Context, target: Model = CLAUDE, **options: Any) -> dict[str, Any]:
    return build_body(target, context, StreamOptions(**options))


def test_url_headers_and_basics() -> None:
    custom = CLAUDE.model_copy(update={"base_url": "https://proxy.example/anthropic/", "headers": {"x-org": "1"}})
    request = ADAPTER.build_request(custom, Context(messages=[UserMessage(content="hi")]),
                                    StreamOptions(headers={"x-trace": "t"}), "sk-secret")
    assert request.url == "https://proxy.example/anthropic/v1/messages"
    assert request.headers["x-api-key"] == "sk-secret"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-org"] == "1" and request.headers["x-trace"] == "t"
    assert "anthropic-beta" not in request.headers
    assert messages_url(Model(id="c", api=API, provider="p")) == "https://api.anthropic.com/v1/messages"
    assert messages_url(Model(id="c", api=API, provider="p", base_url="http://h/v1")) == "http://h/v1/messages"
    assert request.body == {
        "model": "claude-sonnet-4-5", "max_tokens": 64000, "stream": True,
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
    }


@pytest.mark.parametrize(("retention", "control"), [
    ("short", {"type": "ephemeral"}),
    ("long", {"type": "ephemeral", "ttl": "1h"}),
    ("none", None),
])
def test_cache_control_follows_retention(retention: str, control: dict[str, str] | None) -> None:
    context = Context(system_prompt="Be brief.", tools=TOOLS, messages=[
        UserMessage(content="one"),
        AssistantMessage(content=[TextContent(text="two")], api=API, provider="test", model="claude-sonnet-4-5"),
        UserMessage(content=[TextContent(text="three"), ImageContent(data=PNG_1PX, mime_type="image/png")]),
        AssistantMessage(content=[TextContent(text="four")], api=API, provider="test", model="claude-sonnet-4-5"),
    ])
    body = _body(context, cache_retention=retention)
    system = body["system"][0]
    last_user = body["messages"][2]["content"]
    assert system["text"] == "Be brief."
    assert system.get("cache_control") == control
    assert body["tools"][-1].get("cache_control") == control and "cache_control" not in body["tools"][0]
    assert last_user[-1].get("cache_control") == control  # the image block: last block of the last user turn
    assert "cache_control" not in last_user[0]
    assert body["messages"][0] == {"role": "user", "content": "one"}  # only the last user turn is marked


def test_consecutive_tool_results_merge_into_one_user_turn() -> None:
    call_a = ToolCall(id="toolu_a", name="read", arguments={"path": "x"})
    call_b = ToolCall(id="toolu_b", name="ls", arguments={})
    context = Context(messages=[
        UserMessage(content="go"),
        AssistantMessage(content=[call_a, call_b], api=API, provider="test", model="claude-sonnet-4-5",
                         stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="toolu_a", tool_name="read",
                          content=[ImageContent(data=PNG_1PX, mime_type="image/png")]),
        ToolResultMessage(tool_call_id="toolu_b", tool_name="ls",
                          content=[TextContent(text="line 1"), TextContent(text="line 2")], is_error=True),
        ToolResultMessage(tool_call_id="toolu_c", tool_name="ls", content=[]),
    ])
    messages = _body(context, cache_retention="none")["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "x"}},
        {"type": "tool_use", "id": "toolu_b", "name": "ls", "input": {}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "is_error": False, "content": [
            {"type": "text", "text": "(see attached image)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}}]},
        {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": True, "content": "line 1\nline 2"},
        {"type": "tool_result", "tool_use_id": "toolu_c", "is_error": False},
    ]


def test_thinking_is_replayed_with_signatures_and_redacted_as_such() -> None:
    context = Context(messages=[
        UserMessage(content="q"),
        AssistantMessage(content=[
            ThinkingContent(thinking="deep", thinking_signature="sig1"),
            ThinkingContent(thinking=REDACTED_THINKING_TEXT, thinking_signature="opaque==", redacted=True),
            ThinkingContent(thinking="", thinking_signature="omitted-sig"),
            ThinkingContent(thinking="unsigned thought"),
            ThinkingContent(thinking="   "),
            TextContent(text="answer"),
            TextContent(text="  "),
        ], api=API, provider="test", model="claude-sonnet-4-5"),
        UserMessage(content="   "),
    ])
    messages = _body(context)["messages"]
    assert len(messages) == 2  # the blank user message is not sent
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "deep", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking", "thinking": "", "signature": "omitted-sig"},
        {"type": "text", "text": "unsigned thought"},
        {"type": "text", "text": "answer"},
    ]


def test_lone_surrogates_are_replaced() -> None:
    body = _body(Context(system_prompt="a\ud800b", messages=[UserMessage(content="x\udfffy")]), cache_retention="none")
    assert body["system"][0]["text"] == "a\ufffdb"
    assert body["messages"][0]["content"] == "x\ufffdy"
    json.dumps(body).encode("utf-8")


@pytest.mark.parametrize(("level", "budget", "max_tokens"), [
    ("minimal", 1024, 64000), ("low", 2048, 64000), ("medium", 8192, 64000), ("high", 16384, 64000),
    ("xhigh", 16384, 64000),
])
def test_thinking_budget_by_level(level: str, budget: int, max_tokens: int) -> None:
    body = _body(Context(messages=[UserMessage(content="q")]), thinking=level, temperature=0.2)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    assert body["max_tokens"] == max_tokens and body["max_tokens"] > budget
    assert "temperature" not in body  # not allowed together with thinking
    request = ADAPTER.build_request(CLAUDE, Context(messages=[UserMessage(content="q")]),
                                    StreamOptions(thinking=level), None)  # type: ignore[arg-type]
    assert "interleaved-thinking-2025-05-14" in request.headers["anthropic-beta"]
    assert "x-api-key" not in request.headers


def test_budget_always_leaves_room_for_the_answer() -> None:
    small = model(API, "claude-3-7-sonnet", max_tokens=8192)
    body = _body(Context(messages=[UserMessage(content="q")]), small, thinking="high", max_tokens=4000)
    assert body["max_tokens"] == 8192
    assert body["thinking"]["budget_tokens"] == 8192 - 1024
    tiny = _body(Context(messages=[UserMessage(content="q")]), small, thinking="low", max_tokens=1000)
    assert tiny["max_tokens"] == 3048 and tiny["thinking"]["budget_tokens"] == 2048


@pytest.mark.parametrize(("model_id", "level", "effort"), [
    ("claude-opus-4-6", "xhigh", "max"), ("claude-opus-4-7", "xhigh", "xhigh"),
    ("claude-sonnet-4-6", "low", "low"), ("claude-sonnet-4-6", "minimal", "low"),
    ("claude-opus-4-6", "medium", "medium"), ("claude-fable-5-1", "high", "high"),
])
def test_adaptive_thinking_for_models_that_need_it(model_id: str, level: str, effort: str) -> None:
    target = model(API, model_id, max_tokens=32000, compat={"supportsXhigh": True})
    body = _body(Context(messages=[UserMessage(content="q")]), target, thinking=level)
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": effort}
    assert body["max_tokens"] == 32000


def test_thinking_off_and_temperature() -> None:
    context = Context(messages=[UserMessage(content="q")])
    assert _body(context, thinking="off", temperature=0.3)["thinking"] == {"type": "disabled"}
    assert _body(context, thinking="off", temperature=0.3)["temperature"] == 0.3
    assert "thinking" not in _body(context)
    plain = model(API, "claude-3-5-haiku", reasoning=False)
    assert "thinking" not in _body(context, plain, thinking="high")
    assert _body(context, max_tokens=123)["max_tokens"] == 123


def test_tool_definitions_and_choice() -> None:
    body = _body(Context(messages=[UserMessage(content="q")], tools=TOOLS), tool_choice="required")
    assert body["tools"][0] == {
        "name": "read", "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"},
                         "limit": {"type": "integer", "minimum": 1}},
                         "required": ["path"], "additionalProperties": False},
    }
    assert body["tool_choice"] == {"type": "any"}
    assert tool_choice("auto", TOOLS) == {"type": "auto"}
    assert tool_choice("none", TOOLS) == {"type": "none"}
    assert tool_choice("ls", TOOLS) == {"type": "tool", "name": "ls"}
    assert tool_choice({"type": "function", "function": {"name": "ls"}}, TOOLS) == {"type": "tool", "name": "ls"}
    with pytest.raises(ProviderError, match="Unsupported tool_choice"):
        tool_choice("nope", TOOLS)


# ---------------------------------------------------------------------------------------------
# Faults over the socket

_HELLO = sse_events([_start(), *_text_block(0, "Hel", "lo"), *_end()], named=True)
_OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


async def test_429_with_retry_after_then_success() -> None:
    replies = [Reply.json_error(429, {"type": "error", "error": {"type": "rate_limit_error",
               "message": "Number of requests has exceeded your rate limit"}}, headers={"retry-after-ms": "200"}),
               Reply.sse(_HELLO)]
    started = time.monotonic()
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]), replies, retry_base_delay=5.0)
    assert 0.2 <= time.monotonic() - started < 4  # the server's wait, not the 5 s backoff
    assert run.message.stop_reason == "stop" and run.message.text == "Hello"
    assert len(run.requests) == 2
    assert_well_formed(run.events)


async def test_529_overloaded_three_times_ends_with_the_providers_message() -> None:
    replies = [Reply.json_error(529, _OVERLOADED) for _ in range(3)]
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]), replies)
    assert run.message.stop_reason == "error"
    assert run.message.error_message is not None and "529" in run.message.error_message
    assert "Overloaded" in run.message.error_message
    assert len(run.requests) == 3
    assert_well_formed(run.events)


async def test_overloaded_event_before_content_is_retried() -> None:
    early = sse_events([_start(), _OVERLOADED], named=True)
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]), [Reply.sse(early), Reply.sse(_HELLO)])
    assert run.message.stop_reason == "stop" and run.message.text == "Hello"
    assert len(run.requests) == 2


async def test_overloaded_event_after_content_is_not_retried() -> None:
    late = sse_events([_start(), *_text_block(0, "Partial"), _OVERLOADED], named=True)
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]), [Reply.sse(late), Reply.sse(_HELLO)])
    assert run.message.stop_reason == "error"
    assert run.message.error_message == "Overloaded (overloaded_error)"
    assert run.message.text == "Partial"
    assert len(run.requests) == 1
    assert_well_formed(run.events)


async def test_disconnect_mid_stream_keeps_partial_content() -> None:
    body = sse_events([_start(), *_text_block(0, "Hel", "lo", " wor", "ld"), *_end()], named=True)
    cut = body.index(b" wor")
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]),
                           [Reply(chunks=[body[:cut], body[cut:]], disconnect_after=1)])
    assert run.message.stop_reason == "error"
    assert run.message.text == "Hello"
    assert run.message.error_message
    assert_well_formed(run.events)


async def test_stalled_stream_ends_in_error_keeping_partial_text() -> None:
    body = sse_events([_start(), *_text_block(0, "Hel", "lo"), *_end()], named=True)
    cut = body.index(b"event: content_block_stop")
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]),
                           [Reply(chunks=[body[:cut], body[cut:]], stall_after=1)], idle_timeout=0.3)
    assert run.message.stop_reason == "error" and run.message.text == "Hello"
    assert run.message.error_message is not None and "idle" in run.message.error_message.lower()
    assert len(run.requests) == 1
    assert_well_formed(run.events)


async def test_malformed_json_event_ends_in_error() -> None:
    body = sse_events([_start(), *_text_block(0, "ok")], named=True) + b"event: message_delta\ndata: {oops\n\n"
    run = await run_stream(CLAUDE, Context(messages=[UserMessage(content="q")]), [Reply.sse(body)])
    assert run.message.stop_reason == "error"
    assert run.message.error_message is not None and "Malformed JSON" in run.message.error_message
    assert run.message.text == "ok"
    assert_well_formed(run.events)


async def test_abort_mid_stream_keeps_partial_text() -> None:
    signal = asyncio.Event()
    blocks = _text_block(0, "Hel", "lo")
    first = sse_events([_start(), blocks[0], blocks[1]], named=True)
    rest = sse_events([blocks[2], blocks[3], *_end()], named=True)
    reply = Reply(chunks=[first, rest], delay=5.0)
    context = Context(messages=[UserMessage(content="q")])

    async def abort_on_first_delta() -> None:
        from baton.providers.dispatch import stream
        from tests.replay_server import ReplayServer

        with ReplayServer([reply]) as server:
            live = CLAUDE.model_copy(update={"base_url": server.url})
            events = []
            async with asyncio.timeout(10):
                async for event in stream(live, context, api_key="k", signal=signal):
                    events.append(event)
                    if isinstance(event, TextDeltaEvent):
                        signal.set()
            assert_well_formed(events)
            final = events[-1]
            assert final.type == "error" and final.reason == "aborted"
            assert final.error.stop_reason == "aborted"
            assert final.error.text == "Hel"

    await abort_on_first_delta()

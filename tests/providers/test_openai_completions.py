"""The ``openai-completions`` adapter: recorded streams over real sockets, the openai SDK as an
oracle (request types and stream accumulator), adversarial delivery, faults, compat flags."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from openai._models import construct_type
from openai._streaming import SSEDecoder as SdkSseDecoder
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from baton.providers.adapter import MessageBuilder, ProviderError

# Import the functions from their module (the package exports them lazily too).
from baton.providers.dispatch import complete, prepare_context
from baton.providers.dispatch import stream as start_stream
from baton.providers.events import AssistantMessageEvent
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model, ModelCost
from baton.providers.openai_completions import ADAPTER, Compat, build_body, detect_compat, resolve_compat
from baton.providers.options import StreamOptions
from baton.providers.sse import SseDecoder
from tests.providers.typeddict_oracle import check
from tests.replay_server import ReplayServer, Reply, chunks_txt_to_sse, rechunk, sse_events

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
COST = ModelCost(input=2.5, output=10.0, cache_read=1.25)
FAST: dict[str, Any] = {"retry_base_delay": 0.01, "max_retry_delay": 1.0, "api_key": "sk-test"}


def chat_model(base_url: str = "https://api.openai.com/v1", **kwargs: Any) -> Model:
    values: dict[str, Any] = {
        "id": "gpt-4o", "api": "openai-completions", "provider": "openai", "base_url": base_url,
        "input": ["text", "image"], "cost": COST,
    }
    values.update(kwargs)
    return Model(**values)


def fixture_bytes(path: Path) -> bytes:
    """The SSE body of a fixture (``.chunks.txt`` framed as SSE with ``[DONE]``)."""
    if path.name.endswith(".chunks.txt"):
        return chunks_txt_to_sse(path.read_text(), done=True)
    return path.read_bytes()


def fixture_paths(root: Path) -> list[Path]:
    folder = root / "openai-chat"
    return sorted([*folder.glob("*.sse"), *folder.glob("*.chunks.txt")])


def comparable(message: AssistantMessage) -> dict[str, Any]:
    data = message.to_json_dict()
    data.pop("timestamp")
    return data


async def replay(
    body: bytes | list[bytes], model_kwargs: dict[str, Any] | None = None, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage, ReplayServer]:
    chunks = body if isinstance(body, list) else [body]
    with ReplayServer([Reply(chunks=chunks)]) as server:
        model = chat_model(server.url + "/v1", **(model_kwargs or {}))
        stream = start_stream(model, Context(messages=[UserMessage(content="hi")]), **{**FAST, **options})
        events = [e async for e in stream]
        message = await stream.result()
    return events, message, server


def decode_direct(pieces: list[bytes]) -> AssistantMessage:
    """The adapter's decoder fed straight from the SSE decoder (no socket): for byte-by-byte
    delivery of every fixture without paying for tens of thousands of TCP writes."""
    model = chat_model()
    output = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
    builder = MessageBuilder(output, lambda event: None)
    decoder = ADAPTER.create_decoder(model, builder)
    sse = SseDecoder()
    try:
        for piece in pieces:
            for event, data in sse.feed(piece):
                decoder.feed(event, data)
        for event, data in sse.close():
            decoder.feed(event, data)
        decoder.finish()
    except ProviderError as exc:
        output.stop_reason = "error"
        output.error_message = exc.message
    builder.close_all()
    return output


# ---------------------------------------------------------------------------------------------
# Recorded streams, field by field

EXPECTED: dict[str, dict[str, Any]] = {
    "gpt-4o_text_usage.sse": {
        "text": "The capital of Mexico is Mexico City.", "calls": [], "stop": "stop",
        "usage": (14, 8, 0, 22),
    },
    "gpt-4o-mini_tool-call_args-split_usage.sse": {
        "text": "", "calls": [("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"})],
        "stop": "toolUse", "usage": (53, 15, 0, 68),
    },
    "gpt-3.5-turbo_parallel-tool-calls_same-tool.sse": {
        "text": "",
        "calls": [
            ("call_u0T52evs3Y0byXDiUv5Al8dG", "get_current_weather", {"location": "San Francisco"}),
            ("call_iXfR9wmFaDTHUw5YaVxD1uFH", "get_current_weather", {"location": "Boston"}),
        ],
        "stop": "toolUse", "usage": (0, 0, 0, 0),
    },
    "gpt-4o_parallel-tool-calls_two-tools_usage.sse": {
        "text": "",
        "calls": [
            ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
        ],
        "stop": "toolUse", "usage": (149, 60, 0, 209),
    },
    "gpt-4o_refusal-deltas_usage.sse": {
        "text": "I'm sorry, I can't assist with that request.", "calls": [], "stop": "stop",
        "usage": (79, 11, 0, 90),
    },
    "gpt-4o_finish-length_usage.sse": {
        "text": '{"', "calls": [], "stop": "length", "usage": (79, 1, 0, 80),
    },
    "deepseek-reasoner_reasoning-content_usage.sse": {
        "text": "Hello there! 😊 How can I help you today?", "calls": [], "stop": "stop",
        "thinking": ('Hmm, the user just said "Hello".', "further - and that's okay too.", 882, "reasoning_content"),
        "usage": (6, 212, 0, 218),
    },
    "deepseek-reasoner_reasoning-content_tool-call_cache-hit.chunks.txt": {
        "text": "", "calls": [("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", {"location": "San Francisco"})],
        "stop": "toolUse",
        "thinking": (
            "The user is asking for the weather", 'parameter set to "San Francisco".', 191, "reasoning_content"
        ),
        "usage": (19, 83, 320, 422),
    },
    "openrouter_sse-comments_reasoning-details_error-chunk.sse": {
        "text": "", "calls": [], "stop": "error", "error": "400 Token limit reached",
        "thinking": ("We need to respond", "a greeting. The user", 42, "reasoning"),
        "usage": (43, 10, 0, 53),
    },
    "groq_gpt-oss_reasoning_event-error_tool-use-failed.sse": {
        "text": "", "calls": [], "stop": "error",
        "error": "400 Tool call validation failed: tool call validation failed: parameters for tool "
                 "get_something_by_name did not match schema: errors: [missing properties: 'name', "
                 "additionalProperties 'invalid_param' not allowed]",
        "thinking": ("We need to call the tool with invalid", "with name: \"test\". Let's do that.", 412, "reasoning"),
        "usage": (0, 0, 0, 0),
    },
}


def test_every_fixture_has_expectations(provider_streams: Path) -> None:
    assert {p.name for p in fixture_paths(provider_streams)} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_recorded_stream_field_by_field(provider_streams: Path, name: str) -> None:
    expected = EXPECTED[name]
    events, msg, server = await replay(fixture_bytes(provider_streams / "openai-chat" / name))
    assert (msg.api, msg.provider, msg.model) == ("openai-completions", "openai", "gpt-4o")
    assert msg.text == expected["text"]
    calls = [(c.id, c.name, c.arguments) for c in msg.tool_calls]
    assert calls == expected["calls"]
    assert msg.stop_reason == expected["stop"]
    assert msg.error_message == expected.get("error")
    thinking = [b for b in msg.content if isinstance(b, ThinkingContent)]
    if "thinking" in expected:
        start, end, length, signature = expected["thinking"]
        (block,) = thinking
        assert block.thinking.startswith(start) and block.thinking.endswith(end)
        assert len(block.thinking) == length and block.thinking_signature == signature
        assert msg.content[0] is block  # thinking came first
    else:
        assert thinking == []
    u = msg.usage
    assert (u.input, u.output, u.cache_read, u.total_tokens) == expected["usage"]
    assert u.cache_write == 0
    assert u.cost.input == pytest.approx(u.input * 2.5 / 1e6)
    assert u.cost.cache_read == pytest.approx(u.cache_read * 1.25 / 1e6)
    assert u.cost.total == pytest.approx(u.cost.input + u.cost.output + u.cost.cache_read)
    assert events[0].type == "start" and events[-1].type == ("error" if expected["stop"] == "error" else "done")
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json()["stream_options"] == {"include_usage": True}


def test_cache_hit_rate_from_deepseek_cached_tokens() -> None:
    body = sse_events([
        {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1000, "completion_tokens": 5, "prompt_cache_hit_tokens": 750,
                   "prompt_cache_miss_tokens": 250}},
        "[DONE]",
    ])
    msg = decode_direct([body])
    assert (msg.usage.input, msg.usage.cache_read) == (250, 750)
    assert msg.usage.cache_hit_rate == pytest.approx(0.75)


# ---------------------------------------------------------------------------------------------
# The openai SDK's stream accumulator as an oracle


def sdk_snapshot(body: bytes) -> Any:
    """Accumulate the same bytes with the openai SDK (its own SSE decoder and chunk types),
    stopping where the SDK would raise (an error event or error chunk)."""
    state = ChatCompletionStreamState()
    for sse in SdkSseDecoder().iter_bytes(iter([body])):
        if sse.data.startswith("[DONE]") or sse.event == "error":
            break
        payload = json.loads(sse.data)
        if payload.get("error"):
            break
        state.handle_chunk(cast(ChatCompletionChunk, construct_type(type_=ChatCompletionChunk, value=payload)))
    return state.current_completion_snapshot


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_sdk_accumulator_agrees(provider_streams: Path, name: str) -> None:
    body = fixture_bytes(provider_streams / "openai-chat" / name)
    snapshot = sdk_snapshot(body)
    _, msg, _ = await replay(body)
    message = snapshot.choices[0].message
    assert msg.text == (message.content or "") + (message.refusal or "")
    sdk_calls = [(t.id, t.function.name, json.loads(t.function.arguments)) for t in message.tool_calls or []]
    assert [(c.id, c.name, c.arguments) for c in msg.tool_calls] == sdk_calls
    sdk_thinking = next(
        (getattr(message, f) for f in ("reasoning_content", "reasoning") if getattr(message, f, None)), None
    )
    assert "".join(b.thinking for b in msg.content if isinstance(b, ThinkingContent)) == (sdk_thinking or "")
    if snapshot.usage is not None:
        usage = snapshot.usage
        details = usage.prompt_tokens_details
        cached = (details.cached_tokens if details else 0) or getattr(usage, "prompt_cache_hit_tokens", 0) or 0
        assert msg.usage.input + msg.usage.cache_read == usage.prompt_tokens
        assert msg.usage.cache_read == cached
        assert msg.usage.output == usage.completion_tokens
        assert msg.usage.total_tokens == usage.total_tokens


# ---------------------------------------------------------------------------------------------
# Adversarial delivery


def _variants(body: bytes) -> Iterator[tuple[str, bytes]]:
    yield "lf", body
    yield "crlf", body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    yield "cr", body.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    commented = body.replace(b"\n\ndata:", b"\n\n: keep-alive\n\n:another comment\ndata:")
    yield "comments", commented


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_byte_boundary_and_line_endings_give_identical_messages(provider_streams: Path, name: str) -> None:
    body = fixture_bytes(provider_streams / "openai-chat" / name)
    reference = comparable(decode_direct([body]))
    for label, variant in _variants(body):
        assert comparable(decode_direct([variant])) == reference, label
        assert comparable(decode_direct(rechunk(variant, 1))) == reference, label
    rng = random.Random(name)
    cuts = sorted(rng.sample(range(1, len(body)), min(40, len(body) - 1)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert comparable(decode_direct(pieces)) == reference


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_rechunked_over_the_socket_gives_identical_messages(provider_streams: Path, name: str) -> None:
    body = fixture_bytes(provider_streams / "openai-chat" / name)
    _, reference, _ = await replay(body)
    sizes = [1, 7, 113] if len(body) < 8000 else [7, 113]
    for size in sizes:
        _, msg, _ = await replay(rechunk(body, size))
        assert comparable(msg) | {"timestamp": 0} == comparable(reference) | {"timestamp": 0}, size
    crlf = body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    _, msg, _ = await replay(rechunk(crlf, 5))
    assert comparable(msg) == comparable(reference)


async def test_data_line_split_across_writes() -> None:
    first = {"choices": [{"index": 0, "delta": {"content": "split "}, "finish_reason": None}]}
    second = {"choices": [{"index": 0, "delta": {"content": "line"}, "finish_reason": "stop"}]}
    body = sse_events([first, second, "[DONE]"])
    cut = body.index(b"data:", 10) + 3  # inside the second "data:" field name
    middle = body.index(b"split") + 2  # inside the first JSON payload
    _, msg, _ = await replay([body[:middle], body[middle:cut], body[cut:]])
    assert msg.text == "split line" and msg.stop_reason == "stop"


# ---------------------------------------------------------------------------------------------
# Faults

TEXT_STREAM = sse_events([
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    *({"choices": [{"index": 0, "delta": {"content": f"word{i} "}, "finish_reason": None}]} for i in range(20)),
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}},
    "[DONE]",
])
EVENT_CHUNKS = [part + b"\n\n" for part in TEXT_STREAM.split(b"\n\n") if part]


async def test_fault_429_with_retry_after_then_success() -> None:
    limited = Reply.json_error(429, {"error": {"message": "Rate limit reached for gpt-4o"}}, {"retry-after": "0"})
    with ReplayServer([limited, Reply.sse(TEXT_STREAM)]) as server:
        msg = await complete(chat_model(server.url), Context(messages=[UserMessage(content="hi")]), **FAST)
    assert msg.stop_reason == "stop" and msg.text.startswith("word0 word1")
    assert len(server.requests) == 2 and server.requests[0].json() == server.requests[1].json()


async def test_fault_500_three_times() -> None:
    replies = [Reply.json_error(500, {"error": {"message": "The server had an error"}}) for _ in range(3)]
    with ReplayServer(replies) as server:
        msg = await complete(chat_model(server.url), Context(messages=[UserMessage(content="hi")]), **FAST)
    assert msg.stop_reason == "error" and msg.error_message == "500 The server had an error"
    assert len(server.requests) == 3


async def test_fault_disconnect_mid_stream() -> None:
    events, msg, server = await replay_reply(Reply(chunks=EVENT_CHUNKS, disconnect_after=6))
    assert msg.stop_reason == "error" and msg.text == "word0 word1 word2 word3 word4 "
    assert msg.error_message is not None and msg.error_message.startswith("Connection lost")
    assert [e.type for e in events][-2:] == ["text_end", "error"]
    assert len(server.requests) == 1


async def test_fault_stall() -> None:
    _, msg, _ = await replay_reply(Reply(chunks=EVENT_CHUNKS, stall_after=4), idle_timeout=0.2)
    assert msg.stop_reason == "error" and msg.text == "word0 word1 word2 "
    assert msg.error_message == "Stream idle: no data received for 0.2 s"


async def test_fault_malformed_json_event() -> None:
    broken = [*EVENT_CHUNKS[:3], b'data: {"choices": [{"index": 0, "delta": {"content": "x"\n\n', *EVENT_CHUNKS[3:]]
    _, msg, _ = await replay_reply(Reply(chunks=broken))
    assert msg.stop_reason == "error" and msg.text == "word0 word1 "
    assert msg.error_message is not None and msg.error_message.startswith("Malformed JSON in the provider's stream")


async def test_fault_cut_before_finish_reason() -> None:
    _, msg, _ = await replay_reply(Reply(chunks=EVENT_CHUNKS[:5]))
    assert msg.stop_reason == "error" and msg.text == "word0 word1 word2 word3 "
    assert msg.error_message == "The stream ended before the response was complete (no finish_reason)"


@pytest.mark.parametrize("seed", range(4))
async def test_fault_abort_at_a_random_point(seed: int) -> None:
    rng = random.Random(seed)
    calls = sse_events([
        {"choices": [{"index": 0, "delta": {"reasoning_content": "plan "}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"content": "Writing."}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "write", "arguments": ""}}]}}]},
        *({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": frag}}]}}]}
          for frag in ['{"pa', 'th": "a.t', 'xt", "con', 'tent": "hel', 'lo"}']),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        "[DONE]",
    ])
    chunks = [part + b"\n\n" for part in calls.split(b"\n\n") if part]
    abort_after = rng.randrange(1, 9)
    signal = asyncio.Event()
    seen: list[AssistantMessageEvent] = []
    with ReplayServer([Reply(chunks=chunks, delay=0.03)]) as server:
        stream = start_stream(
            chat_model(server.url), Context(messages=[UserMessage(content="hi")]), signal=signal, **FAST
        )
        async for event in stream:
            seen.append(event)
            if len(seen) == abort_after:
                signal.set()
        msg = await stream.result()
    assert msg.stop_reason == "aborted" and msg.error_message == "Request was aborted"
    assert seen[-1].type == "error" and [e.type for e in seen].count("error") == 1
    starts = sum(e.type.endswith("_start") for e in seen)
    assert starts == sum(e.type.endswith("_end") for e in seen)
    for call in msg.tool_calls:
        assert call.name == "write" and set(call.arguments) <= {"path", "content"}


async def replay_reply(
    reply: Reply, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage, ReplayServer]:
    with ReplayServer([reply]) as server:
        stream = start_stream(
            chat_model(server.url), Context(messages=[UserMessage(content="hi")]), **{**FAST, **options}
        )
        events = [e async for e in stream]
        msg = await stream.result()
    return events, msg, server


# ---------------------------------------------------------------------------------------------
# Decoder details


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}


def test_content_filter_is_an_error_with_a_message() -> None:
    msg = decode_direct([sse_events([chunk({"content": "Once upon"}), chunk(finish="content_filter"), "[DONE]"])])
    assert msg.stop_reason == "error" and msg.text == "Once upon"
    assert msg.error_message is not None and "content filter" in msg.error_message


def test_stop_with_tool_calls_means_tool_use() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}
    msg = decode_direct([sse_events([chunk({"tool_calls": [call]}), chunk(finish="stop"), "[DONE]"])])
    assert msg.stop_reason == "toolUse" and msg.tool_calls[0].name == "ls"


def test_tool_calls_without_index_or_with_a_reused_index() -> None:
    body = sse_events([
        chunk({"tool_calls": [{"id": "a", "function": {"name": "read", "arguments": '{"path":'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": ' "x"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "ls", "arguments": '{"path": "/"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "bash", "arguments": {"command": "pwd"}}}]}),
        chunk(finish="tool_calls"),
    ])
    msg = decode_direct([body])
    calls = [(c.id, c.name, c.arguments) for c in msg.tool_calls]
    assert calls[:3] == [("a", "read", {"path": "x"}), ("b", "ls", {}), ("c", "ls", {"path": "/"})]
    generated_id, name, arguments = calls[3]  # no id sent: a unique one is made up
    assert (name, arguments) == ("bash", {"command": "pwd"}) and generated_id.startswith("call_")
    assert len(calls) == 4
    assert msg.stop_reason == "toolUse"


def test_interleaved_parallel_tool_call_deltas() -> None:
    body = sse_events([
        chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": '{"pa'}},
                              {"index": 1, "id": "b", "function": {"name": "grep", "arguments": '{"pat'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'tern": "x"}'}},
                              {"index": 0, "function": {"arguments": 'th": "y"}'}}]}),
        chunk(finish="tool_calls"),
    ])
    msg = decode_direct([body])
    assert [(c.id, c.arguments) for c in msg.tool_calls] == [("a", {"path": "y"}), ("b", {"pattern": "x"})]


def test_reasoning_details_text_and_encrypted_signature_round_trip() -> None:
    encrypted = {"type": "reasoning.encrypted", "id": "call_1", "data": "opaque==", "format": "google-gemini-v1"}
    body = sse_events([
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "Think"}]}),
        chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": "ing."}, encrypted]}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk(finish="tool_calls"),
    ])
    msg = decode_direct([body])
    thinking = msg.content[0]
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Thinking."
    assert thinking.thinking_signature == "reasoning"
    (call,) = msg.tool_calls
    assert call.thought_signature is not None and json.loads(call.thought_signature) == encrypted
    # Replayed to the same model: the thinking under its field and the encrypted detail.
    model = chat_model()
    wire = build_body(model, Context(messages=[UserMessage(content="hi"), msg]), StreamOptions(), resolve_compat(model))
    assistant = wire["messages"][1]
    assert assistant["reasoning"] == "Thinking." and assistant["reasoning_details"] == [encrypted]


def test_in_band_error_chunk_is_retryable_when_overloaded() -> None:
    body = sse_events([{"error": {"message": "Provider overloaded", "code": 503}}])
    builder = MessageBuilder(AssistantMessage(api="a", provider="p", model="m"), lambda event: None)
    dec = ADAPTER.create_decoder(chat_model(), builder)
    with pytest.raises(ProviderError) as info:
        for event, data in SseDecoder().feed(body):
            dec.feed(event, data)
    assert info.value.retryable and info.value.message == "503 Provider overloaded"


async def test_overloaded_error_chunk_before_content_is_retried() -> None:
    overloaded = Reply.sse(sse_events([{"error": {"message": "Overloaded", "code": 529}}]))
    with ReplayServer([overloaded, Reply.sse(TEXT_STREAM)]) as server:
        msg = await complete(chat_model(server.url), Context(messages=[UserMessage(content="hi")]), **FAST)
    assert msg.stop_reason == "stop" and len(server.requests) == 2


# ---------------------------------------------------------------------------------------------
# Requests: the SDK's request type as an oracle, across handoffs

EXTENSION_KEYS = {
    "assistant": {"reasoning_content", "reasoning", "reasoning_text", "reasoning_details"},
    "tool": {"name"},  # Mistral requires the tool's name on its result
}
"""Fields that OpenAI-compatible servers read on messages but the SDK does not type."""


def check_against_sdk(body: dict[str, Any], top_level_extensions: set[str] = frozenset()) -> set[str]:  # type: ignore[assignment]
    """Validate ``body`` against the SDK's streaming request TypedDict (no unknown keys), after
    setting aside the compatible-server extension keys; returns the extension keys found."""
    body = json.loads(json.dumps(body))
    found = {k for k in top_level_extensions if body.pop(k, None) is not None}
    for message in body["messages"]:
        found |= {k for k in EXTENSION_KEYS.get(message["role"], ()) if message.pop(k, None) is not None}
    check(body, CompletionCreateParamsStreaming)
    return found


SOURCES = {
    "anthropic-messages": ("anthropic", "claude-sonnet-4-5", "toolu_01A09q90qw90lq917835lq9"),
    "openai-responses": ("openai", "gpt-5", "call_abc123|fc_" + "x" * 80),
    "google-generative-ai": ("google", "gemini-2.5-pro", "get_weather_0"),
    "openai-completions": ("deepseek", "deepseek-reasoner", "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF"),
}


def handoff_transcript(source_api: str) -> list[Message]:
    provider, model_id, call_id = SOURCES[source_api]
    # Each API's own kind of thinking signature (Chat Completions: the delta field's name).
    signature = "reasoning_content" if source_api == "openai-completions" else "sig-opaque"
    first = AssistantMessage(
        api=source_api, provider=provider, model=model_id, stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="The user wants the file.", thinking_signature=signature),
            TextContent(text="Reading it now.", text_signature="ts"),
            ToolCall(id=call_id, name="read", arguments={"path": "pic.png"}, thought_signature="c2lnbmF0dXJl"),
        ],
    )
    return [
        UserMessage(
            content=[TextContent(text="What is in this picture?"), ImageContent(data=PNG, mime_type="image/png")]
        ),
        first,
        ToolResultMessage(
            tool_call_id=call_id, tool_name="read",
            content=[TextContent(text="Read image file [image/png]"), ImageContent(data=PNG, mime_type="image/png")],
        ),
        AssistantMessage(api=source_api, provider=provider, model=model_id, content=[TextContent(text="A cat.")]),
        AssistantMessage(
            api=source_api, provider=provider, model=model_id, stop_reason="aborted",
            content=[TextContent(text="partial")],
        ),
        UserMessage(content="And now?"),
    ]


TOOLS = [Tool(name="read", description="Read a file", parameters={
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})]


@pytest.mark.parametrize("source_api", sorted(SOURCES))
@pytest.mark.parametrize("target", ["openai", "deepseek-reasoner", "mistral", "text-only"])
def test_request_bodies_after_handoff_validate_against_the_sdk(source_api: str, target: str) -> None:
    model = {
        "openai": chat_model(reasoning=True, id="o4-mini"),
        "deepseek-reasoner": chat_model(
            id="deepseek-reasoner", provider="deepseek", base_url="https://api.deepseek.com", reasoning=True
        ),
        "mistral": chat_model(id="devstral", provider="mistral", base_url="https://api.mistral.ai/v1"),
        "text-only": chat_model(id="llama3", provider="ollama", base_url="http://localhost:11434/v1", input=["text"]),
    }[target]
    options = StreamOptions(thinking="high", max_tokens=1000, temperature=0.2, tool_choice="auto", session_id="s1")
    context = prepare_context(
        model, Context(system_prompt="Be brief.", messages=handoff_transcript(source_api), tools=TOOLS), options
    )
    request = ADAPTER.build_request(model, context, options, "sk-test")
    body = request.body
    extras = check_against_sdk(body, {"thinking"})
    same_model = source_api == "openai-completions" and target == "deepseek-reasoner"
    roles = [m["role"] for m in body["messages"]]
    if target == "openai":
        assert roles[0] == "developer" and body["reasoning_effort"] == "high"
        assert body["store"] is False and body["max_completion_tokens"] == 1000
    if target == "deepseek-reasoner":
        # DeepSeek wants reasoning_content on every replayed assistant message when thinking.
        assert extras == {"reasoning_content", "thinking"}
        assert body["thinking"] == {"type": "enabled"}
    elif target == "mistral":
        assert extras == {"name"}
    else:
        assert extras == set()
    assistant = [m for m in body["messages"] if m["role"] == "assistant"]
    text = json.dumps(body)
    assert "partial" not in text  # the aborted reply is not sent
    if same_model:
        assert assistant[0]["reasoning_content"] == "The user wants the file."
    elif target == "mistral":
        assert assistant[0]["content"].startswith("The user wants the file.")  # thinking as text
    images = [m for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
              and m["content"][0].get("text") == "Attached image(s) from tool result:"]
    if target == "text-only":
        assert images == [] and "image_url" not in text
    else:
        assert len(images) == 1 and images[0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0]["tool_call_id"] == assistant[0]["tool_calls"][0]["id"]
    assert "|" not in tool_msgs[0]["tool_call_id"] and len(tool_msgs[0]["tool_call_id"]) <= 40
    assert ("name" in tool_msgs[0]) == (target == "mistral")


def test_default_body_shape_and_headers() -> None:
    model = chat_model(headers={"X-Team": "a", "x-override": "model"})
    options = StreamOptions(headers={"X-Override": "options"}, tool_choice="read")
    context = Context(system_prompt="sys", messages=[UserMessage(content="hi")], tools=TOOLS)
    request = ADAPTER.build_request(model, context, options, "sk-1")
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers == {"Authorization": "Bearer sk-1", "X-Team": "a", "X-Override": "options"}
    body = request.body
    check_against_sdk(body)
    assert body["messages"][0] == {"role": "system", "content": "sys"}  # not a reasoning model
    assert body["max_completion_tokens"] == 16_384
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read"}}
    assert body["tools"][0]["function"]["strict"] is False
    assert "reasoning_effort" not in body and "temperature" not in body


def test_no_api_key_sends_no_authorization() -> None:
    request = ADAPTER.build_request(chat_model(base_url="http://localhost:8080/v1/"), Context(), StreamOptions(), None)
    assert request.url == "http://localhost:8080/v1/chat/completions"
    assert "Authorization" not in request.headers


@pytest.mark.parametrize(
    ("fmt", "on", "off"),
    [
        ("openai", {"reasoning_effort": "low"}, {}),
        ("zai", {"thinking": {"type": "enabled"}}, {"thinking": {"type": "disabled"}}),
        ("qwen", {"enable_thinking": True}, {"enable_thinking": False}),
        ("qwen-chat-template", {"chat_template_kwargs": {"enable_thinking": True}},
         {"chat_template_kwargs": {"enable_thinking": False}}),
        ("openrouter", {"reasoning": {"effort": "low"}}, {}),
        ("deepseek", {"thinking": {"type": "enabled"}, "reasoning_effort": "low"}, {"thinking": {"type": "disabled"}}),
    ],
)
def test_thinking_formats(fmt: str, on: dict[str, Any], off: dict[str, Any]) -> None:
    keys = {"reasoning_effort", "thinking", "enable_thinking", "chat_template_kwargs", "reasoning"}
    model = chat_model(reasoning=True, compat={"thinkingFormat": fmt})
    for level, expected in (("low", on), ("off", off), (None, off)):
        body = build_body(model, Context(), StreamOptions(thinking=level), resolve_compat(model))  # type: ignore[arg-type]
        assert {k: v for k, v in body.items() if k in keys} == expected, level


def test_thinking_on_a_non_reasoning_model_sends_nothing_and_effort_map_applies() -> None:
    plain = chat_model()
    assert "reasoning_effort" not in build_body(plain, Context(), StreamOptions(thinking="high"), resolve_compat(plain))
    mapped = chat_model(reasoning=True, compat={"reasoningEffortMap": {"minimal": "low"}})
    body = build_body(mapped, Context(), StreamOptions(thinking="minimal"), resolve_compat(mapped))
    assert body["reasoning_effort"] == "low"
    clamped = build_body(mapped, Context(), StreamOptions(thinking="xhigh"), resolve_compat(mapped))
    assert clamped["reasoning_effort"] == "high"


def test_compat_detection_and_overrides() -> None:
    assert detect_compat(chat_model()) == Compat()
    mistral = detect_compat(chat_model(provider="mistral", base_url="https://api.mistral.ai/v1"))
    assert mistral.max_tokens_field == "max_tokens" and mistral.requires_tool_result_name
    assert mistral.requires_thinking_as_text and not mistral.supports_developer_role
    grok = detect_compat(chat_model(provider="xai", base_url="https://api.x.ai/v1"))
    assert not grok.supports_reasoning_effort and not grok.supports_store
    assert detect_compat(chat_model(provider="zai", base_url="https://api.z.ai/api/paas/v4")).thinking_format == "zai"
    openrouter = detect_compat(chat_model(provider="x", base_url="https://openrouter.ai/api/v1"))
    assert openrouter.thinking_format == "openrouter"
    local = detect_compat(chat_model(provider="ollama", base_url="http://localhost:11434/v1"))
    assert not local.supports_store and not local.supports_developer_role
    model = chat_model(compat={
        "supportsUsageInStreaming": False, "maxTokensField": "max_tokens", "supportsStore": "yes",
        "requiresAssistantAfterToolResult": True, "thinkingFormat": "bogus", "supportsStrictMode": False,
    })
    compat = resolve_compat(model)
    assert not compat.supports_usage_in_streaming and compat.max_tokens_field == "max_tokens"
    assert compat.supports_store  # a wrong type is ignored
    assert compat.thinking_format == "openai" and compat.requires_assistant_after_tool_result
    body = build_body(model, Context(messages=[UserMessage(content="x")], tools=TOOLS), StreamOptions(), compat)
    assert "stream_options" not in body and body["max_tokens"] == 16_384
    assert "strict" not in body["tools"][0]["function"]


def test_assistant_bridge_after_tool_results() -> None:
    model = chat_model(compat={"requiresAssistantAfterToolResult": True})
    messages: list[Message] = [
        UserMessage(content="go"),
        AssistantMessage(api="openai-completions", provider="openai", model="gpt-4o", stop_reason="toolUse",
                         content=[ToolCall(id="c1", name="ls", arguments={})]),
        ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a b")]),
        UserMessage(content="thanks"),
    ]
    body = build_body(model, Context(messages=messages), StreamOptions(), resolve_compat(model))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert body["messages"][1]["content"] == ""
    assert body["messages"][3] == {"role": "assistant", "content": "I have processed the tool results."}
    check_against_sdk(body)


def test_image_only_tool_result_and_non_vision_user_images() -> None:
    model = chat_model()
    messages: list[Message] = [
        UserMessage(content="shot"),
        AssistantMessage(api="openai-completions", provider="openai", model="gpt-4o", stop_reason="toolUse",
                         content=[ToolCall(id="c1", name="screenshot", arguments={}),
                                  ToolCall(id="c2", name="screenshot", arguments={})]),
        *(ToolResultMessage(tool_call_id=cid, tool_name="screenshot", content=[ImageContent(data=PNG, mime_type=mime)])
          for cid, mime in (("c1", "image/png"), ("c2", "image/jpeg"))),
    ]
    body = build_body(model, Context(messages=messages), StreamOptions(), resolve_compat(model))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user"]  # one follow-up for both results
    assert body["messages"][2]["content"] == "(see attached image)"
    follow_up = body["messages"][4]["content"]
    assert [p["type"] for p in follow_up] == ["text", "image_url", "image_url"]
    assert follow_up[2]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    check_against_sdk(body)

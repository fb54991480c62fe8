"""The shared driver: SSE decoding, retries, errors, idle timeouts and abort, over real sockets.

A tiny line protocol (one JSON object per SSE event) exercises the driver without depending on
any vendor adapter; the vendor adapters have their own tests on recorded streams.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.adapter import HttpRequest, MessageBuilder, ProviderError
from baton.providers.events import AssistantMessageEvent, AssistantMessageEventStream, ErrorEvent
from baton.providers.messages import ABORTED_MESSAGE, AssistantMessage, Context, ToolCall, UserMessage
from baton.providers.models import Model, ModelCost
from baton.providers.options import StreamOptions
from baton.providers.sse import SseDecoder
from baton.providers.streaming_json import parse_streaming_json
from baton.providers.transport import (
    error_text_from_body,
    parse_retry_after,
    run_wire_adapter,
    shared_client,
)
from tests.replay_server import ReplayServer, Reply, rechunk, sse_events

# ---------------------------------------------------------------------------------------------
# SSE decoding


def decode_all(chunks: list[bytes]) -> list[tuple[str, str]]:
    dec = SseDecoder()
    out: list[tuple[str, str]] = []
    for chunk in chunks:
        out += dec.feed(chunk)
    return out + dec.close()


SAMPLE = (
    ": a comment\n"
    "event: first\n"
    "data: {\"a\": 1}\n"
    "\n"
    "data: line one\n"
    "data:line two\n"
    "data:  two spaces\n"
    "\n"
    ": keep-alive\n"
    "\n"
    "event: named-without-data\n"
    "\n"
    "id: 7\n"
    "retry: 100\n"
    "data\n"
    "data: é ü 漢字 🎉\n"
    "\n"
    "data: [DONE]\n"
    "\n"
)
EXPECTED = [
    ("first", '{"a": 1}'),
    ("message", "line one\nline two\n two spaces"),
    ("message", "\né ü 漢字 🎉"),
    ("message", "[DONE]"),
]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_sse_line_endings_give_the_same_events(newline: str) -> None:
    body = SAMPLE.replace("\n", newline).encode()
    assert decode_all([body]) == EXPECTED


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_sse_every_byte_boundary(newline: str) -> None:
    body = SAMPLE.replace("\n", newline).encode()
    assert decode_all(rechunk(body, 1)) == EXPECTED
    for cut in range(len(body) + 1):
        assert decode_all([body[:cut], body[cut:]]) == EXPECTED


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=200), max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
def test_sse_random_splits(cuts: list[int], newline: str) -> None:
    body = SAMPLE.replace("\n", newline).encode()
    points = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode_all(pieces) == EXPECTED


def test_sse_bom_and_final_event_without_blank_line() -> None:
    assert decode_all([b"\xef\xbb\xbfdata: x\n\ndata: last"]) == [("message", "x"), ("message", "last")]


def test_sse_cr_then_lf_in_next_chunk_is_one_line_end() -> None:
    assert decode_all([b"data: a\r", b"\ndata: b\r\n\r", b"\n"]) == [("message", "a\nb")]


# ---------------------------------------------------------------------------------------------
# A minimal wire protocol for the driver


class LineDecoder:
    """``{"text"}``, ``{"thinking"}``, ``{"tool": {id, name}}``, ``{"args", "i"}``,
    ``{"usage": {...}}``, ``{"stop": reason}``, ``{"error": message}``, ``{"crash": true}``."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.tools: dict[int, int] = {}
        self.stopped = False

    def feed(self, event: str, data: str) -> None:
        payload = json.loads(data)
        b = self.builder
        if "text" in payload:
            b.text_delta(payload["text"])
        elif "thinking" in payload:
            b.thinking_delta(payload["thinking"])
        elif "tool" in payload:
            self.tools[len(self.tools)] = b.start_tool_call(payload["tool"]["id"], payload["tool"]["name"])
        elif "args" in payload:
            b.tool_call_delta(self.tools[payload["i"]], payload["args"])
        elif "usage" in payload:
            b.output.usage.input = payload["usage"]["input"]
            b.output.usage.output = payload["usage"]["output"]
        elif "stop" in payload:
            b.set_stop_reason(payload["stop"])
            self.stopped = True
        elif "error" in payload:
            raise ProviderError(payload["error"], retryable=payload.get("retryable", False))
        elif "crash" in payload:
            raise RuntimeError("decoder bug")

    def finish(self) -> None:
        if not self.stopped:
            raise ProviderError("stream ended before its stop marker", retryable=True)
        self.builder.close_all()


class LineAdapter:
    api = "test-lines"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def build_request(
        self, model: Model, context: Context, options: StreamOptions, api_key: str | None
    ) -> HttpRequest:
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        return HttpRequest(f"{self.base_url}/lines", headers, {"model": model.id, "n": len(context.messages)})

    def create_decoder(self, model: Model, builder: MessageBuilder) -> LineDecoder:
        return LineDecoder(builder)


MODEL = Model(
    id="line-1", api="test-lines", provider="tests",
    cost=ModelCost(input=2.0, output=10.0),
)
CONTEXT = Context(messages=[UserMessage(content="hi")])
HELLO = sse_events([{"text": "Hel"}, {"text": "lo"}, {"usage": {"input": 100, "output": 20}}, {"stop": "stop"}])
FAST: dict[str, Any] = {"retry_base_delay": 0.01, "max_retry_delay": 1.0}


async def collect(stream: AssistantMessageEventStream) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    events = [e async for e in stream]
    return events, await stream.result()


def check_well_formed(events: list[AssistantMessageEvent]) -> None:
    """start first; every block start has exactly one end; exactly one terminal event, last."""
    assert events[0].type == "start"
    assert [e.type for e in events].count("done") + [e.type for e in events].count("error") == 1
    assert events[-1].type in ("done", "error")
    open_blocks: set[int] = set()
    for e in events[1:-1]:
        kind = e.type
        index = getattr(e, "content_index", None)
        if kind.endswith("_start"):
            assert index not in open_blocks
            open_blocks.add(index)  # type: ignore[arg-type]
        elif kind.endswith("_delta"):
            assert index in open_blocks
        elif kind.endswith("_end"):
            open_blocks.remove(index)  # type: ignore[arg-type]
    assert not open_blocks


def run(server: ReplayServer, **options: Any) -> AssistantMessageEventStream:
    return run_wire_adapter(LineAdapter(server.url), MODEL, CONTEXT, StreamOptions(**options))


async def test_happy_path_events_usage_and_cost() -> None:
    payloads: list[dict[str, Any]] = []
    with ReplayServer([Reply.sse(HELLO)]) as server:
        events, msg = await collect(run(server, api_key="sk-test", on_payload=payloads.append))
    check_well_formed(events)
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    assert msg.text == "Hello" and msg.stop_reason == "stop" and msg.error_message is None
    assert (msg.api, msg.provider, msg.model) == ("test-lines", "tests", "line-1")
    assert msg.usage.total_tokens == 120
    assert msg.usage.cost.input == pytest.approx(100 * 2.0 / 1e6)
    assert msg.usage.cost.total == pytest.approx(100 * 2.0 / 1e6 + 20 * 10.0 / 1e6)
    assert payloads == [{"model": "line-1", "n": 1}]
    (req,) = server.requests
    assert req.path == "/lines" and req.headers["authorization"] == "Bearer sk-test"
    assert req.headers["content-type"] == "application/json" and req.json() == payloads[0]


async def test_http_error_carries_provider_text_and_is_not_retried() -> None:
    body = {"error": {"message": "Invalid model 'line-1'", "type": "invalid_request_error"}}
    with ReplayServer([Reply.json_error(400, body)]) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error"
    assert msg.error_message == "400 Invalid model 'line-1'"
    assert len(server.requests) == 1


async def test_429_with_retry_after_then_success() -> None:
    replies = [
        Reply.json_error(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "0"}),
        Reply.json_error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                         {"retry-after-ms": "400"}),
        Reply.sse(HELLO),
    ]
    with ReplayServer(replies) as server:
        started = time.monotonic()
        # Exponential backoff from 1 ms waits 3 ms at most over both retries: only honouring
        # the server's retry-after-ms can make the run take 0.4 s.
        events, msg = await collect(run(server, retry_base_delay=0.001, max_retry_delay=1.0))
        elapsed = time.monotonic() - started
    check_well_formed(events)
    assert msg.stop_reason == "stop" and msg.text == "Hello"
    assert len(server.requests) == 3
    assert elapsed >= 0.4  # the retry-after-ms wait was honoured


async def test_500_three_times_is_an_error_after_three_attempts() -> None:
    replies = [Reply.json_error(500, {"error": {"message": f"boom {i}"}}) for i in range(3)]
    with ReplayServer(replies) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error" and msg.error_message == "500 boom 2"
    assert len(server.requests) == 3


async def test_retry_after_beyond_the_cap_fails_at_once() -> None:
    replies = [Reply.json_error(429, {"message": "slow down"}, {"retry-after": "120"})]
    with ReplayServer(replies) as server:
        _, msg = await collect(run(server, **FAST))
    assert msg.stop_reason == "error"
    assert msg.error_message is not None and msg.error_message.startswith("429 slow down")
    assert "120" in msg.error_message
    assert len(server.requests) == 1


async def test_plain_text_error_body_and_max_retries_one() -> None:
    reply = Reply(chunks=[b"upstream exploded"], status=502, headers={"content-type": "text/plain"})
    with ReplayServer([reply]) as server:
        _, msg = await collect(run(server, max_retries=1, **FAST))
    assert msg.error_message == "502 upstream exploded"
    assert len(server.requests) == 1


async def test_disconnect_before_content_is_retried() -> None:
    replies = [Reply.sse(HELLO, chunk_size=5, disconnect_after=1), Reply.sse(HELLO)]
    with ReplayServer(replies) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.text == "Hello" and msg.stop_reason == "stop"
    assert len(server.requests) == 2


async def test_disconnect_after_content_is_an_error_keeping_partial_text() -> None:
    body = sse_events([{"text": "partial "}, {"text": "answer"}, {"stop": "stop"}])
    first_event = body.index(b"\n\n") + 2
    with ReplayServer([Reply(chunks=[body[:first_event], body[first_event:]], disconnect_after=1)]) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error" and msg.text == "partial "
    assert msg.error_message is not None and "Connection lost" in msg.error_message
    assert len(server.requests) == 1  # no silent retry after content


async def test_clean_end_without_stop_marker_after_content_is_an_error() -> None:
    with ReplayServer([Reply.sse(sse_events([{"text": "cut"}]))]) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error" and msg.text == "cut"
    assert msg.error_message == "stream ended before its stop marker"


async def test_stall_after_content_hits_the_idle_timeout() -> None:
    body = sse_events([{"text": "thinking about it"}, {"stop": "stop"}])
    first_event = body.index(b"\n\n") + 2
    reply = Reply(chunks=[body[:first_event], body[first_event:]], stall_after=1)
    with ReplayServer([reply]) as server:
        started = time.monotonic()
        events, msg = await collect(run(server, idle_timeout=0.2, **FAST))
        elapsed = time.monotonic() - started
    check_well_formed(events)
    assert msg.stop_reason == "error" and msg.text == "thinking about it"
    assert msg.error_message == "Stream idle: no data received for 0.2 s"
    assert elapsed < 2


async def test_stall_before_content_is_retried_then_reported() -> None:
    replies = [Reply(chunks=[b""], stall_after=0) for _ in range(2)]
    with ReplayServer(replies) as server:
        _, msg = await collect(run(server, idle_timeout=0.1, max_retries=2, **FAST))
    assert msg.stop_reason == "error" and msg.error_message is not None and "idle" in msg.error_message
    assert len(server.requests) == 2


async def test_malformed_json_event_is_an_error_with_partial_content() -> None:
    body = sse_events([{"text": "ok so far"}]) + b"data: {not json\n\n" + sse_events([{"stop": "stop"}])
    with ReplayServer([Reply.sse(body)]) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error" and msg.text == "ok so far"
    assert msg.error_message is not None and msg.error_message.startswith("Malformed JSON")


async def test_decoder_bug_becomes_an_error_event() -> None:
    body = sse_events([{"thinking": "hmm"}, {"crash": True}])
    with ReplayServer([Reply.sse(body)]) as server:
        events, msg = await collect(run(server, **FAST))
    check_well_formed(events)
    assert msg.stop_reason == "error"
    assert msg.error_message == "Unexpected error while streaming: RuntimeError: decoder bug"
    assert msg.content[0].type == "thinking"


async def test_in_band_retryable_error_before_content_is_retried() -> None:
    replies = [Reply.sse(sse_events([{"error": "Overloaded", "retryable": True}])), Reply.sse(HELLO)]
    with ReplayServer(replies) as server:
        _, msg = await collect(run(server, **FAST))
    assert msg.text == "Hello" and len(server.requests) == 2


async def test_connection_refused_is_retried_then_reported() -> None:
    with ReplayServer([]) as server:
        url = server.url
    adapter = LineAdapter(url)  # the server is gone: nothing listens on that port any more
    stream = run_wire_adapter(adapter, MODEL, CONTEXT, StreamOptions(max_retries=2, **FAST))
    events, msg = await collect(stream)
    check_well_formed(events)
    assert msg.stop_reason == "error"
    assert msg.error_message is not None and msg.error_message.startswith("Connection error (127.0.0.1)")


# ---------------------------------------------------------------------------------------------
# Abort


async def test_abort_before_the_request_sends_nothing() -> None:
    signal = asyncio.Event()
    signal.set()
    with ReplayServer([Reply.sse(HELLO)]) as server:
        events, msg = await collect(run(server, signal=signal))
    assert [e.type for e in events] == ["start", "error"]
    assert msg.stop_reason == "aborted" and msg.error_message == ABORTED_MESSAGE
    assert server.requests == []


async def test_abort_during_backoff_is_prompt() -> None:
    signal = asyncio.Event()
    replies = [Reply.json_error(503, {"error": {"message": "busy"}})]
    with ReplayServer(replies) as server:
        stream = run(server, signal=signal, retry_base_delay=30.0, max_retry_delay=60.0)

        async def abort_once_backing_off() -> float:
            while not server.requests:  # the first attempt failed: the 30 s backoff begins
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            signal.set()
            return time.monotonic()

        aborter = asyncio.ensure_future(abort_once_backing_off())
        _, msg = await collect(stream)
        aborted_at = await aborter
    assert time.monotonic() - aborted_at < 2
    assert msg.stop_reason == "aborted" and len(server.requests) == 1


@pytest.mark.parametrize("abort_after", [1, 3, 6, 9])
async def test_abort_mid_stream_keeps_partial_text_thinking_and_tool_call(abort_after: int) -> None:
    body = sse_events([
        {"thinking": "let me see"},
        {"text": "I will call a tool."},
        {"tool": {"id": "call_1", "name": "write"}},
        {"args": '{"path": "a.txt", ', "i": 0},
        {"args": '"content": "hello wor', "i": 0},
        {"args": 'ld"}', "i": 0},
        {"stop": "toolUse"},
    ])
    events_raw = [part + b"\n\n" for part in body.split(b"\n\n") if part]
    signal = asyncio.Event()
    seen: list[AssistantMessageEvent] = []
    with ReplayServer([Reply(chunks=events_raw, delay=0.05)]) as server:
        stream = run(server, signal=signal)
        started = None
        async for event in stream:
            seen.append(event)
            if len(seen) == abort_after:
                signal.set()
                started = time.monotonic()
        msg = await stream.result()
    assert started is not None and time.monotonic() - started < 1
    check_well_formed(seen)
    assert msg.stop_reason == "aborted" and msg.error_message == ABORTED_MESSAGE
    last = seen[-1]
    assert isinstance(last, ErrorEvent) and last.reason == "aborted"
    calls = [b for b in msg.content if isinstance(b, ToolCall)]
    for call in calls:  # whatever was parsed of a half-streamed call is kept
        assert call.name == "write" and set(call.arguments) <= {"path", "content"}


async def test_abort_mid_tool_call_keeps_parsed_arguments() -> None:
    fragments = ['{"path": "a.txt", ', '"content": "hello wor']
    body = sse_events([
        {"tool": {"id": "call_1", "name": "write"}},
        *({"args": f, "i": 0} for f in fragments),
    ])
    signal = asyncio.Event()
    deltas = 0
    with ReplayServer([Reply(chunks=[body], stall_after=1)]) as server:
        stream = run(server, signal=signal)
        async for event in stream:
            if event.type == "toolcall_delta":
                deltas += 1
                if deltas == len(fragments):
                    signal.set()
        msg = await stream.result()
    assert msg.stop_reason == "aborted" and msg.error_message == ABORTED_MESSAGE
    (call,) = msg.tool_calls
    assert (call.id, call.name) == ("call_1", "write")
    assert call.arguments == parse_streaming_json("".join(fragments))


async def test_foreign_cancellation_still_ends_the_stream() -> None:
    with ReplayServer([Reply(chunks=[sse_events([{"text": "x"}])], stall_after=1)]) as server:
        stream = run(server)
        async for event in stream:
            if event.type == "text_delta":
                assert stream.task is not None
                stream.task.cancel()
        msg = await stream.result()
    assert msg.stop_reason == "aborted" and msg.text == "x"


# ---------------------------------------------------------------------------------------------
# Client and helpers


async def test_one_client_per_loop_reused_across_requests() -> None:
    with ReplayServer([Reply.sse(HELLO), Reply.sse(HELLO)]) as server:
        client = shared_client()
        await collect(run(server))
        await collect(run(server))
        assert shared_client() is client
    other: list[httpx.AsyncClient] = []

    def in_other_loop() -> None:
        async def grab() -> None:
            other.append(shared_client())
            await other[0].aclose()

        asyncio.run(grab())

    await asyncio.to_thread(in_other_loop)
    assert other[0] is not client


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "7"})) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    future = email.utils.formatdate(time.time() + 20, usegmt=True)
    value = parse_retry_after(httpx.Headers({"retry-after": future}))
    assert value is not None and 15 < value <= 21
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


def test_error_text_from_body_shapes() -> None:
    assert error_text_from_body('{"error": {"message": "bad key"}}') == "bad key"
    assert error_text_from_body('{"message": "nope"}') == "nope"
    assert error_text_from_body('{"error": "plain"}') == "plain"
    assert error_text_from_body('[{"error": {"code": 429, "message": "quota"}}]') == "quota"
    assert error_text_from_body("<html>gateway</html>") == "<html>gateway</html>"
    assert error_text_from_body('{"detail": "x"}') == '{"detail": "x"}'


async def test_events_dripping_in_fast_are_handed_on_together_complete_and_in_order() -> None:
    # Issue 30: events arriving one small chunk at a time, a few ms apart, are taken in together
    # (a wake-up of the loop costs more than the event); none is lost, reordered or changed.
    words = [f"w{i} " for i in range(40)]
    body = sse_events([*({"text": w} for w in words), {"stop": "stop"}])
    chunks = [event + b"\n\n" for event in body.split(b"\n\n") if event.strip()]
    with ReplayServer([Reply(chunks=chunks, delay=0.004)]) as server:
        stream = run(server, api_key="k")
        deltas: list[str] = []
        seen_ahead = 0
        async for event in stream:
            if event.type == "text_delta":
                deltas.append(event.delta)
                # The partial message is the producer's: when it already holds later deltas,
                # this event was handed on together with the ones after it.
                if len(event.partial.text) > len("".join(deltas)):
                    seen_ahead += 1
        message = await stream.result()
    assert deltas == words
    assert message.text == "".join(words) and message.stop_reason == "stop"
    assert seen_ahead >= len(words) // 2, f"only {seen_ahead} of {len(words)} deltas came with later ones"


@pytest.mark.parametrize("encoding", ["gzip", "identity"])
async def test_a_compressed_or_identity_event_stream_is_decoded(encoding: str) -> None:
    # The body is read from the transport's stream directly unless it is content-encoded: a
    # gzip stream (httpx asks for one) must still come out decompressed, split anywhere.
    import gzip

    body = gzip.compress(HELLO) if encoding == "gzip" else HELLO
    headers = {"content-type": "text/event-stream", "content-encoding": encoding}
    with ReplayServer([Reply(chunks=rechunk(body, 7), headers=headers)]) as server:
        events, msg = await collect(run(server, api_key="sk-test"))
    check_well_formed(events)
    assert msg.text == "Hello" and msg.stop_reason == "stop"

"""The openai-responses adapter: recorded streams over real sockets, the SDK as oracle (request
types and stream accumulator), handoff requests, adversarial delivery and faults."""

from __future__ import annotations

import asyncio
import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.providers.dispatch import stream
from baton.providers.events import AssistantMessageEvent, DoneEvent, ErrorEvent
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
from baton.providers.models import Model, ModelCost
from baton.providers.openai_responses import ADAPTER, build_body, build_request
from baton.providers.openai_responses_stream import parse_text_signature
from baton.providers.options import StreamOptions
from baton.providers.web_search import SEARCH_MARK, searches_of
from tests.providers.claude_gemini_support import (
    PNG_1PX,
    SOURCE_APIS,
    TOOLS,
    Decoded,
    assert_well_formed,
    decode,
    handoff_transcript,
    prepared,
)
from tests.providers.typeddict_oracle import Mismatch, check
from tests.replay_server import ReplayServer, Reply, chunks_txt_to_sse, sse_events

PRICES = ModelCost(input=1.25, output=10.0, cache_read=0.125, cache_write=0.0)
GPT5 = Model(id="gpt-5", name="GPT-5", api="openai-responses", provider="openai", reasoning=True,
             input=["text", "image"], cost=PRICES, base_url="https://api.openai.com/v1")
GPT41 = Model(id="gpt-4.1", api="openai-responses", provider="openai", reasoning=False,
              input=["text", "image"], cost=PRICES, base_url="https://api.openai.com/v1")

TEXT = "gpt-5.5_text_basic.sse"
ARGS = "gpt-5.5_function-call_args-split.sse"
REASONING_CALL = "gpt-5_reasoning-encrypted_function-call_usage.sse"
WEB_SEARCH = "gpt-5_web-search_reasoning-encrypted_cached-tokens.sse"
DEEPSEEK = "deepseek-v4-flash_reasoning-text_function-call_cached-tokens.sse"
FAILED = "gpt-5-nano_error_insufficient-quota_response-failed.chunks.txt"
CODEX = "gpt-5.1-codex-max_reasoning-summary_encrypted_function-calls_4-streams.chunks.txt"


# ---------------------------------------------------------------------------------------------
# Helpers


def responses_dir(provider_streams: Path) -> Path:
    return provider_streams / "openai-responses"


def codex_streams(provider_streams: Path) -> list[bytes]:
    """The four streams of the codex-max file, split at each ``response.created``."""
    streams: list[list[str]] = []
    for line in (responses_dir(provider_streams) / CODEX).read_text().splitlines():
        if not line.strip():
            continue
        if json.loads(line)["type"] == "response.created":
            streams.append([])
        streams[-1].append(line)
    assert len(streams) == 4
    return [chunks_txt_to_sse("\n".join(lines), event_from_type=True) for lines in streams]


def all_bodies(provider_streams: Path) -> dict[str, bytes]:
    """Every recorded stream as SSE bytes, by name."""
    folder = responses_dir(provider_streams)
    bodies = {p.name: p.read_bytes() for p in sorted(folder.glob("*.sse"))}
    bodies[FAILED] = chunks_txt_to_sse((folder / FAILED).read_text(), event_from_type=True)
    for i, body in enumerate(codex_streams(provider_streams)):
        bodies[f"codex-{i}"] = body
    return bodies


def payloads(body: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE body (LF framing)."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith("data: ") and line[6:] != "[DONE]":
            out.append(json.loads(line[6:]))
    return out


def done_items(body: bytes) -> list[dict[str, Any]]:
    return [p["item"] for p in payloads(body) if p["type"] == "response.output_item.done"]


async def run(
    target: Model, replies: list[Reply], context: Context | None = None, **options: Any
) -> tuple[AssistantMessage, list[AssistantMessageEvent], list[Any]]:
    """Stream ``target`` (pointed at a replay server's ``/v1``) through :func:`providers.stream`."""
    context = context or Context(messages=[UserMessage(content="hi")])
    with ReplayServer(list(replies)) as server:
        live = target.model_copy(update={"base_url": server.url + "/v1"})
        options.setdefault("api_key", "sk-test")
        options.setdefault("retry_base_delay", 0.01)
        events: list[AssistantMessageEvent] = []
        async with asyncio.timeout(20):
            async for event in stream(live, context, **options):
                events.append(event)
        requests = list(server.requests)
    assert_well_formed(events)
    final = events[-1]
    message = final.message if isinstance(final, DoneEvent) else final.error  # type: ignore[union-attr]
    for event in events:
        partial = getattr(event, "partial", None)
        assert partial is None or partial is message
    return message, events, requests


def comparable(message: AssistantMessage, *, cost: bool = True) -> dict[str, Any]:
    data = message.to_json_dict()
    data.pop("timestamp")
    if not cost:
        data["usage"].pop("cost")
    return data


def expected_cost(message: AssistantMessage) -> float:
    u = message.usage
    return (u.input * PRICES.input + u.output * PRICES.output + u.cache_read * PRICES.cache_read) / 1e6


def decoded(body: bytes, target: Model = GPT5, chunk_size: int | None = None) -> Decoded:
    return decode(ADAPTER, target, body, chunk_size)


def validate_request(body: dict[str, Any]) -> None:
    """The SDK's streaming request type, unknown keys forbidden at every level."""
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    check(body, ResponseCreateParamsStreaming)


# ---------------------------------------------------------------------------------------------
# Recorded streams over a real socket, field by field


async def test_text_stream(provider_streams: Path) -> None:
    message, events, requests = await run(GPT5, [Reply.sse((responses_dir(provider_streams) / TEXT).read_bytes())])
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_end", "done"]
    assert len(message.content) == 1
    block = message.content[0]
    assert isinstance(block, TextContent) and block.text == "pong"
    assert parse_text_signature(block.text_signature) == (
        "msg_00592e63e61b66660169fab1bada8481a28ef92eb62c168ead", "final_answer")
    assert (message.stop_reason, message.error_message) == ("stop", None)
    assert (message.api, message.provider, message.model) == ("openai-responses", "openai", "gpt-5")
    u = message.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens) == (11, 5, 0, 0, 16)
    assert u.cost.total == pytest.approx(expected_cost(message)) and u.cost.total > 0
    assert len(requests) == 1 and requests[0].method == "POST" and requests[0].path == "/v1/responses"
    assert requests[0].headers["authorization"] == "Bearer sk-test"
    body = requests[0].json()
    validate_request(body)
    assert body["stream"] is True and body["store"] is False and body["model"] == "gpt-5"
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_function_call_with_split_arguments(provider_streams: Path) -> None:
    message, events, _ = await run(GPT5, [Reply.sse((responses_dir(provider_streams) / ARGS).read_bytes())])
    assert [e.type for e in events].count("toolcall_delta") == 11
    assert message.content == [ToolCall(
        id="call_sVidsfFJ6zlzRpelrPkTPlpd|fc_00d64fa806f333310169fab1bf324481a0852cda3180856290",
        name="multiply", arguments={"a": 1231, "b": 2331})]
    assert message.stop_reason == "toolUse"
    u = message.usage
    assert (u.input, u.output, u.cache_read, u.total_tokens) == (58, 23, 0, 81)
    deltas = joined(events, "toolcall_delta")
    assert json.loads(deltas) == {"a": 1231, "b": 2331}


async def test_encrypted_reasoning_then_function_call(provider_streams: Path) -> None:
    body = (responses_dir(provider_streams) / REASONING_CALL).read_bytes()
    message, events, _ = await run(GPT5, [Reply.sse(body)])
    thinking, call = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == ""
    reasoning_item = done_items(body)[0]
    assert reasoning_item["type"] == "reasoning" and reasoning_item["encrypted_content"].startswith("gAAAAAB")
    assert json.loads(thinking.thinking_signature or "") == reasoning_item  # the whole item, verbatim
    assert isinstance(call, ToolCall) and call.name == "final_result" and call.arguments == {"result": 6666}
    assert call.id == "call_CWXgs68YprAjp6t0371hiPOI|fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042"
    assert message.stop_reason == "toolUse"
    u = message.usage
    assert (u.input, u.output, u.cache_read, u.total_tokens) == (53, 469, 0, 522)  # output includes reasoning
    assert [e.type for e in events][:3] == ["start", "thinking_start", "thinking_end"]


async def test_web_search_items_become_text_and_cached_tokens_split(provider_streams: Path) -> None:
    body = (responses_dir(provider_streams) / WEB_SEARCH).read_bytes()
    message, events, _ = await run(GPT5, [Reply.sse(body)])
    kinds = [b.type for b in message.content]
    assert kinds == ["thinking", "text", "thinking", "text"]
    items = done_items(body)
    assert [i["type"] for i in items] == ["reasoning", "web_search_call", "reasoning", "message"]
    search = message.content[1]
    assert isinstance(search, TextContent) and search.text_signature is None
    assert search.text == '[web search] "weather: San Francisco, CA":\n1. oai-weather (a data source of the vendor)'
    text = message.content[3]
    assert isinstance(text, TextContent)
    assert text.text == items[3]["content"][0]["text"]
    assert text.text.startswith("San Francisco weather today (Tuesday, September 16, 2025)")
    assert joined(events, "text_delta") == search.text + text.text
    thoughts = (message.content[0], message.content[2])
    signatures = [json.loads(str(getattr(b, "thinking_signature", ""))) for b in thoughts]
    assert [s["id"] for s in signatures] == [items[0]["id"], items[2]["id"]]
    u = message.usage
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (9463 - 8320, 8320, 582, 10045)
    assert message.stop_reason == "stop"
    assert u.cost.cache_read == pytest.approx(8320 * PRICES.cache_read / 1e6)
    assert searches_of(u) == 1  # one search, priced on top of the tokens
    assert u.cost.total == pytest.approx(u.cost.input + u.cost.output + u.cost.cache_read + 10.0 / 1000)


async def test_deepseek_reasoning_text_and_function_call(provider_streams: Path) -> None:
    target = GPT5.model_copy(update={"id": "deepseek-v4-flash", "provider": "deepseek"})
    message, events, _ = await run(target, [Reply.sse((responses_dir(provider_streams) / DEEPSEEK).read_bytes())])
    thinking, call = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "The user asks about temperature in Tokyo. I'll call the tool."
    assert joined(events, "thinking_delta") == thinking.thinking
    assert json.loads(thinking.thinking_signature or "")["id"] == "fa6f3a83-5d25-46e8-9d03-1a89ce5cf2ba"
    assert call == ToolCall(id="call_00_xjY8Z2BvSlzgEmmw0DtH0464|62bf2bb7-56af-4e3a-883b-83d4aad54da1",
                            name="get_temperature", arguments={"city": "Tokyo"})
    u = message.usage
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (110, 256, 59, 425)


async def test_response_failed_carries_the_providers_message(provider_streams: Path) -> None:
    text = (responses_dir(provider_streams) / FAILED).read_text()
    message, events, requests = await run(GPT5, [Reply.sse(chunks_txt_to_sse(text, event_from_type=True))])
    assert [e.type for e in events] == ["start", "error"]
    assert message.stop_reason == "error" and message.content == []
    assert message.error_message is not None
    assert message.error_message.startswith("insufficient_quota: You exceeded your current quota")
    assert len(requests) == 1  # a quota error is not retried


async def test_codex_max_four_stream_tool_loop(provider_streams: Path) -> None:
    bodies = codex_streams(provider_streams)
    results = [await run(GPT5, [Reply.sse(body)]) for body in bodies]
    first = results[0][0]
    thinking, call = first.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == (
        "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result "
        "by 3, and finally multiply that by 10, reporting the final product.")
    signature = json.loads(thinking.thinking_signature or "")
    assert signature == done_items(bodies[0])[0] and signature["encrypted_content"]
    assert call == ToolCall(id="call_AB6AaRZ1FYZB2RwS6A5vbdqn|fc_01830d662ab3856501693c32151234819091cfca267e98cc5f",
                            name="calculator", arguments={"a": 12, "b": 7, "op": "add"})
    assert [m.content[0].arguments for m, _, _ in results[1:3]] == [  # type: ignore[union-attr]
        {"a": 19, "b": 3, "op": "multiply"}, {"a": 57, "b": 10, "op": "multiply"}]
    last = results[3][0]
    assert last.text == "The final result is **570**." and last.stop_reason == "stop"
    assert [m.stop_reason for m, _, _ in results] == ["toolUse", "toolUse", "toolUse", "stop"]
    assert [(m.usage.input, m.usage.output) for m, _, _ in results] == [(134, 28), (221, 26), (260, 26), (299, 12)]


# ---------------------------------------------------------------------------------------------
# The SDK's stream accumulator agrees on the same bytes


def sdk_accumulate(body: bytes) -> Any:
    from openai._models import construct_type
    from openai._types import omit
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=omit, text_format=omit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for payload in payloads(body):
            state.handle_event(construct_type(type_=ResponseStreamEvent, value=payload))
    return state._completed_response


def test_sdk_accumulator_agrees(provider_streams: Path) -> None:
    bodies = all_bodies(provider_streams)
    bodies.pop(FAILED)
    assert len(bodies) == 9
    for name, body in bodies.items():
        ours = decoded(body)
        assert ours.error is None, name
        sdk = sdk_accumulate(body)
        answer = "".join(b.text for b in ours.message.content
                         if isinstance(b, TextContent) and not b.text.startswith(SEARCH_MARK))
        assert answer == "".join(
            c.text for o in sdk.output if o.type == "message" for c in o.content if c.type == "output_text"), name
        sdk_calls = [(f"{o.call_id}|{o.id}", o.name, json.loads(o.arguments)) for o in sdk.output
                     if o.type == "function_call"]
        assert [(c.id, c.name, c.arguments) for c in ours.message.tool_calls] == sdk_calls, name
        cached = sdk.usage.input_tokens_details.cached_tokens
        u = ours.message.usage
        assert (u.input + u.cache_read, u.cache_read, u.output, u.total_tokens) == (
            sdk.usage.input_tokens, cached, sdk.usage.output_tokens, sdk.usage.total_tokens), name
        sdk_reasoning = [o.to_dict() for o in sdk.output if o.type == "reasoning"]
        ours_reasoning = [json.loads(b.thinking_signature or "") for b in ours.message.content
                          if isinstance(b, ThinkingContent)]
        assert [r["id"] for r in ours_reasoning] == [r["id"] for r in sdk_reasoning], name
        # the signature is the item of response.output_item.done (as pi); response.completed
        # re-encrypts the same reasoning, so only presence can agree with the SDK's snapshot
        assert ours_reasoning == [i for i in done_items(body) if i["type"] == "reasoning"], name
        assert [bool(r.get("encrypted_content")) for r in ours_reasoning] == [
            bool(r.get("encrypted_content")) for r in sdk_reasoning], name


# ---------------------------------------------------------------------------------------------
# Adversarial delivery


def test_every_byte_boundary_gives_the_same_message(provider_streams: Path) -> None:
    for name, body in all_bodies(provider_streams).items():
        baseline = decoded(body)
        for size in (1, 2, 3, 5, 13, 64, 4096):
            again = decoded(body, chunk_size=size)
            assert comparable(again.message) == comparable(baseline.message), (name, size)
            assert [e.type for e in again.events] == [e.type for e in baseline.events], (name, size)
            assert (again.error is None) == (baseline.error is None)


def test_crlf_framing_and_comment_lines_change_nothing(provider_streams: Path) -> None:
    for name, body in all_bodies(provider_streams).items():
        baseline = comparable(decoded(body).message)
        crlf = body.replace(b"\n", b"\r\n")
        assert comparable(decoded(crlf, chunk_size=7).message) == baseline, name
        commented = b": keep-alive\n\n" + body.replace(b"\n\nevent:", b"\n\n: ping\nevent:")
        assert comparable(decoded(commented, chunk_size=11).message) == baseline, name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=1, max_value=40_000), max_size=40))
def test_random_split_points(provider_streams: Path, cuts: list[int]) -> None:
    body = (responses_dir(provider_streams) / WEB_SEARCH).read_bytes()
    points = sorted({c % len(body) for c in cuts} | {0, len(body)})
    message = AssistantMessage(api=GPT5.api, provider=GPT5.provider, model=GPT5.id)
    from baton.providers.adapter import MessageBuilder
    from baton.providers.sse import SseDecoder

    decoder = ADAPTER.create_decoder(GPT5, MessageBuilder(message, lambda _e: None))
    sse = SseDecoder()
    for a, b in itertools.pairwise(points):
        for event, data in sse.feed(body[a:b]):
            decoder.feed(event, data)
    for event, data in sse.close():
        decoder.feed(event, data)
    decoder.finish()
    assert comparable(message) == comparable(decoded(body).message)


async def test_data_split_across_tcp_writes(provider_streams: Path) -> None:
    body = (responses_dir(provider_streams) / ARGS).read_bytes()
    expected = comparable(decoded(body).message, cost=False)
    for size in (1, 9, 100):
        message, _, _ = await run(GPT5, [Reply.sse(body, chunk_size=size)])
        assert comparable(message, cost=False) == expected
        assert message.usage.cost.total == pytest.approx(expected_cost(message))


# ---------------------------------------------------------------------------------------------
# Decoder units: events fed directly


PART = {"type": "summary_text", "text": ""}


def joined(events: list[AssistantMessageEvent], kind: str) -> str:
    """The concatenated deltas of the events of type ``kind``."""
    return "".join(str(getattr(e, "delta", "")) for e in events if e.type == kind)


def feed(events: list[dict[str, Any] | str], target: Model = GPT5) -> Decoded:
    return decoded(sse_events(events, named=True), target)


def completed(status: str = "completed", **response: Any) -> dict[str, Any]:
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 7,
             "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 17}
    return {"type": f"response.{status if status != 'failed' else 'failed'}",
            "response": {"id": "r", "status": status, "usage": usage, **response}}


def test_summary_parts_are_separated_like_pi() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
    out = feed([
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "part": PART},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "**Plan**"},
        {"type": "response.reasoning_summary_part.done", "output_index": 0},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "part": PART},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Then act."},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            **item, "summary": [{"type": "summary_text", "text": "**Plan**"},
                                {"type": "summary_text", "text": "Then act."}]}},
        completed(),
    ])
    block = out.message.content[0]
    assert isinstance(block, ThinkingContent) and block.thinking == "**Plan**\n\nThen act."
    deltas = [str(getattr(e, "delta", "")) for e in out.events if e.type == "thinking_delta"]
    assert deltas == ["**Plan**", "\n\n", "Then act."] and "".join(deltas) == block.thinking
    ends = [e for e in out.events if e.type == "thinking_end"]
    assert len(ends) == 1 and getattr(ends[0], "content", None) == block.thinking
    u = out.message.usage
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (6, 4, 7, 17)


def test_refusal_is_text_and_final_item_text_wins() -> None:
    out = feed([
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": "msg_9", "role": "assistant", "content": []}},
        {"type": "response.content_part.added", "output_index": 0, "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", "output_index": 0, "delta": "I can't"},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "message", "id": "msg_9", "role": "assistant",
            "content": [{"type": "refusal", "refusal": "I can't help with that."}]}},
        completed(),
    ])
    assert out.message.text == "I can't help with that."
    assert parse_text_signature(out.message.content[0].text_signature) == ("msg_9", None)  # type: ignore[union-attr]


def test_incomplete_max_output_tokens_is_length() -> None:
    out = feed([
        {"type": "response.output_text.delta", "output_index": 0, "delta": "cut sh"},
        completed("incomplete", incomplete_details={"reason": "max_output_tokens"}),
    ])
    assert out.error is None and out.message.stop_reason == "length" and out.message.text == "cut sh"


def test_incomplete_content_filter_is_an_error() -> None:
    out = feed([completed("incomplete", incomplete_details={"reason": "content_filter"})])
    assert out.message.stop_reason == "error" and "content filter" in (out.message.error_message or "")


def test_stream_without_completed_is_an_error() -> None:
    out = feed([
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.output_text.delta", "output_index": 0, "delta": "half"},
    ])
    assert out.error is not None and "before response.completed" in out.error.message
    assert out.error.retryable and out.message.text == "half"


def test_sdk_shaped_error_event_and_retryable_codes() -> None:
    out = feed([{"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None}])
    assert out.error is not None and out.error.message == "rate_limit_exceeded: Slow down" and out.error.retryable
    failed = feed([{"type": "response.failed", "response": {"id": "r", "status": "failed", "error": None,
                                                            "incomplete_details": None}}])
    assert failed.error is not None and not failed.error.retryable and "failed" in failed.error.message


def test_unknown_events_items_and_done_marker_are_ignored() -> None:
    out = feed([
        {"type": "response.queued", "response": {"id": "r"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "image_generation_call", "id": "ig"}},
        {"type": "response.image_generation_call.partial_image", "output_index": 0, "partial_image_b64": "AAAA"},
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "image_generation_call", "id": "ig"}},
        {"type": "response.something_new", "whatever": [1, 2]},
        {"type": "response.output_text.delta", "output_index": 1, "delta": "ok"},
        completed(),
        "[DONE]",
    ])
    assert out.error is None and out.message.text == "ok" and out.message.stop_reason == "stop"


def test_malformed_event_is_a_clear_error() -> None:
    out = decoded(b'event: response.output_text.delta\ndata: {"type": "response.output_text.de\n\n')
    assert out.error is not None and "Malformed event" in out.error.message


def test_final_arguments_win_and_bad_json_keeps_the_best_parse() -> None:
    add = {"type": "response.output_item.added", "output_index": 0,
           "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write", "arguments": ""}}
    out = feed([
        add,
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"path": "a'},
        {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"path": "a.txt"}'},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write"}},
        completed(),
    ])
    assert out.message.tool_calls[0].arguments == {"path": "a.txt"}
    broken = feed([
        add,
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"path": "a.txt"}'},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write", "arguments": "{not json"}},
        completed(),
    ])
    assert broken.message.tool_calls[0].arguments == {"path": "a.txt"}
    assert broken.message.stop_reason == "toolUse"


# ---------------------------------------------------------------------------------------------
# Requests: shape, options, and the SDK's request type


def body_for(target: Model, context: Context, **options: Any) -> dict[str, Any]:
    opts = StreamOptions(**options)
    body = build_request(target, prepared(target, context, **options), opts, "sk").body
    validate_request(body)
    return body


def simple() -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(content="hi \ud83d there")], tools=TOOLS)


def test_request_basics() -> None:
    request = build_request(GPT5, simple(), StreamOptions(headers={"x-extra": "1"}), "sk-1")
    assert request.url == "https://api.openai.com/v1/responses"
    assert request.headers == {"authorization": "Bearer sk-1", "x-extra": "1"}
    body = body_for(GPT5, simple())
    assert body["input"][0] == {"role": "developer", "content": "Be brief."}
    assert body["input"][1] == {"role": "user", "content": [{"type": "input_text", "text": "hi \ufffd there"}]}
    assert body["tools"][0] == {"type": "function", "name": "read", "description": "Read a file",
                                "parameters": TOOLS[0].parameters, "strict": False}
    assert "reasoning" not in body and "temperature" not in body
    assert body["max_output_tokens"] == 16_384  # pi's default: min(model.maxTokens, 32000)
    big = GPT5.model_copy(update={"max_tokens": 128_000})
    assert body_for(big, simple())["max_output_tokens"] == 32_000
    json.dumps(body).encode()  # no lone surrogates left
    plain = body_for(GPT41, simple())
    assert plain["input"][0]["role"] == "system" and "include" not in plain and "reasoning" not in plain
    no_dev = GPT5.model_copy(update={"compat": {"supportsDeveloperRole": False}})
    assert body_for(no_dev, simple())["input"][0]["role"] == "system"
    assert build_request(GPT5, simple(), StreamOptions(), None).headers == {}
    capped = GPT5.model_copy(update={"compat": {"supportsMaxOutputTokens": False}})
    assert "max_output_tokens" not in body_for(capped, simple(), max_tokens=100)


@pytest.mark.parametrize(
    ("model_id", "compat", "level", "expected"),
    [
        ("gpt-5", None, "medium", {"effort": "medium", "summary": "auto"}),
        ("gpt-5", None, "xhigh", {"effort": "high", "summary": "auto"}),
        ("gpt-5.1-codex-max", {"supportsXhigh": True}, "xhigh", {"effort": "xhigh", "summary": "auto"}),
        ("gpt-5", None, "minimal", {"effort": "minimal", "summary": "auto"}),
        ("gpt-5", None, "off", {"effort": "minimal"}),
        ("gpt-5-mini", None, "off", {"effort": "minimal"}),
        ("gpt-5.1", None, "off", {"effort": "none"}),
        ("gpt-5.2", None, "off", {"effort": "none"}),
        ("o3", None, "off", None),
        ("gpt-5-codex", None, "off", None),
        ("gpt-5.1", {"reasoningEffortOff": "low"}, "off", {"effort": "low"}),
        ("gpt-5", None, None, None),
        ("gpt-5.1", None, "minimal", {"effort": "low", "summary": "auto"}),
        ("gpt-5-codex", None, "minimal", {"effort": "low", "summary": "auto"}),
        ("o4-mini", None, "minimal", {"effort": "minimal", "summary": "auto"}),
        ("my-model", {"reasoningEffortMap": {"high": "xhigh", "off": None}}, "high",
         {"effort": "xhigh", "summary": "auto"}),
        ("my-model", {"reasoningEffortMap": {"high": "xhigh", "off": None}}, "off", None),
    ],
)
def test_reasoning_effort_by_thinking_level(
    model_id: str, compat: dict[str, Any] | None, level: str | None, expected: dict[str, Any] | None
) -> None:
    target = GPT5.model_copy(update={"id": model_id, "compat": compat})
    body = body_for(target, simple(), thinking=level)
    assert body.get("reasoning") == expected
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "reasoning" not in body_for(GPT41, simple(), thinking=level)


def test_options_map_to_fields() -> None:
    body = body_for(GPT5, simple(), max_tokens=4, temperature=0.2, session_id="sess-1", tool_choice="required")
    assert (body["max_output_tokens"], body["temperature"]) == (16, 0.2)  # the API's minimum is 16
    assert body["prompt_cache_key"] == "sess-1" and "prompt_cache_retention" not in body
    assert body["tool_choice"] == "required"
    assert body_for(GPT5, simple(), max_tokens=5000)["max_output_tokens"] == 5000
    assert body_for(GPT5, simple(), tool_choice="read")["tool_choice"] == {"type": "function", "name": "read"}
    chat_style = {"type": "function", "function": {"name": "ls"}}
    assert body_for(GPT5, simple(), tool_choice=chat_style)["tool_choice"] == {"type": "function", "name": "ls"}
    long_cache = body_for(GPT5, simple(), session_id="s", cache_retention="long")
    assert long_cache["prompt_cache_retention"] == "24h"
    elsewhere = GPT5.model_copy(update={"base_url": "http://127.0.0.1:1/v1"})
    assert "prompt_cache_retention" not in body_for(elsewhere, simple(), session_id="s", cache_retention="long")
    assert "prompt_cache_key" not in body_for(GPT5, simple(), session_id="s", cache_retention="none")
    long_id = body_for(GPT5, simple(), session_id="x" * 100)["prompt_cache_key"]
    assert len(long_id) <= 64 and long_id != body_for(GPT5, simple(), session_id="x" * 101)["prompt_cache_key"]


def own_turns(target: Model) -> Context:
    """A transcript produced by ``target`` itself: reasoning items, text with phase, calls."""
    reasoning = {"type": "reasoning", "id": "rs_abc", "summary": [{"type": "summary_text", "text": "Plan"}],
                 "encrypted_content": "gAAAAABenc"}
    assistant = AssistantMessage(
        api=target.api, provider=target.provider, model=target.id, stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Plan", thinking_signature=json.dumps(reasoning)),
            TextContent(text="Reading.", text_signature='{"v":1,"id":"msg_own","phase":"commentary"}'),
            ToolCall(id="call_1|fc_own1", name="read", arguments={"path": "a.png"}),
        ],
    )
    return Context(system_prompt="sys", tools=TOOLS, messages=[
        UserMessage(content="look"),
        assistant,
        ToolResultMessage(tool_call_id="call_1|fc_own1", tool_name="read",
                          content=[ImageContent(data=PNG_1PX, mime_type="image/png")]),
        AssistantMessage(api=target.api, provider=target.provider, model=target.id,
                         content=[TextContent(text="x" * 3, text_signature="msg_" + "y" * 80)]),
        UserMessage(content=[TextContent(text="and?"), ImageContent(data=PNG_1PX, mime_type="image/jpeg")]),
    ])


def test_same_model_replays_reasoning_items_verbatim_with_item_ids() -> None:
    context = own_turns(GPT5)
    items = body_for(GPT5, context, thinking="high")["input"]
    kinds = [i.get("type") or i["role"] for i in items]
    assert kinds == ["developer", "user", "reasoning", "message", "function_call", "function_call_output",
                     "user", "message", "user"]
    own = context.messages[1]
    assert isinstance(own, AssistantMessage) and isinstance(own.content[0], ThinkingContent)
    assert items[2] == json.loads(own.content[0].thinking_signature or "")
    assert items[3]["id"] == "msg_own" and items[3]["phase"] == "commentary"
    assert items[3]["content"] == [{"type": "output_text", "text": "Reading.", "annotations": []}]
    assert items[4] == {"type": "function_call", "call_id": "call_1", "id": "fc_own1", "name": "read",
                        "arguments": '{"path": "a.png"}'}
    assert items[5] == {"type": "function_call_output", "call_id": "call_1", "output": "(see attached image)"}
    assert items[6]["content"][0] == {"type": "input_text", "text": "Attached image(s) from tool result:"}
    assert items[6]["content"][1]["image_url"] == f"data:image/png;base64,{PNG_1PX}"
    assert len(items[7]["id"]) <= 64 and items[7]["id"].startswith("msg_")
    assert items[8]["content"][1] == {"type": "input_image", "detail": "auto",
                                      "image_url": f"data:image/jpeg;base64,{PNG_1PX}"}


def test_another_model_gets_no_reasoning_items_and_no_item_ids() -> None:
    other = GPT5.model_copy(update={"id": "gpt-5-mini"})
    items = body_for(other, own_turns(GPT5), thinking="low")["input"]
    assert not [i for i in items if i.get("type") == "reasoning"]
    calls = [i for i in items if i.get("type") == "function_call"]
    assert calls and all("id" not in c for c in calls)
    assert next(i for i in items if i.get("type") == "function_call_output")["call_id"] == calls[0]["call_id"]


def test_text_only_model_gets_no_images() -> None:
    text_only = GPT5.model_copy(update={"id": "o3-mini", "input": ["text"]})
    items = body_for(text_only, own_turns(GPT5))["input"]
    assert "input_image" not in json.dumps(items)


@pytest.mark.parametrize("source_api", sorted(SOURCE_APIS))
@pytest.mark.parametrize("target", [GPT5, GPT41], ids=["gpt-5", "gpt-4.1"])
def test_handoff_requests_validate_against_the_sdk(source_api: str, target: Model) -> None:
    context = handoff_transcript(source_api, target)
    for level in (None, "off", "high"):
        body = body_for(target, context, thinking=level, max_tokens=1000, session_id="s", tool_choice="auto")
        items = body["input"]
        calls = [i for i in items if i.get("type") == "function_call"]
        outputs = [i for i in items if i.get("type") == "function_call_output"]
        assert [c["call_id"] for c in calls] == [o["call_id"] for o in outputs]
        assert len(calls) == 2 and all(len(c["call_id"]) <= 64 and "|" not in c["call_id"] for c in calls)
        same = source_api == "openai-responses" and target.reasoning
        assert bool([i for i in items if i.get("type") == "reasoning"]) == same
        assert "partial" not in json.dumps(items)  # the errored turn is dropped
        if target.supports_images:
            assert json.dumps(items).count("input_image") == 2  # the user's and the tool result's


def test_request_building_is_usable_as_a_wire_adapter() -> None:
    assert ADAPTER.api == "openai-responses"
    from baton.providers.dispatch import resolve

    assert resolve("openai-responses") is ADAPTER


def test_oracle_catches_unknown_keys() -> None:
    body = build_body(GPT5, simple(), StreamOptions())
    body["input"][1]["content"][0]["bogus"] = 1
    with pytest.raises(Mismatch):
        validate_request(body)


# ---------------------------------------------------------------------------------------------
# Faults over a real socket


def text_body(text: str = "Hello there, friend.", chunk: int = 4) -> bytes:
    from tests.provider_scripts import text_reply

    return text_reply("openai-responses", text, chunk=chunk)


async def test_429_with_retry_after_then_success() -> None:
    replies = [Reply.json_error(429, {"error": {"message": "Rate limit reached", "type": "requests"}},
                                {"retry-after": "0"}), Reply.sse(text_body())]
    message, _, requests = await run(GPT5, replies)
    assert message.stop_reason == "stop" and message.text == "Hello there, friend."
    assert len(requests) == 2 and requests[0].json() == requests[1].json()


async def test_http_error_body_message_is_kept() -> None:
    error = {"error": {"message": "Invalid 'input[2].id': 'x'.", "type": "invalid_request_error"}}
    message, _, requests = await run(GPT5, [Reply.json_error(400, error)])
    assert message.stop_reason == "error" and "Invalid 'input[2].id'" in (message.error_message or "")
    assert len(requests) == 1


async def test_disconnect_mid_stream_keeps_partial_text_without_retry() -> None:
    body = text_body("one two three four five six", chunk=3)
    pieces = [body[i:i + 200] for i in range(0, len(body), 200)]
    message, _, requests = await run(GPT5, [Reply(chunks=pieces, disconnect_after=len(pieces) // 2)])
    assert message.stop_reason == "error" and message.text and len(requests) == 1
    assert "one two three four five six".startswith(message.text)


async def test_clean_close_before_content_is_retried() -> None:
    created = sse_events([{"type": "response.created", "response": {"id": "r", "status": "in_progress"}}], named=True)
    message, _, requests = await run(GPT5, [Reply.sse(created), Reply.sse(text_body("fine"))])
    assert (message.stop_reason, message.text, len(requests)) == ("stop", "fine", 2)


async def test_in_stream_rate_limit_error_before_content_is_retried() -> None:
    error = sse_events([{"type": "error", "error": {"type": "tokens", "code": "rate_limit_exceeded",
                                                    "message": "Rate limit reached for gpt-5"}}], named=True)
    message, _, requests = await run(GPT5, [Reply.sse(error), Reply.sse(text_body("after"))])
    assert (message.stop_reason, message.text, len(requests)) == ("stop", "after", 2)


async def test_malformed_event_mid_stream_ends_in_error() -> None:
    body = text_body("abc def", chunk=2)
    broken = body.replace(b'"delta":"de"', b'"delta":"de', 1)
    assert broken != body
    message, _, _ = await run(GPT5, [Reply.sse(broken)])
    assert message.stop_reason == "error" and "Malformed event" in (message.error_message or "")


async def test_stall_ends_as_idle_error() -> None:
    body = text_body("slow", chunk=1)
    message, _, _ = await run(GPT5, [Reply(chunks=[body[:300]], stall_after=1)], idle_timeout=0.3, max_retries=1)
    assert message.stop_reason == "error" and "idle" in (message.error_message or "").lower()


@pytest.mark.parametrize("after_deltas", [1, 3, 7])
async def test_abort_mid_stream_keeps_partial_content(after_deltas: int) -> None:
    body = text_body("abcdefghijklmnopqrstuvwxyz", chunk=2)
    events_raw = body.split(b"\n\n")
    chunks = [e + b"\n\n" for e in events_raw if e]
    signal = asyncio.Event()
    seen: list[str] = []

    def on_delta(event: AssistantMessageEvent) -> None:
        if event.type == "text_delta":
            seen.append(event.delta)
            if len(seen) == after_deltas:
                signal.set()

    with ReplayServer([Reply(chunks=chunks, delay=0.02)]) as server:
        live = GPT5.model_copy(update={"base_url": server.url + "/v1"})
        events: list[AssistantMessageEvent] = []
        async with asyncio.timeout(20):
            async for event in stream(live, Context(messages=[UserMessage(content="hi")]), api_key="k", signal=signal):
                events.append(event)
                on_delta(event)
    assert_well_formed(events)
    final = events[-1]
    assert isinstance(final, ErrorEvent) and final.reason == "aborted"
    assert final.error.stop_reason == "aborted"
    assert final.error.text == "".join(seen) and len(seen) >= after_deltas


# ---------------------------------------------------------------------------------------------
# Round trips over the wire


@pytest.mark.parametrize("source_api", sorted(SOURCE_APIS))
async def test_handoff_request_on_the_wire_validates(source_api: str) -> None:
    _, _, requests = await run(GPT5, [Reply.sse(text_body("ok"))], handoff_transcript(source_api), thinking="medium")
    body = requests[0].json()
    validate_request(body)
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}


async def test_reasoning_and_call_replay_to_the_same_model(provider_streams: Path) -> None:
    body = (responses_dir(provider_streams) / REASONING_CALL).read_bytes()
    first, _, _ = await run(GPT5, [Reply.sse(body)])
    call = first.tool_calls[0]
    context = Context(system_prompt="sys", tools=TOOLS, messages=[
        UserMessage(content="compute"), first,
        ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="6666")]),
    ])
    _, _, requests = await run(GPT5, [Reply.sse(text_body("done"))], context, thinking="low")
    items = requests[0].json()["input"]
    validate_request(requests[0].json())
    assert items[2] == done_items(body)[0]  # the reasoning item, verbatim, encrypted content included
    assert items[3] == {"type": "function_call", "call_id": "call_CWXgs68YprAjp6t0371hiPOI",
                        "id": "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042",
                        "name": "final_result", "arguments": '{"result": 6666}'}
    assert items[4] == {"type": "function_call_output", "call_id": "call_CWXgs68YprAjp6t0371hiPOI", "output": "6666"}
    # the same transcript sent to another model: the reasoning becomes nothing replayable
    other = GPT5.model_copy(update={"id": "gpt-5-mini"})
    _, _, requests = await run(other, [Reply.sse(text_body("done"))], context, thinking="low")
    items = requests[0].json()["input"]
    assert "encrypted_content" not in json.dumps(items)
    assert [i.get("type") for i in items if "type" in i] == ["function_call", "function_call_output"]
    assert "id" not in items[2]

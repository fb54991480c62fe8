"""Adapter overhead, end to end over a real local socket, per wire protocol.

1. A 20,000-delta text stream: deltas/s from ``providers.stream`` to the consumer's last event
   (target >= 50,000 deltas/s per protocol), and deltas per CPU second of the client (the CPU
   time of the thread running the event loop: the replay server's thread is not counted; target
   >= 150,000, issue 30). Each run is a new client on a new connection, as a new process has.
2. The same text stream as a provider sends it while it writes: each event its own chunk,
   ``PACED_DELAY`` seconds apart (``--paced`` events): deltas per CPU second of the client, where
   each event's wake-up of the loop and pass through the HTTP layers is paid.
3. A 140 kB tool argument streamed in 4-character deltas: CPU seconds of the client for the whole stream
   (target <= 0.5 s; pi takes > 60 s). Skipped for protocols that deliver arguments whole.

Each protocol is one :class:`Protocol` entry: a function making the SSE body of ``n`` text
deltas, optionally one making a tool-call stream from argument fragments, and the model to ask.
Adding a protocol is one entry in ``PROTOCOLS``.

Run: ``python benchmarks/bench_adapters.py [--deltas N] [--repeat R] [--only API]``
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baton.providers.dispatch import stream as start_stream
from baton.providers.messages import AssistantMessage, Context, UserMessage
from baton.providers.models import Model
from baton.providers.transport import aclose_shared_client
from tests.replay_server import ReplayServer, Reply, rechunk

TEXT_DELTA = "tok "  # every text delta
TOOL_ARGUMENT_BYTES = 140_000
SERVER_WRITE = 64 * 1024
"""The server writes in 64 KiB chunks so that the measurement is the client's work."""
PACED_DELAY = 0.005


def _sse(payloads: list[dict[str, Any] | str], named: bool = False) -> bytes:
    out: list[str] = []
    for item in payloads:
        if named and isinstance(item, dict):
            out.append(f"event: {item['type']}\n")
        data = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
        out.append(f"data: {data}\n\n")
    return "".join(out).encode()


# --- openai-completions ---------------------------------------------------------------------

def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def completions_text(n: int) -> bytes:
    usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
             "usage": {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": n + 10}}
    return _sse([_chat_chunk({"role": "assistant", "content": ""}),
                 *(_chat_chunk({"content": TEXT_DELTA}) for _ in range(n)),
                 _chat_chunk({}, "stop"), usage, "[DONE]"])


def completions_tool(fragments: list[str]) -> bytes:
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write", "arguments": ""}}
    return _sse([_chat_chunk({"role": "assistant", "tool_calls": [first]}),
                 *(_chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]}) for f in fragments),
                 _chat_chunk({}, "tool_calls"), "[DONE]"])


# --- anthropic-messages ---------------------------------------------------------------------

def _anthropic(block: dict[str, Any], deltas: list[dict[str, Any]], stop: str) -> bytes:
    start = {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}
    return _sse([start, {"type": "content_block_start", "index": 0, "content_block": block},
                 *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
                 {"type": "content_block_stop", "index": 0},
                 {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": len(deltas)}},
                 {"type": "message_stop"}], named=True)


def anthropic_text(n: int) -> bytes:
    return _anthropic({"type": "text", "text": ""}, [{"type": "text_delta", "text": TEXT_DELTA}] * n, "end_turn")


def anthropic_tool(fragments: list[str]) -> bytes:
    block = {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}
    return _anthropic(block, [{"type": "input_json_delta", "partial_json": f} for f in fragments], "tool_use")


# --- openai-responses -----------------------------------------------------------------------

def _responses(item: dict[str, Any], done_item: dict[str, Any], deltas: list[dict[str, Any]]) -> bytes:
    response = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress", "model": "m",
                "output": [], "usage": None}
    usage = {"input_tokens": 10, "output_tokens": len(deltas), "total_tokens": len(deltas) + 10,
             "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    completed = {**response, "status": "completed", "output": [done_item], "usage": usage}
    seq = iter(range(1_000_000_000))
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *deltas,
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {"type": "response.completed", "response": completed},
    ]
    return _sse([{**e, "sequence_number": next(seq)} for e in events], named=True)


def responses_text(n: int) -> bytes:
    text = TEXT_DELTA * n
    item = {"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    done_item = {**item, "status": "completed", "content": [{**part, "text": text}]}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    deltas = [
        {"type": "response.content_part.added", **where, "part": part},
        *({"type": "response.output_text.delta", **where, "delta": TEXT_DELTA} for _ in range(n)),
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
    ]
    return _responses(item, done_item, deltas)


def responses_tool(fragments: list[str]) -> bytes:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write", "arguments": "",
            "status": "in_progress"}
    arguments = "".join(fragments)
    done_item = {**item, "status": "completed", "arguments": arguments}
    deltas = [
        *({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": f}
          for f in fragments),
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0,
         "arguments": arguments},
    ]
    return _responses(item, done_item, deltas)


# --- google-generative-ai -------------------------------------------------------------------

def gemini_text(n: int) -> bytes:
    chunk = {"candidates": [{"content": {"parts": [{"text": TEXT_DELTA}], "role": "model"}, "index": 0}],
             "modelVersion": "m"}
    last = {"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": n, "totalTokenCount": n + 10}}
    return _sse([*([chunk] * n), last]).replace(b"\n", b"\r\n")


# --- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Protocol:
    """How to benchmark one wire protocol."""

    api: str
    module: str
    text_stream: Callable[[int], bytes]
    tool_stream: Callable[[list[str]], bytes] | None
    """``None`` when the protocol delivers tool arguments whole (nothing to stream)."""


PROTOCOLS = [
    Protocol("openai-completions", "baton.providers.openai_completions", completions_text, completions_tool),
    Protocol("anthropic-messages", "baton.providers.anthropic_messages", anthropic_text, anthropic_tool),
    Protocol("openai-responses", "baton.providers.openai_responses", responses_text, responses_tool),
    Protocol("google-generative-ai", "baton.providers.google_generative_ai", gemini_text, None),
]


def bench_model(api: str, base_url: str) -> Model:
    return Model(id="bench-model", api=api, provider="bench", base_url=base_url, max_tokens=4096)


def big_tool_arguments() -> str:
    line = 'print("hello, world")  # a line of a file the model writes, with "quotes" and \\ slashes\n'
    content = (line * (TOOL_ARGUMENT_BYTES // len(line) + 1))[:TOOL_ARGUMENT_BYTES]
    return json.dumps({"path": "src/big_module.py", "content": content})


async def run_once(protocol: Protocol, body: bytes, paced: bool = False) -> tuple[float, float, AssistantMessage, int]:
    """(wall seconds, CPU seconds of the client's thread, final message, events seen) for one
    streamed response (``paced``: each event its own chunk, :data:`PACED_DELAY` apart)."""
    if paced:
        separator = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
        reply = Reply(chunks=[event + separator for event in body.split(separator) if event.strip()],
                      delay=PACED_DELAY)
    else:
        reply = Reply(chunks=rechunk(body, SERVER_WRITE))
    with ReplayServer([reply]) as server:
        model = bench_model(protocol.api, server.url)
        context = Context(messages=[UserMessage(content="go")])
        wall, cpu = time.perf_counter(), time.thread_time()
        stream = start_stream(model, context, api_key="bench", max_retries=1)
        events = 0
        async for _ in stream:
            events += 1
        message = await stream.result()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    await aclose_shared_client()
    return wall, cpu, message, events


async def bench_text(protocol: Protocol, n: int, repeat: int) -> str:
    body = protocol.text_stream(n)
    rates, cpu_rates = [], []
    for _ in range(repeat):
        wall, cpu, message, _ = await run_once(protocol, body)
        if message.stop_reason != "stop" or message.text != TEXT_DELTA * n:
            return f"FAILED ({message.stop_reason}: {message.error_message or 'wrong text'})"
        rates.append(n / wall)
        cpu_rates.append(n / cpu)
    best, best_cpu = max(rates), max(cpu_rates)
    verdict = "ok" if best >= 50_000 and best_cpu >= 150_000 else "BELOW TARGET"
    return (f"{best:>10,.0f} deltas/s best, {statistics.median(rates):,.0f} median; "
            f"{best_cpu:,.0f} deltas per CPU second best, {statistics.median(cpu_rates):,.0f} median  [{verdict}]")


async def bench_paced(protocol: Protocol, n: int, repeat: int) -> str:
    body = protocol.text_stream(n)
    rates = []
    for _ in range(repeat):
        _, cpu, message, _ = await run_once(protocol, body, paced=True)
        if message.stop_reason != "stop" or message.text != TEXT_DELTA * n:
            return f"FAILED ({message.stop_reason}: {message.error_message or 'wrong text'})"
        rates.append(n / cpu)
    return (f"{max(rates):>10,.0f} deltas per CPU second best, {statistics.median(rates):,.0f} median "
            f"({n} events {PACED_DELAY * 1000:.0f} ms apart, one chunk each)")


async def bench_tool(protocol: Protocol, repeat: int) -> str:
    if protocol.tool_stream is None:
        return "n/a (arguments arrive whole)"
    arguments = big_tool_arguments()
    fragments = [arguments[i : i + 4] for i in range(0, len(arguments), 4)]
    body = protocol.tool_stream(fragments)
    cpus = []
    for _ in range(repeat):
        _, cpu, message, _ = await run_once(protocol, body)
        calls = message.tool_calls
        if message.stop_reason != "toolUse" or not calls or calls[0].arguments != json.loads(arguments):
            return f"FAILED ({message.stop_reason}: {message.error_message or 'wrong arguments'})"
        cpus.append(cpu)
    best = min(cpus)
    verdict = "ok" if best <= 0.5 else "ABOVE TARGET"
    return f"{best:>6.3f} s CPU best, {statistics.median(cpus):.3f} median, {len(fragments):,} deltas  [{verdict}]"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--paced", type=int, default=300, help="events in the paced stream (0: skip it)")
    parser.add_argument("--only", help="benchmark only this api")
    args = parser.parse_args()
    print(f"text: {args.deltas:,} deltas of {TEXT_DELTA!r}; tool: {TOOL_ARGUMENT_BYTES:,}-byte argument in "
          f"4-character deltas; best of {args.repeat}")
    for protocol in PROTOCOLS:
        if args.only and protocol.api != args.only:
            continue
        try:
            importlib.import_module(protocol.module)
        except ImportError:
            print(f"{protocol.api:22} skipped (no {protocol.module})")
            continue
        print(f"{protocol.api:22} text  {await bench_text(protocol, args.deltas, args.repeat)}")
        if args.paced:
            print(f"{'':22} paced {await bench_paced(protocol, args.paced, args.repeat)}")
        print(f"{'':22} tool  {await bench_tool(protocol, args.repeat)}")


if __name__ == "__main__":
    asyncio.run(main())

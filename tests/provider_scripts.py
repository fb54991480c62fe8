"""Synthetic, protocol-correct SSE bodies for the four wire protocols.

Used wherever a test (or benchmark) needs a provider to say something specific over a real
socket: a text answer split into given deltas, or a tool call whose JSON arguments arrive in
fragments. The shapes follow the recorded streams in ../shared/fixtures/provider-streams.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

APIS: tuple[str, ...] = ("openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai")


def _data(payload: dict[str, Any] | str, event: str | None = None, eol: str = "\n") -> str:
    body = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {body}{eol}{eol}"


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text_reply(api: str, deltas: Sequence[str] | str, *, chunk: int = 8) -> bytes:
    """An SSE body in which the model answers ``deltas`` (a string is split every ``chunk``)."""
    parts = _split(deltas, chunk) if isinstance(deltas, str) else list(deltas)
    return _BUILDERS[api](parts, None)


def tool_call_reply(
    api: str, call_id: str, name: str, arguments: dict[str, Any], *, text: str = "", chunk: int = 8
) -> bytes:
    """An SSE body in which the model says ``text`` and calls ``name`` with ``arguments``,
    the JSON arguments streamed in ``chunk``-character fragments (Google sends them whole)."""
    parts = _split(text, chunk) if text else []
    return _BUILDERS[api](parts, (call_id, name, arguments, chunk))


ToolSpec = tuple[str, str, dict[str, Any], int] | None


def parallel_calls_reply(calls: Sequence[tuple[str, str, dict[str, Any]]]) -> bytes:
    """An OpenAI Chat Completions SSE body in which the model makes several tool calls at once
    (``(call_id, name, arguments)`` each), so the agent runs them in parallel."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _data({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    for index, (call_id, name, args) in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": json.dumps(args)}}]}))
    out.append(chunk({}, "tool_calls"))
    out.append(_data("[DONE]"))
    return "".join(out).encode()


def _openai_completions(parts: list[str], tool: ToolSpec) -> bytes:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return _data({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in parts]
    finish = "stop"
    if tool is not None:
        call_id, name, args, size = tool
        out.append(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        for frag in _split(json.dumps(args), size):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": frag}}]}))
        finish = "tool_calls"
    out.append(chunk({}, finish))
    out.append(_data({**base, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": len(parts) + 1,
                                                        "total_tokens": 13 + len(parts)}}))
    out.append(_data("[DONE]"))
    return "".join(out).encode()


def _anthropic(parts: list[str], tool: ToolSpec) -> bytes:
    out = [_data({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0}}}, "message_start")]
    index = 0
    if parts:
        out.append(_data({"type": "content_block_start", "index": 0,
                          "content_block": {"type": "text", "text": ""}}, "content_block_start"))
        for p in parts:
            out.append(_data({"type": "content_block_delta", "index": 0,
                              "delta": {"type": "text_delta", "text": p}}, "content_block_delta"))
        out.append(_data({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    stop = "end_turn"
    if tool is not None:
        call_id, name, args, size = tool
        out.append(_data({"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}}, "content_block_start"))
        for frag in _split(json.dumps(args), size):
            out.append(_data({"type": "content_block_delta", "index": index,
                              "delta": {"type": "input_json_delta", "partial_json": frag}},
                             "content_block_delta"))
        out.append(_data({"type": "content_block_stop", "index": index}, "content_block_stop"))
        stop = "tool_use"
    out.append(_data({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                      "usage": {"output_tokens": len(parts) + 1}}, "message_delta"))
    out.append(_data({"type": "message_stop"}, "message_stop"))
    return "".join(out).encode()


def _openai_responses(parts: list[str], tool: ToolSpec) -> bytes:
    seq = iter(range(1_000_000))
    out: list[str] = []

    def ev(payload: dict[str, Any]) -> None:
        payload = {**payload, "sequence_number": next(seq)}
        out.append(_data(payload, payload["type"]))

    response = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress",
                "model": "m", "output": []}
    ev({"type": "response.created", "response": response})
    output: list[dict[str, Any]] = []
    if parts:
        text = "".join(parts)
        ev({"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}})
        ev({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}})
        for p in parts:
            ev({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                "content_index": 0, "delta": p, "logprobs": []})
        ev({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 0, "content_index": 0,
            "text": text, "logprobs": []})
        item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        ev({"type": "response.output_item.done", "output_index": 0, "item": item})
        output.append(item)
    if tool is not None:
        call_id, name, args, size = tool
        idx = len(output)
        raw = json.dumps(args)
        ev({"type": "response.output_item.added", "output_index": idx, "item": {
            "type": "function_call", "id": "fc_1", "call_id": call_id, "name": name, "arguments": "",
            "status": "in_progress"}})
        for frag in _split(raw, size):
            ev({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": idx,
                "delta": frag})
        ev({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": idx,
            "arguments": raw})
        item = {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name, "arguments": raw,
                "status": "completed"}
        ev({"type": "response.output_item.done", "output_index": idx, "item": item})
        output.append(item)
    ev({"type": "response.completed", "response": {
        **response, "status": "completed", "output": output,
        "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": len(parts) + 1, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 13 + len(parts)}}})
    return "".join(out).encode()


def _google(parts: list[str], tool: ToolSpec) -> bytes:
    out: list[str] = []

    def chunk(part_list: list[dict[str, Any]], finish: str | None = None, output_tokens: int = 0) -> None:
        candidate: dict[str, Any] = {"content": {"parts": part_list, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        usage: dict[str, Any] = {"promptTokenCount": 12, "totalTokenCount": 12 + output_tokens}
        if output_tokens:
            usage["candidatesTokenCount"] = output_tokens
        out.append(_data({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "m"}, eol="\r\n"))

    for p in parts:
        chunk([{"text": p}])
    if tool is not None:
        _call_id, name, args, _size = tool
        chunk([{"functionCall": {"name": name, "args": args}}], "STOP", len(parts) + 1)
    else:
        chunk([{"text": ""}], "STOP", len(parts) + 1)
    return "".join(out).encode()


_BUILDERS = {
    "openai-completions": _openai_completions,
    "openai-responses": _openai_responses,
    "anthropic-messages": _anthropic,
    "google-generative-ai": _google,
}


def models_json_provider(api: str, base_url: str, model_id: str = "replay-model", **model: Any) -> dict[str, Any]:
    """A models.json provider entry pointing ``api`` at a local replay server."""
    suffix = {"openai-completions": "/v1", "openai-responses": "/v1", "anthropic-messages": "",
              "google-generative-ai": "/v1beta"}[api]
    return {"baseUrl": base_url + suffix, "api": api, "apiKey": "test-key",
            "models": [{"id": model_id, "name": f"Replay {api}", "contextWindow": 200000,
                        "maxTokens": 8192, **model}]}

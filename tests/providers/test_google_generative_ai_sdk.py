"""The official ``google-genai`` SDK as a test-only oracle for the google-generative-ai adapter.

Request bodies. The SDK's pydantic models (``Content``, ``Tool``, ``ToolConfig``,
``GenerationConfig``) forbid unknown keys, but they accept *both* spellings of every field
(camelCase aliases with ``populate_by_name``), and ``by_name=False`` at validation time does not
override that; so validating alone would let a snake_case key (which the REST API's proto JSON
mapping would still read, but which pi and the docs never send) slip through unnoticed. The sound
check used here is a round trip: parse the body's own JSON bytes with the model (JSON mode, so
``bytes`` fields such as ``thoughtSignature`` and ``inlineData.data`` must be valid base64), then
dump it back with the camelCase aliases and ``exclude_unset``, and require the result to equal
the body exactly. Unknown keys fail validation; a snake_case key, a coerced value or a dropped
field fails the equality.

Responses. For the same SSE bytes, the SDK's own stream parsing (its SSE line splitter and
``HttpResponse.segments``, then ``GenerateContentResponse`` per chunk, accumulated the way its
``.text`` / ``.function_calls`` / ``usage_metadata`` are meant to be read) and baton must agree on
text, thinking, function calls with their arguments, thought signatures and usage.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types as gt
from google.genai._api_client import HttpResponse
from google.genai.models import _GenerateContentResponse_from_mldev

from baton.providers.google_generative_ai import ADAPTER, SKIP_THOUGHT_SIGNATURE, build_body
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
from tests.replay_server import Reply, sse_events

API = "google-generative-ai"
TARGETS = [
    model(API, "gemini-2.5-pro", max_tokens=65536),
    model(API, "gemini-3-pro-preview", max_tokens=65536),
    model(API, "gemini-2.0-flash", reasoning=False, max_tokens=8192),
]
OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"thinking": "minimal", "tool_choice": "auto"},
    {"thinking": "high", "tool_choice": "required", "temperature": 0.7},
    {"thinking": "xhigh", "tool_choice": "read", "max_tokens": 1000},
    {"thinking": "off", "tool_choice": "none"},
]
BODY_FIELDS: dict[str, Any] = {
    "contents": list[gt.Content],
    "systemInstruction": gt.Content,
    "tools": list[gt.Tool],
    "toolConfig": gt.ToolConfig,
    "generationConfig": gt.GenerationConfig,
}
"""The ``GenerateContentRequest`` fields baton sends, with the SDK type of each."""


def assert_valid_request(body: dict[str, Any]) -> None:
    """Every field round-trips exactly through its SDK model (see the module docstring)."""
    assert set(body) <= set(BODY_FIELDS), f"unknown request fields: {set(body) - set(BODY_FIELDS)}"
    assert "contents" in body
    for key, value in body.items():
        tp = BODY_FIELDS[key]
        items = value if isinstance(value, list) else [value]
        item_type = tp.__args__[0] if isinstance(value, list) else tp
        for item in items:
            parsed = item_type.model_validate_json(json.dumps(item))
            dumped = _standard_base64(parsed.model_dump(mode="json", by_alias=True, exclude_unset=True))
            assert dumped == item, f"{key} does not round-trip through {item_type.__name__}"


def _standard_base64(value: Any) -> Any:
    """The SDK dumps ``bytes`` as URL-safe base64; the API (and baton) use the standard alphabet."""
    if isinstance(value, list):
        return [_standard_base64(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "thoughtSignature" and isinstance(item, str) and item != SKIP_THOUGHT_SIGNATURE:
            # (Google documents its skip sentinel in the URL-safe alphabet: it is sent as is.)
            item = item.replace("-", "+").replace("_", "/")
        elif key == "inlineData" and isinstance(item, dict) and isinstance(item.get("data"), str):
            item = {**item, "data": item["data"].replace("-", "+").replace("_", "/")}
        elif key not in ("args", "response", "parametersJsonSchema"):  # free-form JSON stays as is
            item = _standard_base64(item)
        out[key] = item
    return out


def test_the_oracle_rejects_what_it_should() -> None:
    good = {"contents": [{"role": "user", "parts": [{"text": "hi", "thoughtSignature": "c2ln"}]}],
            "generationConfig": {"maxOutputTokens": 5}}
    assert_valid_request(good)
    bad_bodies = [
        {**good, "surprise": 1},
        {"contents": [{"role": "user", "parts": [{"text": "hi", "thought_signature": "c2ln"}]}]},
        {"contents": [{"role": "user", "parts": [{"text": "hi", "thoughtSignature": "not base64!"}]}]},
        {"contents": [{"role": "user", "parts": [{"text": "hi", "extra": True}]}]},
        {**good, "generationConfig": {"maxOutputTokens": "5"}},
        {**good, "generationConfig": {"thinkingConfig": {"thinking_budget": 5}}},
    ]
    for bad in bad_bodies:
        assert isinstance(bad, dict)
        with pytest.raises((AssertionError, ValueError)):
            assert_valid_request(bad)


@pytest.mark.parametrize("target", TARGETS, ids=lambda m: m.id)
@pytest.mark.parametrize("source", sorted(SOURCE_APIS))
@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_request_after_handoff_fits_the_sdk_types(source: str, target: Any, options: dict[str, Any]) -> None:
    raw = handoff_transcript(source, target)
    body = build_body(target, prepared(target, raw), StreamOptions(**options))
    assert_valid_request(body)
    assert_valid_request(build_body(target, raw, StreamOptions(**options)))  # untransformed, too
    parts = [p for c in body["contents"] for p in c["parts"]]
    assert any("functionCall" in p for p in parts) and any("functionResponse" in p for p in parts)
    assert any("inlineData" in p for p in parts)
    thought = [p for p in parts if p.get("thought")]
    signed = [p for p in parts if "thoughtSignature" in p]
    if source == API:
        assert thought and signed  # same model: thinking and signatures go back
    else:
        # Another model's signatures never reach Gemini; Gemini 3 gets the skip sentinel on the
        # function calls it did not make (it refuses unsigned calls).
        assert not thought
        assert all(p["thoughtSignature"] == SKIP_THOUGHT_SIGNATURE and "functionCall" in p for p in signed)
        calls = [p for p in parts if "functionCall" in p]
        assert (signed == calls) if "gemini-3" in target.id else not signed


async def test_the_body_on_the_wire_fits_the_sdk_types() -> None:
    target = TARGETS[1]
    hello = sse_events([{"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                                         "finishReason": "STOP"}]}])
    run = await run_stream(target, handoff_transcript("anthropic-messages"), [Reply.sse(hello)], thinking="low")
    assert run.message.stop_reason == "stop"
    assert_valid_request(run.requests[0].json())


# ---------------------------------------------------------------------------------------------
# The SDK's parsing and baton agree on the same bytes


def sdk_chunks(body: bytes) -> list[gt.GenerateContentResponse]:
    """The SDK's own reading of a stream body: its SSE line handling, then the response model."""
    response = HttpResponse(headers={}, response_stream=httpx.Response(200, content=body))
    return [
        # what ``Models.generate_content_stream`` does with each segment of the Gemini API
        gt.GenerateContentResponse._from_response(response=_GenerateContentResponse_from_mldev(segment), kwargs={})
        for segment in response.segments()
    ]


def agree(body: bytes) -> None:
    chunks = sdk_chunks(body)
    ours = decode(ADAPTER, TARGETS[0], body).message
    text, thinking, calls, signatures = "", "", [], []
    for chunk in chunks:
        content = chunk.candidates[0].content if chunk.candidates else None
        for part in (content.parts or []) if content else []:
            if part.thought_signature:
                signatures.append(base64.b64encode(part.thought_signature).decode())
            if part.text is not None and part.thought:
                thinking += part.text
        text += chunk.text or ""
        calls += [(c.name, c.args or {}, c.id) for c in chunk.function_calls or [] if c.name]
    assert ours.text == text
    assert "".join(b.thinking for b in ours.content if isinstance(b, ThinkingContent)) == thinking
    got_calls = [(c.name, c.arguments, c.id) for c in ours.tool_calls]
    assert [(n, a) for n, a, _ in got_calls] == [(n, a) for n, a, _ in calls]
    for (_, _, our_id), (_, _, sdk_id) in zip(got_calls, calls, strict=False):
        if sdk_id:
            assert our_id == sdk_id
    ours_signed = [
        s for b in ours.content
        for s in [b.text_signature if isinstance(b, TextContent) else
                  b.thinking_signature if isinstance(b, ThinkingContent) else
                  b.thought_signature if isinstance(b, ToolCall) else None] if s
    ]
    # every signature baton keeps is one the SDK saw, in order (signatures on skipped part types,
    # e.g. executableCode, are the only ones baton does not keep)
    remaining = iter(signatures)
    assert all(any(s == seen for seen in remaining) for s in ours_signed)
    usage = chunks[-1].usage_metadata
    assert usage is not None
    cached = usage.cached_content_token_count or 0
    assert ours.usage.cache_read == cached
    assert ours.usage.input == (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0) - cached
    assert ours.usage.output == (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    assert ours.usage.total_tokens == usage.total_token_count


def _streamed(body: bytes) -> bool:
    return b"partialArgs" in body


def test_sdk_and_baton_agree_on_every_recorded_stream(provider_streams: Path) -> None:
    paths = sorted(p for p in (provider_streams / "gemini").iterdir() if not p.name.endswith(".json"))
    assert len(paths) == 8
    for path in paths:
        body = fixture_body(path)
        if _streamed(body):
            continue  # Vertex partialArgs: the SDK has no assembler for them (checked in the adapter tests)
        agree(body)
        agree(body.replace(b"\r\n", b"\n"))


def test_sdk_and_baton_agree_on_cached_usage_and_mixed_parts() -> None:
    body = sse_events([
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "plan", "thought": True}]}}],
         "usageMetadata": {"promptTokenCount": 500, "totalTokenCount": 500}},
        {"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Calling.", "thoughtSignature": "c2lnMQ=="},
            {"functionCall": {"name": "read", "args": {"path": "é.py", "n": [1, {"x": None}]}}},
            {"functionCall": {"name": "ls", "args": {}, "id": "fc_2"}}]},
            "finishReason": "STOP"}],
         "usageMetadata": {"promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 40,
                           "thoughtsTokenCount": 10, "totalTokenCount": 1050}},
    ])
    agree(body)
    ours = decode(ADAPTER, TARGETS[0], body).message
    assert ours.stop_reason == "toolUse" and ours.tool_calls[1].id == "fc_2"

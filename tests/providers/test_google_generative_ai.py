"""The google-generative-ai adapter: recorded streams (decoder and end to end over a socket),
request building, adversarial delivery and faults."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from baton.providers.adapter import ProviderError
from baton.providers.events import TextDeltaEvent, ToolCallDeltaEvent
from baton.providers.google_generative_ai import (
    ADAPTER,
    build_body,
    is_valid_signature,
    stream_url,
    thinking_config,
    tool_config,
)
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
from tests.replay_server import ReplayServer, Reply, sse_events

API = "google-generative-ai"
GEMINI = model(API, "gemini-2.5-pro", max_tokens=65536)

# Expected message per recorded stream, block by block:
#   ("text", first 24 chars, length, signature start | None, signature length)
#   ("thinking", first 24 chars, length) | ("toolCall", id or None (generated), name, arguments,
#   signature start | None, signature length)
EXPECTED: dict[str, dict[str, Any]] = {
    "gemini-2.0-flash_text": {
        "blocks": [("text", "Clementine was no ordina", 2268, None, 0)],
        "usage": (9, 527, 0, 0, 536), "stop": "stop",
    },
    "gemini-2.5-pro_thought-parts_signature-on-first-text": {
        "blocks": [("thinking", "**Clarifying User Goals*", 1575),
                   ("text", "This is a great question", 1938, "CiIB0e2Kb6Syj1a961EfbWv4", 6152)],
        "usage": (34, 1256, 0, 0, 1290), "stop": "stop",
    },
    "gemini-3.5-flash_thought-parts_signature-on-final-empty-text": {
        "blocks": [("thinking", "**Defining the Narrative", 630),
                   ("text", "Here is a cozy, calming ", 2680, "EqIZCp8ZAQw51sen4ktPTwPD", 4316)],
        "usage": (11, 1416, 0, 0, 1427), "stop": "stop",
    },
    "gemini-3-flash_code-execution_parts": {
        # executableCode / codeExecutionResult parts are skipped; tool-use prompt tokens count as input
        "blocks": [("text", "The result of $65465 - 6", 82, "EoECCv4BAQw51segR8LGndTf", 348)],
        "usage": (147 + 360, 108 + 168, 0, 0, 783), "stop": "stop",
    },
    "gemini-3-pro_function-call_thought-signature": {
        "blocks": [("toolCall", None, "get_country", {}, "EpwICpkIAXLI2nxlU6gsWZaZ", 1408)],
        "usage": (29, 212, 0, 0, 241), "stop": "toolUse",
    },
    "gemini-3.5-flash_parallel-function-calls_ids_thought-signature": {
        "blocks": [("toolCall", "dv8szvqe", "get_weather", {"location": "Boston"}, "EvsDCvgDAQw51sfOm202VhDM", 680),
                   ("toolCall", "j80tal12", "get_weather", {"location": "New Delhi"}, None, 0)],
        "usage": (71, 126, 0, 0, 197), "stop": "toolUse",
    },
    "gemini-2.0-flash_parallel-function-calls_single-chunk": {
        "blocks": [("toolCall", None, "get_weather", {"location": "Boston"}, None, 0),
                   ("toolCall", None, "get_weather", {"location": "New Delhi"}, None, 0)],
        "usage": (64, 11, 0, 0, 75), "stop": "toolUse",
    },
    "vertex_gemini-3.1-pro_streamed-function-call-args_partialArgs_two-calls": {
        "blocks": [("toolCall", None, "getWeather", {"location": "Boston"}, "CiMBjz1rX25KieIB4d4AwFn8", 1032),
                   ("toolCall", None, "getWeather", {"location": "San Francisco"}, None, 0)],
        "usage": (26, 155, 0, 0, 181), "stop": "toolUse",
    },
}


def _fixture(root: Path, name: str) -> Path:
    path = root / "gemini" / f"{name}.sse"
    return path if path.exists() else root / "gemini" / f"{name}.chunks.txt"


def check_message(message: AssistantMessage, expected: dict[str, Any]) -> None:
    """The message matches the expectation field by field."""
    assert message.api == API and message.role == "assistant"
    assert message.stop_reason == expected["stop"]
    assert message.error_message is None
    assert len(message.content) == len(expected["blocks"])
    ids = set()
    for block, spec in zip(message.content, expected["blocks"], strict=True):
        kind = spec[0]
        assert block.type == kind
        if kind == "text":
            assert isinstance(block, TextContent)
            assert block.text.startswith(spec[1]) and len(block.text) == spec[2]
            _check_signature(block.text_signature, spec[3], spec[4])
        elif kind == "thinking":
            assert isinstance(block, ThinkingContent)
            assert block.thinking.startswith(spec[1]) and len(block.thinking) == spec[2]
            assert block.thinking_signature is None and block.redacted is None
        else:
            assert isinstance(block, ToolCall)
            if spec[1] is None:
                assert re.fullmatch(rf"{spec[2]}_\d+_[0-9a-f]{{8}}", block.id), block.id
            else:
                assert block.id == spec[1]
            ids.add(block.id)
            assert (block.name, block.arguments) == spec[2:4]
            _check_signature(block.thought_signature, spec[4], spec[5])
    assert len(ids) == len(message.tool_calls)  # ids are unique
    assert usage_tuple(message.usage) == expected["usage"]


def _check_signature(value: str | None, start: str | None, length: int) -> None:
    if start is None:
        assert value is None
    else:
        assert value is not None and value.startswith(start) and len(value) == length
        assert is_valid_signature(value)


# ---------------------------------------------------------------------------------------------
# Recorded streams


def test_every_fixture_has_an_expectation(provider_streams: Path) -> None:
    names = {p.name.removesuffix(".sse").removesuffix(".chunks.txt") for p in (provider_streams / "gemini").iterdir()
             if not p.name.endswith(".json")}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_decoder_on_recorded_stream(provider_streams: Path, name: str) -> None:
    out = decode(ADAPTER, GEMINI, fixture_body(_fixture(provider_streams, name)))
    assert out.error is None
    check_message(out.message, EXPECTED[name])
    texts = [e.delta for e in out.events if isinstance(e, TextDeltaEvent)]
    assert "".join(texts) == out.message.text


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_decoder_is_indifferent_to_chunking_and_line_endings(provider_streams: Path, name: str) -> None:
    body = fixture_body(_fixture(provider_streams, name))
    lf = body.replace(b"\r\n", b"\n")
    crlf = lf.replace(b"\n", b"\r\n")

    def normalised(data: bytes, size: int | None) -> dict[str, Any]:
        got = decode(ADAPTER, GEMINI, data, chunk_size=size).message.to_json_dict()
        got.pop("timestamp")
        for block in got["content"]:  # generated ids differ per run by design
            if block["type"] == "toolCall" and re.fullmatch(r".+_\d+_[0-9a-f]{8}", block["id"]):
                block["id"] = "generated"
        return got

    baseline = normalised(body, None)
    for variant, size in ((body, 1), (lf, 1), (crlf, 3), (lf, 11)):
        assert normalised(variant, size) == baseline


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_recorded_stream_end_to_end(provider_streams: Path, name: str) -> None:
    body = fixture_body(_fixture(provider_streams, name))
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="hi")]), [Reply.sse(body, chunk_size=101)])
    assert_well_formed(run.events)
    check_message(run.message, EXPECTED[name])
    assert run.message.usage.cost.total == pytest.approx(expected_cost(run.message.usage))
    request = run.requests[0]
    assert request.method == "POST"
    assert request.path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.json()["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


async def test_byte_by_byte_delivery_over_the_socket(provider_streams: Path) -> None:
    name = "gemini-3.5-flash_parallel-function-calls_ids_thought-signature"
    body = fixture_body(_fixture(provider_streams, name))
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="hi")]), [Reply.sse(body, chunk_size=1)])
    assert_well_formed(run.events)
    check_message(run.message, EXPECTED[name])


# ---------------------------------------------------------------------------------------------
# Synthetic streams


def _chunk(*parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None,
           **candidate: Any) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, **candidate}
    if finish:
        cand["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [cand]}
    if usage:
        out["usageMetadata"] = usage
    return out


@pytest.mark.parametrize(("reason", "words"), [
    ("SAFETY", "safety filters"), ("RECITATION", "reciting"), ("PROHIBITED_CONTENT", "prohibited"),
    ("BLOCKLIST", "blocklisted"), ("SPII", "personal information"), ("OTHER", "unspecified"),
    ("MALFORMED_FUNCTION_CALL", "malformed function call"), ("SOMETHING_NEW", "unexpectedly"),
])
def test_bad_finish_reasons_are_errors_with_a_clear_message(reason: str, words: str) -> None:
    body = sse_events([_chunk({"text": "Once upon"}),
                       _chunk({"text": ""}, finish=reason, finishMessage="details here")])
    out = decode(ADAPTER, GEMINI, body)
    assert out.error is not None and not out.error.retryable
    assert words in out.error.message and reason in out.error.message and "details here" in out.error.message
    assert out.message.text == "Once upon"


def test_max_tokens_is_length() -> None:
    out = decode(ADAPTER, GEMINI, sse_events([_chunk({"text": "abc"}, finish="MAX_TOKENS")]))
    assert out.error is None and out.message.stop_reason == "length"


def test_blocked_prompt_is_an_error() -> None:
    body = sse_events([{"promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "no"},
                        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}}])
    out = decode(ADAPTER, GEMINI, body)
    assert out.error is not None and "blocked the prompt" in out.error.message and "SAFETY" in out.error.message
    assert out.message.usage.input == 8


def test_in_stream_error_object() -> None:
    body = sse_events([_chunk({"text": "a"}), {"error": {"code": 503, "message": "The model is overloaded.",
                                                         "status": "UNAVAILABLE"}}])
    out = decode(ADAPTER, GEMINI, body)
    assert out.error is not None and out.error.retryable and out.error.status == 503
    assert out.error.message == "The model is overloaded. (UNAVAILABLE)"


def test_cached_tokens_are_excluded_from_input_and_the_last_usage_wins() -> None:
    body = sse_events([
        _chunk({"text": "a"}, usage={"promptTokenCount": 1000, "totalTokenCount": 1000}),
        _chunk({"text": "b"}, finish="STOP", usage={"promptTokenCount": 1200, "cachedContentTokenCount": 900,
               "candidatesTokenCount": 30, "thoughtsTokenCount": 70, "totalTokenCount": 1300}),
    ])
    out = decode(ADAPTER, GEMINI, body)
    assert usage_tuple(out.message.usage) == (300, 100, 900, 0, 1300)


def test_cut_stream_without_finish_reason_is_a_retryable_error() -> None:
    out = decode(ADAPTER, GEMINI, sse_events([_chunk({"text": "partial"})]))
    assert out.error is not None and out.error.retryable and "finishReason" in out.error.message
    assert out.message.text == "partial"


def test_unexpected_chunk_shapes_are_clear_errors() -> None:
    for payload in ({"candidates": ["text"]}, {"candidates": [{"content": {"parts": [7]}}]}, "7"):
        out = decode(ADAPTER, GEMINI, sse_events([payload]))
        assert out.error is not None and out.error.message.startswith("Unexpected Gemini stream")


def test_malformed_json_is_an_error() -> None:
    out = decode(ADAPTER, GEMINI, sse_events([_chunk({"text": "a"})]) + b"data: {broken\r\n\r\n")
    assert out.error is not None and "Malformed JSON" in out.error.message


def test_duplicate_or_missing_ids_get_unique_generated_ones() -> None:
    body = sse_events([_chunk(
        {"functionCall": {"name": "ls", "args": {}, "id": "same"}},
        {"functionCall": {"name": "ls", "args": {"p": 1}, "id": "same"}},
        {"functionCall": {"name": "ls", "args": {"p": 2}}},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"inlineData": {"mimeType": "image/png", "data": PNG_1PX}},
        finish="STOP")])
    out = decode(ADAPTER, GEMINI, body)
    ids = [c.id for c in out.message.tool_calls]
    assert ids[0] == "same" and len(set(ids)) == 3
    assert [c.arguments for c in out.message.tool_calls] == [{}, {"p": 1}, {"p": 2}]
    assert out.message.stop_reason == "toolUse"


def test_thought_and_text_interleave_into_separate_blocks_keeping_signatures() -> None:
    body = sse_events([
        _chunk({"text": "think 1", "thought": True}),
        _chunk({"text": " more", "thought": True, "thoughtSignature": "c2lnMQ=="}),
        _chunk({"text": "answer"}, {"text": "", "thoughtSignature": "c2lnMg=="}),
        _chunk({"functionCall": {"name": "ls", "args": {}}}, {"text": "", "thoughtSignature": "c2lnMw=="},
               finish="STOP"),
    ])
    blocks = [b.to_json_dict() for b in decode(ADAPTER, GEMINI, body).message.content]
    assert blocks[0] == {"type": "thinking", "thinking": "think 1 more", "thinkingSignature": "c2lnMQ=="}
    assert blocks[1] == {"type": "text", "text": "answer", "textSignature": "c2lnMg=="}
    assert blocks[2]["type"] == "toolCall"
    assert blocks[3] == {"type": "text", "text": "", "textSignature": "c2lnMw=="}  # kept for replay


def test_streamed_partial_args_grow_the_open_call() -> None:
    body = sse_events([
        _chunk({"functionCall": {"name": "edit", "willContinue": True, "id": "c1"}}),
        _chunk({"functionCall": {"partialArgs": [
            {"jsonPath": "$.path", "stringValue": "a.py"},
            {"jsonPath": "$.edits[0].old", "stringValue": "x", "willContinue": True}],
                                 "willContinue": True}}),
        _chunk({"functionCall": {"partialArgs": [{"jsonPath": "$.edits[0].old", "stringValue": "yz"},
                                                 {"jsonPath": "$.count", "numberValue": 2},
                                                 {"jsonPath": "$.dry", "boolValue": False}],
                                 "willContinue": True}}),
        _chunk({"functionCall": {}}, finish="STOP"),
    ])
    out = decode(ADAPTER, GEMINI, body)
    assert out.error is None
    call = out.message.tool_calls[0]
    assert (call.id, call.name) == ("c1", "edit")
    assert call.arguments == {"path": "a.py", "edits": [{"old": "xyz"}], "count": 2, "dry": False}
    assert sum(isinstance(e, ToolCallDeltaEvent) for e in out.events) == 2


# ---------------------------------------------------------------------------------------------
# Requests


def _body(context: Context, target: Model = GEMINI, **options: Any) -> dict[str, Any]:
    return build_body(target, context, StreamOptions(**options))


def test_url_headers_and_basics() -> None:
    custom = GEMINI.model_copy(update={"base_url": "https://proxy.example/v1beta/", "headers": {"x-org": "1"}})
    request = ADAPTER.build_request(custom, Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")]),
                                    StreamOptions(headers={"x-trace": "t"}, temperature=0.3), "AIza-secret")
    assert request.url == "https://proxy.example/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert request.headers["x-goog-api-key"] == "AIza-secret"
    assert request.headers["x-org"] == "1" and request.headers["x-trace"] == "t"
    assert stream_url(Model(id="models/gemini-2.0-flash", api=API, provider="google")) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse")
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 65536, "temperature": 0.3, "thinkingConfig": {"thinkingBudget": 0}},
    }


def test_tool_calls_results_and_images() -> None:
    target = model(API, "gemini-2.5-flash")
    context = Context(tools=TOOLS, messages=[
        UserMessage(content=[TextContent(text="look"), ImageContent(data=PNG_1PX, mime_type="image/png")]),
        AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={"path": "a.png"}),
                                  ToolCall(id="c2", name="ls", arguments={})],
                         api=API, provider="test", model="gemini-2.5-flash", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="read",
                          content=[ImageContent(data=PNG_1PX, mime_type="image/png")]),
        ToolResultMessage(tool_call_id="c2", tool_name="ls", content=[TextContent(text="nope")], is_error=True),
    ])
    body = _body(context, target, tool_choice="read")
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": PNG_1PX}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": "a.png"}}},
                                    {"functionCall": {"name": "ls", "args": {}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}},
            {"functionResponse": {"name": "ls", "response": {"error": "nope"}}}]},
        # Gemini 2.x cannot take images inside a functionResponse: they follow as a user turn
        {"role": "user", "parts": [{"text": "Tool result image:"},
                                   {"inlineData": {"mimeType": "image/png", "data": PNG_1PX}}]},
    ]
    assert body["tools"] == [{"functionDeclarations": [
        {"name": "read", "description": "Read a file", "parametersJsonSchema": {
            "type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["path"], "additionalProperties": False}},
        {"name": "ls", "description": "List a directory", "parametersJsonSchema": {"type": "object", "properties": {}}},
    ]}]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}}


def test_gemini_3_nests_result_images_and_sends_ids() -> None:
    target = model(API, "gemini-3-pro-preview")
    context = Context(messages=[
        AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={}, thought_signature="c2ln")],
                         api=API, provider="test", model="gemini-3-pro-preview", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="read",
                          content=[TextContent(text="an image"), ImageContent(data=PNG_1PX, mime_type="image/png")]),
    ])
    contents = _body(context, target)["contents"]
    assert contents == [
        {"role": "model", "parts": [
            {"functionCall": {"name": "read", "args": {}, "id": "c1"}, "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {
            "name": "read", "id": "c1", "response": {"output": "an image"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG_1PX}}]}}]},
    ]


def test_signatures_are_replayed_only_to_the_same_model_and_only_when_base64() -> None:
    def turn(model_id: str, signature: str) -> AssistantMessage:
        return AssistantMessage(content=[
            ThinkingContent(thinking="hmm", thinking_signature=signature),
            TextContent(text="", text_signature=signature),
            TextContent(text="hi", text_signature=signature),
            ToolCall(id="c", name="ls", arguments={}, thought_signature=signature),
        ], api=API, provider="test", model=model_id)

    same = _body(Context(messages=[turn("gemini-2.5-pro", "c2lnbmF0dXJl")]))["contents"][0]["parts"]
    assert same == [
        {"text": "hmm", "thought": True, "thoughtSignature": "c2lnbmF0dXJl"},
        {"text": "", "thoughtSignature": "c2lnbmF0dXJl"},
        {"text": "hi", "thoughtSignature": "c2lnbmF0dXJl"},
        {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "c2lnbmF0dXJl"},
    ]
    invalid = _body(Context(messages=[turn("gemini-2.5-pro", "not base64!")]))["contents"][0]["parts"]
    assert invalid == [{"text": "hmm", "thought": True}, {"text": "hi"}, {"functionCall": {"name": "ls", "args": {}}}]
    other = _body(Context(messages=[turn("gemini-2.0-flash", "c2lnbmF0dXJl")]))["contents"][0]["parts"]
    assert other == [{"text": "hmm"}, {"text": "hi"}, {"functionCall": {"name": "ls", "args": {}}}]
    assert not is_valid_signature("abc") and not is_valid_signature("") and is_valid_signature("YWJj")


@pytest.mark.parametrize(("model_id", "level", "expected"), [
    ("gemini-2.5-pro", "minimal", {"includeThoughts": True, "thinkingBudget": 128}),
    ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 32768}),
    ("gemini-2.5-flash", "high", {"includeThoughts": True, "thinkingBudget": 24576}),
    ("gemini-2.5-flash-lite", "minimal", {"includeThoughts": True, "thinkingBudget": 512}),
    ("gemini-2.5-flash", "off", {"thinkingBudget": 0}),
    ("gemini-exp-1206", "medium", {"includeThoughts": True, "thinkingBudget": -1}),
    ("gemini-3-pro-preview", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}),
    ("gemini-3-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
    ("gemini-3-pro-preview", "off", {"thinkingLevel": "LOW"}),
    ("gemini-3.5-flash", "medium", {"includeThoughts": True, "thinkingLevel": "MEDIUM"}),
    ("gemini-3-flash-preview", "xhigh", {"includeThoughts": True, "thinkingLevel": "HIGH"}),
    ("gemini-3-flash-preview", "off", {"thinkingLevel": "MINIMAL"}),
])
def test_thinking_config_by_family(model_id: str, level: str, expected: dict[str, Any]) -> None:
    assert thinking_config(model(API, model_id), level) == expected  # type: ignore[arg-type]


def test_non_reasoning_models_get_no_thinking_config_and_tool_choice_maps() -> None:
    assert thinking_config(model(API, "gemini-2.0-flash", reasoning=False), "high") is None
    assert tool_config("auto", TOOLS) == {"functionCallingConfig": {"mode": "AUTO"}}
    assert tool_config("required", TOOLS) == {"functionCallingConfig": {"mode": "ANY"}}
    assert tool_config("none", TOOLS) == {"functionCallingConfig": {"mode": "NONE"}}
    assert tool_config({"type": "function", "function": {"name": "ls"}}, TOOLS) == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["ls"]}}
    with pytest.raises(ProviderError, match="Unsupported tool_choice"):
        tool_config("rm", TOOLS)


# ---------------------------------------------------------------------------------------------
# Faults over the socket

_HELLO = sse_events([_chunk({"text": "Hel"}), _chunk({"text": "lo"}, finish="STOP",
                     usage={"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5})])
_UNAVAILABLE = {"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                          "status": "UNAVAILABLE"}}


async def test_429_with_retry_after_then_success() -> None:
    replies = [Reply.json_error(429, {"error": {"code": 429, "message": "Resource has been exhausted",
               "status": "RESOURCE_EXHAUSTED"}}, headers={"retry-after": "0"}), Reply.sse(_HELLO)]
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]), replies)
    assert run.message.stop_reason == "stop" and run.message.text == "Hello"
    assert usage_tuple(run.message.usage) == (3, 2, 0, 0, 5)
    assert len(run.requests) == 2


async def test_503_three_times_ends_with_the_providers_message() -> None:
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]),
                           [Reply.json_error(503, _UNAVAILABLE) for _ in range(3)])
    assert run.message.stop_reason == "error"
    assert run.message.error_message is not None and "overloaded" in run.message.error_message
    assert len(run.requests) == 3
    assert_well_formed(run.events)


async def test_in_stream_error_after_content_is_not_retried() -> None:
    body = sse_events([_chunk({"text": "Partial"}), _UNAVAILABLE])
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]), [Reply.sse(body), Reply.sse(_HELLO)])
    assert run.message.stop_reason == "error" and run.message.text == "Partial"
    assert len(run.requests) == 1
    assert_well_formed(run.events)


async def test_disconnect_mid_stream_keeps_partial_content() -> None:
    first, second = _HELLO.split(b"\n\n", 1)
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]),
                           [Reply(chunks=[first + b"\n\n", second], disconnect_after=1)])
    assert run.message.stop_reason == "error" and run.message.text == "Hel"
    assert_well_formed(run.events)


async def test_stalled_stream_ends_in_error_keeping_partial_text() -> None:
    first, second = _HELLO.split(b"\n\n", 1)
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]),
                           [Reply(chunks=[first + b"\n\n", second], stall_after=1)], idle_timeout=0.3)
    assert run.message.stop_reason == "error" and run.message.text == "Hel"
    assert run.message.error_message is not None and "idle" in run.message.error_message.lower()
    assert_well_formed(run.events)


async def test_malformed_json_event_ends_in_error() -> None:
    body = sse_events([_chunk({"text": "ok"})]) + b"data: {nope\n\n"
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]), [Reply.sse(body)])
    assert run.message.stop_reason == "error" and run.message.text == "ok"
    assert run.message.error_message is not None and "Malformed JSON" in run.message.error_message


async def test_safety_stop_ends_in_error_keeping_the_text() -> None:
    body = sse_events([_chunk({"text": "Sure"}), _chunk(finish="SAFETY")])
    run = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]), [Reply.sse(body)])
    assert run.message.stop_reason == "error" and run.message.text == "Sure"
    assert run.message.error_message is not None and "safety filters" in run.message.error_message
    assert len(run.requests) == 1


async def test_abort_mid_stream_keeps_partial_text() -> None:
    from baton.providers.dispatch import stream

    signal = asyncio.Event()
    first, second = _HELLO.split(b"\n\n", 1)
    with ReplayServer([Reply(chunks=[first + b"\n\n", second], delay=5.0)]) as server:
        live = GEMINI.model_copy(update={"base_url": server.url + "/v1beta"})
        events = []
        async with asyncio.timeout(10):
            async for event in stream(live, Context(messages=[UserMessage(content="q")]), api_key="k", signal=signal):
                events.append(event)
                if isinstance(event, TextDeltaEvent):
                    signal.set()
    assert_well_formed(events)
    final = events[-1]
    assert final.type == "error" and final.reason == "aborted"
    assert final.error.text == "Hel"


def test_nested_schema_meta_keys_are_stripped_for_gemini_only() -> None:
    from baton.providers.google_generative_ai import convert_tools
    from baton.providers.messages import Tool

    parameters = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "$schema": {"type": "string", "description": "a property really named $schema"},
            "filter": {"$schema": "x", "$comment": "c", "type": "object", "additionalProperties": False,
                       "properties": {"q": {"type": "string", "$comment": "inner"}}},
            "items": {"type": "array", "items": [{"$schema": "y", "type": "string"}]},
        },
    }
    tool = Tool(name="mcp__s__t", description="d", parameters=parameters)
    sent = convert_tools([tool])[0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert "$schema" not in sent
    assert sent["properties"]["$schema"] == {"type": "string", "description": "a property really named $schema"}
    assert sent["properties"]["filter"] == {"type": "object", "additionalProperties": False,
                                            "properties": {"q": {"type": "string"}}}
    assert sent["properties"]["items"]["items"] == [{"type": "string"}]
    assert tool.parameters["properties"]["filter"]["$schema"] == "x"  # the stored schema is untouched

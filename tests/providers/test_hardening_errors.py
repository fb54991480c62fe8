"""Provider errors: keys never echoed, Gemini's out-of-band errors kept, retry rules (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.providers.messages import Context, UserMessage
from baton.providers.redact import REDACTED, redact_secrets
from baton.sessions.retry import is_retryable_error, retry_stream_options
from baton.sessions.settings import validate_settings
from tests.providers.claude_gemini_support import run_stream
from tests.providers.test_google_generative_ai import _HELLO, GEMINI, _chunk
from tests.providers.test_transport import FAST, collect, run
from tests.replay_server import ReplayServer, Reply, sse_events

SECRET = "sk-proj-Zq81LmT0pSecretKeyValue42"


async def test_a_401_echoing_the_request_key_never_shows_it() -> None:
    body = {"error": {"message": f"Incorrect API key provided: {SECRET}. Find your key at ..."}}
    with ReplayServer([Reply.json_error(401, body)]) as server:
        _, msg = await collect(run(server, api_key=SECRET, **FAST))
    assert msg.stop_reason == "error" and msg.error_message is not None
    assert SECRET not in msg.error_message and SECRET[:12] not in msg.error_message
    assert msg.error_message.startswith("401 Incorrect API key provided: ") and REDACTED in msg.error_message


async def test_a_configured_key_of_any_shape_is_redacted(
    baton_home: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not key-shaped at all: only knowing the configured keys can catch it.
    other = "plain-words-key-0xBEEF"
    monkeypatch.setenv("MISTRAL_API_KEY", other)
    flag = "custom-cli-key-1234567"
    body = {"error": {"message": f"key {flag} rejected; also saw {other}"}}
    with ReplayServer([Reply.json_error(403, body)]) as server:
        _, msg = await collect(run(server, api_key=flag, **FAST))
    assert msg.error_message == f"403 key {REDACTED} rejected; also saw {REDACTED}"


def test_redaction_keeps_ordinary_text() -> None:
    text = "set OPENAI_API_KEY (sk-…) and retry; see https://example.com/keys"
    assert redact_secrets(text) == text
    assert redact_secrets("token AIzaSyA1234567890abcdefghijklmnopqrstu ok") == f"token {REDACTED} ok"


async def test_gemini_error_written_outside_the_sse_framing_keeps_its_message() -> None:
    # Gemini aborts a stream by writing a pretty-printed JSON error into the 200 body.
    first = _HELLO.split(b"\n\n", 1)[0] + b"\n\n"
    error = json.dumps({"error": {"code": 503, "message": "The model is overloaded. Please try again later.",
                                  "status": "UNAVAILABLE"}}, indent=2).encode()
    streamed = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]),
                                [Reply(chunks=[first, error + b"\n"])])
    message = streamed.message
    assert message.stop_reason == "error" and message.text == "Hel"
    assert message.error_message == "503 The model is overloaded. Please try again later. (UNAVAILABLE)"


async def test_gemini_error_before_any_content_is_retried_as_the_server_said() -> None:
    error = json.dumps([{"error": {"code": 429, "message": "Resource has been exhausted",
                                   "status": "RESOURCE_EXHAUSTED"}}], indent=2).encode()
    streamed = await run_stream(GEMINI, Context(messages=[UserMessage(content="q")]),
                                [Reply(chunks=[error]), Reply.sse(sse_events([_chunk({"text": "ok"}),
                                                                             _chunk(finish="STOP")]))])
    assert streamed.message.stop_reason == "stop" and streamed.message.text == "ok"
    assert len(streamed.requests) == 2


async def test_stream_idle_is_retried_by_the_session() -> None:
    with ReplayServer([Reply(chunks=[b""], stall_after=0)]) as server:
        _, msg = await collect(run(server, idle_timeout=0.1, max_retries=1, **FAST))
    assert msg.error_message is not None and msg.error_message.startswith("Stream idle")
    assert is_retryable_error(msg)


async def test_retry_after_over_the_limit_is_not_retried_early_by_the_session() -> None:
    replies = [Reply.json_error(429, {"error": {"message": "Quota exceeded"}}, {"retry-after": "90"})]
    with ReplayServer(replies) as server:
        _, msg = await collect(run(server, retry_base_delay=0.01, max_retry_delay=60.0))
    assert len(server.requests) == 1
    assert msg.error_message is not None and msg.error_message.startswith("429 Quota exceeded")
    assert not is_retryable_error(msg)
    # The same 429 without a Retry-After is still a transient error worth retrying.
    plain = msg.model_copy(update={"error_message": "429 Quota exceeded"})
    assert is_retryable_error(plain)


def test_retry_settings_reach_the_stream_options() -> None:
    settings = validate_settings({"retry": {"maxDelayMs": 5000, "idleTimeoutMs": 2500}})
    options = retry_stream_options(settings.retry)
    assert (options.max_retry_delay, options.idle_timeout) == (5.0, 2.5)
    assert validate_settings({}).retry.max_delay_ms == 60_000

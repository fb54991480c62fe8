"""is_context_overflow: provider overflow wordings, silent overflow, length-stop overflow."""

from __future__ import annotations

import pytest

from baton.providers import AssistantMessage, StopReason, Usage, is_context_overflow


def failed(text: str) -> AssistantMessage:
    return AssistantMessage(
        api="x", provider="p", model="m", stop_reason="error", error_message=text, timestamp=1
    )


def finished(stop: StopReason, input_tokens: int, cache_read: int = 0, output: int = 10) -> AssistantMessage:
    return AssistantMessage(
        api="x", provider="p", model="m", stop_reason=stop,
        usage=Usage(input=input_tokens, cache_read=cache_read, output=output), timestamp=1,
    )


OVERFLOWS = {
    "anthropic": "prompt is too long: 213462 tokens > 200000 maximum",
    "anthropic-413": (
        '413 {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}'
    ),
    "bedrock": "ValidationException: Input is too long for requested model.",
    "openai": "Your input exceeds the context window of this model. Please adjust your input and try again.",
    "openai-legacy": (
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."
    ),
    "openai-code": "400 context_length_exceeded",
    "litellm": "Requested token count exceeds the model's maximum context length of 131072 tokens",
    "vllm": "Input length (265330) exceeds model's maximum context length (262144).",
    "google": "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    "xai": "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    "groq": "Please reduce the length of the messages or completion.",
    "openrouter": (
        "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens."
    ),
    "poolside": "Input length 300000 exceeds the maximum allowed input length of 256,000 tokens.",
    "together": "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
    "copilot": "prompt token count of 140000 exceeds the limit of 128000",
    "llama.cpp": "the request exceeds the available context size, try increasing it",
    "lm-studio": "The number of tokens to keep from the initial prompt is greater than the context length",
    "minimax": "invalid params, context window exceeds limit (2013)",
    "kimi": "Your request exceeded model token limit: 262144 (requested: 300000)",
    "mistral": (
        "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length"
    ),
    "zai": "model_context_window_exceeded",
    "ollama": "prompt too long; exceeded max context length by 1200 tokens",
    "ds4": "Prompt has 300,000 tokens, but the configured context size is 262,144 tokens",
    "dashscope": "Range of input length should be [1, 129024]",
    "cerebras-400": "400 status code (no body)",
    "cerebras-413": "413 (no body)",
    "generic": "too many tokens in request",
}

LOOK_ALIKES = {
    "bedrock-throttle": "ThrottlingException: Too many tokens, please wait before trying again.",
    "bedrock-throttle-prefix": "Throttling error: Too many tokens, please wait before trying again.",
    "bedrock-unavailable": "Service unavailable: too many tokens in flight",
    "openai-tpm": (
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, "
        "Used 29000, Requested 2000."
    ),
    "anthropic-rate": (
        "This request would exceed the rate limit for your organization of 40,000 input tokens per minute."
    ),
    "anthropic-overloaded": '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "generic-429": "429 Too Many Requests: token limit exceeded for this minute",
    "gemini-quota": "You exceeded your current quota: too many tokens per day",
    "cerebras-429": "429 status code (no body)",
    "server": "500 Internal Server Error",
    "auth": "401 invalid x-api-key",
}


@pytest.mark.parametrize("provider", list(OVERFLOWS))
def test_known_overflow_errors_are_recognised(provider: str) -> None:
    assert is_context_overflow(failed(OVERFLOWS[provider]))


@pytest.mark.parametrize("case", list(LOOK_ALIKES))
def test_rate_limits_and_other_failures_are_not_overflow(case: str) -> None:
    assert not is_context_overflow(failed(LOOK_ALIKES[case]))


def test_overflow_text_counts_only_on_an_error_stop() -> None:
    message = finished("stop", 10)
    message.error_message = OVERFLOWS["anthropic"]
    assert not is_context_overflow(message)
    assert not is_context_overflow(failed(""))


def test_silent_overflow_needs_the_window() -> None:
    over = finished("stop", 150_000, cache_read=60_000)
    assert is_context_overflow(over, 200_000)
    assert not is_context_overflow(over)  # window unknown
    assert not is_context_overflow(finished("stop", 150_000, cache_read=50_000), 200_000)  # exactly full


def test_length_stop_with_no_output_and_a_full_window_is_overflow() -> None:
    assert is_context_overflow(finished("length", 198_000, output=0), 200_000)  # 99 %
    assert not is_context_overflow(finished("length", 197_000, output=0), 200_000)
    assert not is_context_overflow(finished("length", 199_000, output=5), 200_000)
    assert not is_context_overflow(finished("length", 199_000, output=0))


def test_other_stops_are_never_overflow() -> None:
    assert not is_context_overflow(finished("toolUse", 500_000), 200_000)
    assert not is_context_overflow(finished("aborted", 500_000), 200_000)

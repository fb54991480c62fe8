"""Recognising a context-window overflow from a finished assistant message.

Three shapes (docs/architecture.md, "The handoff transform"; after pi's ``utils/overflow.ts``):

1. the request failed (``stopReason: error``) with a provider's known overflow wording, and the
   text is not a rate-limit / throttling / overload message that merely mentions tokens;
2. silent overflow: the request "succeeded" (``stop``) but ``input + cacheRead`` exceeds the
   context window (z.ai accepts oversized prompts);
3. length-stop overflow: ``stopReason: length`` with zero output while ``input + cacheRead``
   fills at least 99 % of the window (the server truncated the prompt to fit, as Xiaomi MiMo
   does).

Shapes 2 and 3 need ``context_window``; with ``0`` only shape 1 is checked.
"""

from __future__ import annotations

import re

from baton.providers.messages import AssistantMessage

_I = re.IGNORECASE

OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Anthropic: "prompt is too long: 213462 tokens > 200000 maximum"
    re.compile(r"prompt is too long", _I),
    # Anthropic, request bytes: '413 {"error":{"type":"request_too_large",...}}'
    re.compile(r"request_too_large", _I),
    # Amazon Bedrock: "Input is too long for requested model."
    re.compile(r"input is too long for requested model", _I),
    # OpenAI (Chat Completions and Responses): "Your input exceeds the context window of this model"
    re.compile(r"exceeds the context window", _I),
    # OpenAI-compatible proxies (LiteLLM, vLLM): "... exceeds the model's maximum context length of
    # 131072 tokens", "Input length (265330) exceeds model's maximum context length (262144)."
    re.compile(r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))", _I),
    # OpenAI (older wording): "This model's maximum context length is 128000 tokens. However, ..."
    # OpenRouter (all backends): "This endpoint's maximum context length is X tokens. However, ..."
    re.compile(r"maximum context length is \d+ tokens", _I),
    # Google Gemini: "The input token count (1196265) exceeds the maximum number of tokens allowed"
    re.compile(r"input token count.*exceeds the maximum", _I),
    # xAI Grok: "This model's maximum prompt length is 131072 but the request contains 537812 tokens"
    re.compile(r"maximum prompt length is \d+", _I),
    # Groq: "Please reduce the length of the messages or completion."
    re.compile(r"reduce the length of the messages", _I),
    # OpenRouter / Poolside: "Input length X exceeds the maximum allowed input length of Y tokens."
    re.compile(r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?", _I),
    # Together AI: "The input (X tokens) is longer than the model's context length (Y tokens)."
    re.compile(r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)", _I),
    # GitHub Copilot: "prompt token count of X exceeds the limit of Y"
    re.compile(r"exceeds the limit of \d+", _I),
    # llama.cpp server: "the request exceeds the available context size, try increasing it"
    re.compile(r"exceeds the available context size", _I),
    # LM Studio: "tokens to keep from the initial prompt is greater than the context length"
    re.compile(r"greater than the context length", _I),
    # MiniMax: "invalid params, context window exceeds limit"
    re.compile(r"context window exceeds limit", _I),
    # Kimi (Moonshot) for Coding: "Your request exceeded model token limit: X (requested: Y)"
    re.compile(r"exceeded model token limit", _I),
    # Mistral: "Prompt contains X tokens ... too large for model with Y maximum context length"
    re.compile(r"too large for model with \d+ maximum context length", _I),
    # z.ai: its non-standard finish reason surfaced as error text
    re.compile(r"model_context_window_exceeded", _I),
    # Ollama: "prompt too long; exceeded max context length by X tokens"
    re.compile(r"prompt too long; exceeded (?:max )?context length", _I),
    # DS4 server: "Prompt has X tokens, but the configured context size is Y tokens"
    re.compile(r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?", _I),
    # DashScope / Qwen: "Range of input length should be [1, X]"
    re.compile(r"range of input length should be", _I),
    # Generic fallbacks: OpenAI's code "context_length_exceeded", "too many tokens", ...
    re.compile(r"context[_ ]length[_ ]exceeded", _I),
    re.compile(r"too many tokens", _I),
    re.compile(r"token limit exceeded", _I),
    # Cerebras: "400 status code (no body)" / "413 status code (no body)"
    re.compile(r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", _I),
)
"""Error texts that mean the prompt did not fit the context window."""

NON_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Amazon Bedrock: "ThrottlingException: Too many tokens, please wait before trying again."
    re.compile(r"throttl", _I),
    re.compile(r"^service unavailable", _I),
    re.compile(r"rate[ _-]?limit", _I),
    re.compile(r"too many requests", _I),
    re.compile(r"overloaded", _I),
    # per-minute / per-day token quotas ("tokens per minute (TPM): Limit 30000")
    re.compile(r"tokens per (?:minute|min|day|hour)|\bTP[MD]\b", _I),
    re.compile(r"quota", _I),
)
"""Failures that mention tokens or limits without being an overflow: they win over the above."""


def is_overflow_error_text(text: str) -> bool:
    """True when an error text reads as a context-window overflow (and not a rate limit)."""
    if any(p.search(text) for p in NON_OVERFLOW_PATTERNS):
        return False
    return any(p.search(text) for p in OVERFLOW_PATTERNS)


def is_context_overflow(message: AssistantMessage, context_window: int = 0) -> bool:
    """True when ``message`` shows the request overflowed the model's context window.

    ``context_window`` (the model's window in tokens) enables the silent and length-stop
    shapes; with ``0`` only the error text is checked.
    """
    stop = message.stop_reason
    if stop == "error":
        return bool(message.error_message) and is_overflow_error_text(message.error_message or "")
    if context_window <= 0:
        return False
    usage = message.usage
    prompt = usage.input + usage.cache_read
    if stop == "stop":
        return prompt > context_window
    if stop == "length":
        return usage.output == 0 and prompt >= context_window * 0.99
    return False

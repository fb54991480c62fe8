"""Small helpers shared by the wire adapters (request building and stream decoding).

Only protocol-neutral pieces live here: each adapter keeps its own wire shapes. Adapters may
append helpers that more than one of them needs.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

from baton.providers.adapter import ProviderError
from baton.providers.json_types import JsonValue
from baton.providers.messages import ImageContent, TextContent, ToolResultMessage
from baton.providers.models import Model
from baton.providers.options import StreamOptions

DEFAULT_MAX_TOKENS_CAP = 32_000
"""pi's default output budget when the caller gives none: ``min(model.maxTokens, 32000)``."""

_raw_decode = json.JSONDecoder().raw_decode

_RETRYABLE_ERROR_WORDS = ("overloaded", "rate_limit", "rate limit", "server_error", "unavailable", "timeout")


def join_url(base_url: str, path: str) -> str:
    """``base_url`` and ``path`` joined with exactly one ``/`` (``path`` may carry a query)."""
    return f"{base_url.rstrip('/')}/{path.lstrip('/')}"


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Merge header layers; later layers win, names compared case-insensitively.

    The result keeps the spelling of the winning layer. ``None`` layers are skipped."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        if not layer:
            continue
        for name, value in layer.items():
            merged[name.lower()] = (name, value)
    return dict(merged.values())


def image_data_url(image: ImageContent) -> str:
    """A ``data:`` URL for a base64 image block."""
    return f"data:{image.mime_type};base64,{image.data}"


def tool_result_text(message: ToolResultMessage, separator: str = "\n") -> str:
    """The text blocks of a tool result joined with ``separator`` (images left out)."""
    return separator.join(b.text for b in message.content if isinstance(b, TextContent))


def tool_result_images(message: ToolResultMessage) -> list[ImageContent]:
    """The image blocks of a tool result, in order."""
    return [b for b in message.content if isinstance(b, ImageContent)]


def default_max_tokens(model: Model, options: StreamOptions) -> int:
    """``options.max_tokens``, else ``min(model.max_tokens, 32000)`` (pi's default)."""
    if options.max_tokens:
        return options.max_tokens
    return min(model.max_tokens, DEFAULT_MAX_TOKENS_CAP) if model.max_tokens > 0 else DEFAULT_MAX_TOKENS_CAP


def loads_event(data: str) -> JsonValue:
    """``json.loads(data)``, the same value or error, at a third of its cost on a small payload
    without surrounding whitespace (an SSE event's: the adapters parse one per event)."""
    try:
        value, end = _raw_decode(data)
        if end == len(data):
            return value
    except ValueError:
        pass
    return json.loads(data)  # surrounding whitespace, or an error worth json.loads' wording


def parse_json_event(data: str) -> JsonValue:
    """Parse one SSE ``data`` payload; malformed JSON raises :class:`ProviderError` quoting it."""
    try:
        return loads_event(data)
    except ValueError as exc:
        excerpt = data if len(data) <= 200 else data[:200] + "..."
        raise ProviderError(f"Malformed JSON in the provider's stream ({exc}): {excerpt}") from exc


def in_band_error(error: JsonValue, default: str = "The provider reported an error") -> ProviderError:
    """A :class:`ProviderError` for an error object sent inside the stream.

    Reads ``message`` (falling back to ``default``), a numeric ``code`` / ``status`` /
    ``status_code`` (prefixed to the message as HTTP errors are), and marks rate limits,
    overload and server errors retryable."""
    message = default
    status: int | None = None
    kind = ""
    if isinstance(error, Mapping):
        text = error.get("message")
        if isinstance(text, str) and text:
            message = text
        for key in ("status_code", "status", "code"):
            value = error.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                status = value
                break
            if isinstance(value, str) and value.isdigit() and 100 <= int(value) <= 599:
                status = int(value)
                break
        kind = " ".join(str(error.get(k, "")) for k in ("type", "code", "status")).lower()
    elif isinstance(error, str) and error:
        message = error
    lowered = f"{kind} {message}".lower()
    retryable = (status is not None and (status == 429 or status >= 500)) or any(
        word in lowered for word in _RETRYABLE_ERROR_WORDS
    )
    text = f"{status} {message}" if status is not None else message
    return ProviderError(text, status=status, retryable=retryable)


_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """``text`` with lone UTF-16 surrogates replaced by U+FFFD (pi's ``sanitizeSurrogates``).

    A Python string can hold them (e.g. from JSON ``"\\ud800"``), but they cannot be encoded as
    UTF-8, so one stray surrogate in a transcript would make every later request body invalid."""
    if text.isascii():  # constant time; every request re-sends the whole transcript
        return text
    return _LONE_SURROGATES.sub("\ufffd", text) if _LONE_SURROGATES.search(text) else text


MAX_PROMPT_CACHE_KEY = 64
"""OpenAI's limit on ``prompt_cache_key`` (Responses and Chat Completions)."""


def prompt_cache_key(session_id: str) -> str:
    """``session_id`` as an OpenAI ``prompt_cache_key``: as is up to 64 characters, else a
    stable, distinct hash of it (OpenAI rejects longer keys)."""
    if len(session_id) <= MAX_PROMPT_CACHE_KEY:
        return session_id
    return "pck_" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:40]

"""Options of one streaming request (the keyword arguments of :func:`providers.stream`)."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from baton.providers.json_types import JsonObject
from baton.providers.models import CacheRetention, ThinkingLevel

ThinkingHandoff = Literal["text", "drop"]
ToolChoice: TypeAlias = "str | JsonObject"
"""``auto``, ``none``, ``required`` / ``any``, a tool's name, or a protocol's own object form."""


class UseDefaultKey(enum.Enum):
    """The type of :data:`USE_DEFAULT_KEY` (httpx's ``USE_CLIENT_DEFAULT`` idea)."""

    USE_DEFAULT_KEY = "use-default-key"


USE_DEFAULT_KEY = UseDefaultKey.USE_DEFAULT_KEY
"""``StreamOptions.api_key``'s default: the key :func:`providers.api_keys.get_api_key` finds for
the model's provider. ``None`` is no default: it means "send no key"."""


@dataclass(slots=True)
class StreamOptions:
    """Everything a request may be tuned with. ``None`` means "the adapter's default"."""

    api_key: str | UseDefaultKey | None = USE_DEFAULT_KEY
    """The key to send; :data:`USE_DEFAULT_KEY`: ask :mod:`providers.api_keys`; ``None``: none."""
    signal: asyncio.Event | None = None
    """Set it to abort: the HTTP response is closed and the stream ends ``aborted``."""
    max_tokens: int | None = None
    temperature: float | None = None
    thinking: ThinkingLevel | None = None
    tool_choice: ToolChoice | None = None
    cache_retention: CacheRetention = "short"
    session_id: str | None = None
    headers: dict[str, str] | None = None
    on_payload: Callable[[JsonObject], None] | None = None
    """Sees the final request body (after the adapter built it) just before it is sent."""
    timeout: float = 600.0
    """Overall connect/read timeout in seconds for one HTTP attempt."""
    idle_timeout: float = 120.0
    """An open stream that delivers neither an event nor a keep-alive comment for this many
    seconds ends as an error."""
    keepalive_limit: float = 600.0
    """The longest an open stream may go on with keep-alive comments alone (OpenRouter sends
    ``: OPENROUTER PROCESSING`` while a model thinks): past it, it ends as an idle error."""
    request_timeout: float | None = 600.0
    """The most one request may take in all, retries and their waits included (``None``: no
    limit): a stream that drips forever ends as an error, its partial content kept."""
    max_retries: int = 3
    """Attempts in total for retryable failures before any content streamed."""
    retry_base_delay: float = 1.0
    max_retry_delay: float = 30.0
    on_retry: Callable[[int, int, float, str], None] | None = None
    """Told before each backoff wait: (failed attempt, attempts allowed, delay in seconds, error)."""
    web_search: bool = False
    """Offer the vendor's own web search where the model has one (:mod:`providers.web_search`)."""
    thinking_handoff: ThinkingHandoff = "text"
    """What thinking from another model becomes: plain text (pi) or nothing."""

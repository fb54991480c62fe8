"""Keeping API keys out of error messages.

A provider that rejects a key often echoes it back (``Incorrect API key provided: sk-abc...``).
Every provider error passes :func:`redact_secrets` before it is stored (the assistant message's
``errorMessage``, the session file) or shown (stderr, JSON output, the UI): the key of the request,
every key configured (environment, ``models.json``, ``--api-key``) and anything shaped like a
key (``sk-...``, Google's ``AIza...``, ``Bearer ...``) become ``[redacted]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
MIN_KEY_LENGTH = 8
"""Shorter configured values are not searched for (they would match ordinary words)."""

_KEY_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{8,}"  # OpenAI, Anthropic (sk-ant-...), OpenRouter (sk-or-...), DeepSeek
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|\b(?:gsk|xai|csk)[-_][A-Za-z0-9_\-]{16,}"  # Groq, xAI, Cerebras
    r"|(?<=Bearer )[A-Za-z0-9._~+/\-]{12,}=*",
)


def redact_secrets(text: str, keys: Iterable[str | None] = ()) -> str:
    """``text`` with ``keys``, every configured key and key-shaped tokens replaced."""
    if not text:
        return text
    candidates = {k for k in keys if k and len(k) >= MIN_KEY_LENGTH}
    candidates.update(k for k in _configured_keys() if len(k) >= MIN_KEY_LENGTH)
    for key in sorted(candidates, key=len, reverse=True):  # longest first: a key may hold another
        if key in text:
            text = text.replace(key, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


def _configured_keys() -> list[str]:
    try:
        from baton.providers.catalog import known_api_keys

        return known_api_keys()
    except Exception:  # redaction must never fail the error path it protects
        return []

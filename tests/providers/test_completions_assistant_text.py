"""Chat Completions keeps an assistant message's text blocks apart (issue 11, item 2).

A thinking block handed over as text and the reply used to be glued with ``"".join``:
``"...first.Let me look"``. OpenAI gets one text part per block; servers that need a string get
the blocks joined by a blank line (compat ``assistantContentAsString``). Real requests through
the adapter to the replay server.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.providers.dispatch import stream
from baton.providers.messages import (
    AssistantMessage,
    Context,
    Message,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from baton.providers.models import Model
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply

CLAUDE_TURN = AssistantMessage(
    api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stop_reason="stop",
    content=[ThinkingContent(thinking="I should read the file first.", thinking_signature="EqkECkYI"),
             TextContent(text="Let me look"), TextContent(text="It is empty.")],
)
MESSAGES: list[Message] = [UserMessage(content="what is in a.txt?"), CLAUDE_TURN, UserMessage(content="ok")]


def _model(provider: str, **compat: Any) -> Model:
    return Model(id="m", api="openai-completions", provider=provider, compat=compat or None)


async def _assistant_content(target: Model) -> Any:
    with ReplayServer([Reply.sse(text_reply("openai-completions", "fine"))]) as server:
        live = target.model_copy(update={"base_url": server.url + "/v1"})
        async with asyncio.timeout(20):
            reply = await stream(live, Context(messages=MESSAGES), api_key="sk-test").result()
        assert reply.stop_reason == "stop", reply.error_message
        body = server.requests[0].json()
    (assistant,) = [m for m in body["messages"] if m["role"] == "assistant"]
    return assistant["content"]


async def test_openai_gets_one_text_part_per_block() -> None:
    content = await _assistant_content(_model("openai"))
    assert content == [
        {"type": "text", "text": "I should read the file first."},
        {"type": "text", "text": "Let me look"},
        {"type": "text", "text": "It is empty."},
    ]


@pytest.mark.parametrize("provider", ["vllm", "deepseek", "openrouter"])
async def test_servers_needing_a_string_get_blocks_joined_by_a_blank_line(provider: str) -> None:
    content = await _assistant_content(_model(provider))
    assert content == "I should read the file first.\n\nLet me look\n\nIt is empty."


async def test_compat_flag_chooses_either_form() -> None:
    assert await _assistant_content(_model("openai", assistantContentAsString=True)) == (
        "I should read the file first.\n\nLet me look\n\nIt is empty."
    )
    parts = await _assistant_content(_model("vllm", assistantContentAsString=False))
    assert [p["text"] for p in parts] == ["I should read the file first.", "Let me look", "It is empty."]

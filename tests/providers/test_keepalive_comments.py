"""Keep-alive comments while a model thinks: OpenRouter sends ``: OPENROUTER PROCESSING`` lines
for as long as a model takes to start answering. They keep the stream alive past the idle
timeout (the first token may come minutes later) but are never content, and comments alone
cannot hold a stream open for ever. Driven through the real OpenAI Chat Completions adapter
against a local replay server."""

from __future__ import annotations

from typing import Any

from baton.providers.dispatch import stream as start_stream
from baton.providers.messages import AssistantMessage, Context, UserMessage
from baton.providers.models import Model
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply

PROCESSING = b": OPENROUTER PROCESSING\n\n"
FAST: dict[str, Any] = {"retry_base_delay": 0.01, "max_retry_delay": 0.1, "max_retries": 1, "api_key": "k"}


def _model(url: str) -> Model:
    return Model(id="thinker", api="openai-completions", provider="openrouter", baseUrl=url + "/v1")


async def _ask(reply: Reply, **options: Any) -> tuple[list[str], AssistantMessage]:
    with ReplayServer([reply]) as server:
        stream = start_stream(_model(server.url), Context(messages=[UserMessage(content="think hard")]),
                              **{**FAST, **options})
        kinds = [event.type async for event in stream]
        return kinds, await stream.result()


async def test_comments_keep_a_thinking_model_alive_past_the_idle_timeout() -> None:
    # 3 s of comments (every 0.1 s) before the first token, with an idle timeout of 1 s
    answer = text_reply("openai-completions", "Thought it through.")
    reply = Reply(chunks=[PROCESSING] * 30 + [answer], delay=0.1)
    kinds, message = await _ask(reply, idle_timeout=1.0)
    assert message.stop_reason == "stop", message.error_message
    assert message.text == "Thought it through."
    assert kinds.count("text_delta") >= 1 and "OPENROUTER" not in message.text, "comments are never content"


async def test_comments_then_silence_still_hit_the_idle_timeout() -> None:
    reply = Reply(chunks=[PROCESSING] * 5, delay=0.1, stall_after=5)
    _, message = await _ask(reply, idle_timeout=0.5)
    assert message.stop_reason == "error" and message.text == ""
    assert message.error_message == "Stream idle: no data received for 0.5 s"


async def test_a_stream_of_comments_alone_ends_at_the_keepalive_limit() -> None:
    reply = Reply(chunks=[PROCESSING] * 600, delay=0.05)  # 30 s of nothing but comments
    _, message = await _ask(reply, idle_timeout=0.5, keepalive_limit=1.5, request_timeout=None)
    assert message.stop_reason == "error" and message.text == ""
    assert message.error_message == "Stream idle: only keep-alive comments for 1.5 s"

"""QA regressions for requests built after a handoff, checked on the wire (local replay server)."""

from __future__ import annotations

from typing import Any

from baton.providers import stream
from baton.providers.messages import (
    AssistantMessage,
    Context,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply

CLAUDE = "anthropic-messages"


def claude(base_url: str) -> Model:
    return Model(id="claude-sonnet-4-5", name="Claude", api=CLAUDE, provider="anthropic", base_url=base_url,
                 reasoning=True, input=["text", "image"], context_window=200_000, max_tokens=32_000)


def assistant(content: list[Any], *, api: str, provider: str, model: str, stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=content, api=api, provider=provider, model=model, stop_reason=stop)  # type: ignore[arg-type]


def gpt_call() -> AssistantMessage:
    return assistant([ToolCall(id="call_1|fc_1", name="read", arguments={"path": "a.txt"})],
                     api="openai-responses", provider="openai", model="gpt-5")


def claude_call(*, thinking: bool) -> AssistantMessage:
    content: list[Any] = [ThinkingContent(thinking="Reading.", thinking_signature="c2lnbmF0dXJl")] if thinking else []
    content.append(ToolCall(id="toolu_1", name="read", arguments={"path": "a.txt"}))
    return assistant(content, api=CLAUDE, provider="anthropic", model="claude-sonnet-4-5")


def result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text="hello")])


async def request_body(messages: list[Message], thinking: str = "high") -> dict[str, Any]:
    with ReplayServer([Reply.sse(text_reply(CLAUDE, "ok"))]) as server:
        final = await stream(claude(server.url), Context(system_prompt="sys", messages=messages),
                             api_key="k", thinking=thinking, max_retries=0).result()
        assert final.stop_reason == "stop", final.error_message
        body: dict[str, Any] = server.requests[0].json()
    return body


async def test_claude_thinking_waits_when_the_open_tool_turn_began_on_another_model() -> None:
    # Switching to Claude (thinking on) between a GPT tool call and its result: Anthropic rejects
    # the request ("a final assistant message must start with a thinking block").
    body = await request_body([UserMessage(content="read a.txt"), gpt_call(), result("call_1|fc_1")])
    assert body["messages"][-2]["content"][0]["type"] == "tool_use"
    assert body["thinking"] == {"type": "disabled"}
    # A steering message after the results joins the same user turn: still an open tool turn.
    body = await request_body([UserMessage(content="read a.txt"), gpt_call(), result("call_1|fc_1"),
                               UserMessage(content="and be quick")])
    assert body["thinking"] == {"type": "disabled"}


async def test_claude_thinking_waits_when_raised_mid_turn() -> None:
    # The call was made with thinking off; the level went up before the result was sent.
    body = await request_body([UserMessage(content="read a.txt"), claude_call(thinking=False), result("toolu_1")])
    assert body["thinking"] == {"type": "disabled"}


async def test_claude_thinking_stays_on_otherwise() -> None:
    # The open turn starts with signed thinking: replayed, thinking stays on.
    body = await request_body([UserMessage(content="read a.txt"), claude_call(thinking=True), result("toolu_1")])
    assert body["messages"][-2]["content"][0]["type"] == "thinking"
    assert body["thinking"]["type"] == "enabled"
    # A new user turn after a finished tool loop from another model: thinking on.
    done = assistant([TextContent(text="It says hello.")], api="openai-responses", provider="openai",
                     model="gpt-5", stop="stop")
    body = await request_body([UserMessage(content="read a.txt"), gpt_call(), result("call_1|fc_1"), done,
                               UserMessage(content="thanks, now think hard")])
    assert body["thinking"]["type"] == "enabled"


def gemini(model_id: str) -> Model:
    return Model(id=model_id, name=model_id, api="google-generative-ai", provider="google",
                 base_url="http://127.0.0.1:9/v1beta", reasoning=True, input=["text"], context_window=1_000_000,
                 max_tokens=8192)


def model_parts(model: Model, messages: list[Message]) -> list[dict[str, Any]]:
    from baton.providers.dispatch import prepare_context
    from baton.providers.google_generative_ai import build_body
    from baton.providers.options import StreamOptions

    options = StreamOptions(thinking="high")
    body = build_body(model, prepare_context(model, Context(messages=messages), options), options)
    return [p for c in body["contents"] if c["role"] == "model" for p in c["parts"]]


def test_gemini_3_gets_the_skip_sentinel_on_calls_it_did_not_sign() -> None:
    # Gemini 3 answers 400 ("function call is missing a thought_signature") to a tool turn that
    # began on another model; Google documents a sentinel for exactly this (pi sends it too).
    from baton.providers.google_generative_ai import SKIP_THOUGHT_SIGNATURE

    history: list[Message] = [UserMessage(content="read a.txt"), claude_call(thinking=True), result("toolu_1")]
    parts = model_parts(gemini("gemini-3-pro-preview"), history)
    calls = [p for p in parts if "functionCall" in p]
    assert [p.get("thoughtSignature") for p in calls] == [SKIP_THOUGHT_SIGNATURE]
    assert not any(p.get("thoughtSignature") for p in parts if "functionCall" not in p)
    # Older Gemini models do not validate signatures: nothing is added.
    assert not any("thoughtSignature" in p for p in model_parts(gemini("gemini-2.5-pro"), history))
    # Gemini 3's own parallel calls: the first keeps its signature, the rest stay unsigned.
    own = assistant([ToolCall(id="c1", name="read", arguments={"path": "a"}, thought_signature="c2lnbmF0dXJl"),
                     ToolCall(id="c2", name="read", arguments={"path": "b"})],
                    api="google-generative-ai", provider="google", model="gemini-3-pro-preview")
    parts = model_parts(gemini("gemini-3-pro-preview"), [UserMessage(content="read"), own, result("c1"), result("c2")])
    assert [p.get("thoughtSignature") for p in parts if "functionCall" in p] == ["c2lnbmF0dXJl", None]

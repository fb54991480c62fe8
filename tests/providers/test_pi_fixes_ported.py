"""Fixes pi made after 0.73 in the handoff transform and the adapters, ported (issue 11, item 3).

Each test names the pi issue or release it follows. Requests are built by the real adapters
(through the handoff transform) and, where the endpoint allows, sent to the replay server.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from baton.providers.anthropic_messages import build_body as anthropic_body
from baton.providers.dispatch import prepare_context, stream
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
from baton.providers.openai_completions import build_body as completions_body
from baton.providers.openai_completions import resolve_compat
from baton.providers.openai_responses import build_body as responses_body
from baton.providers.options import StreamOptions
from baton.providers.tool_ids import SAFE_ID
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply

CLAUDE = Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic", reasoning=True,
               max_tokens=64_000)
CODEX_ID = "call_Q1JuaH3v7ZNL4Gk8y0BJ5N9I|fc_0f0d91e0a300c49b016a990224e6ec87d1b1ea29e03054e6ed"
CODEX_SIGNATURE = json.dumps({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB=="})


def _prepared(target: Model, messages: list[Message], **options: Any) -> Context:
    return prepare_context(target, Context(messages=messages), StreamOptions(**options))


def _codex_turn_labelled(target: Model) -> list[Message]:
    """A Codex turn stored under the target's own label (imported or mislabelled history): the
    transform trusts the label and replays it as it is."""
    turn = AssistantMessage(
        api=target.api, provider=target.provider, model=target.id, stop_reason="toolUse",
        content=[ThinkingContent(thinking="Look at the file.", thinking_signature=CODEX_SIGNATURE),
                 ThinkingContent(thinking="", thinking_signature=CODEX_SIGNATURE, redacted=True),
                 ToolCall(id=CODEX_ID, name="read", arguments={"path": "a"})],
    )
    result = ToolResultMessage(tool_call_id=CODEX_ID, tool_name="read", content=[TextContent(text="A")])
    return [UserMessage(content="read a"), turn, result, UserMessage(content="and?")]


def test_anthropic_never_gets_codex_ids_or_json_signatures_pi_9048() -> None:
    context = _prepared(CLAUDE, _codex_turn_labelled(CLAUDE))
    body = anthropic_body(CLAUDE, context, StreamOptions(thinking="low"))
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text", "tool_use"]  # thinking unsigned -> text; redacted gone
    assert CODEX_SIGNATURE not in json.dumps(body)
    tool_use_id = assistant[1]["id"]
    assert SAFE_ID.fullmatch(tool_use_id)
    assert body["messages"][2]["content"][0]["tool_use_id"] == tool_use_id


def test_anthropic_compatible_proxies_keep_their_own_ids() -> None:
    # A proxy may encode state in its ids (oh-my-pi #10756): only Anthropic's own API is
    # known to enforce the pattern on replayed turns.
    proxy = CLAUDE.model_copy(update={"base_url": "https://proxy.example/anthropic"})
    body = anthropic_body(proxy, _prepared(proxy, _codex_turn_labelled(proxy)), StreamOptions())
    assert body["messages"][1]["content"][-1]["id"] == CODEX_ID


async def test_json_signature_is_not_replayed_over_the_wire_pi_9048() -> None:
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "ok"))]) as server:
        live = CLAUDE.model_copy(update={"base_url": server.url})
        async with asyncio.timeout(20):
            reply = await stream(live, Context(messages=_codex_turn_labelled(live)), api_key="k").result()
        sent = server.requests[0].json()
    assert reply.stop_reason == "stop", reply.error_message
    assert '"signature"' not in json.dumps(sent["messages"])


def test_allow_empty_signature_replays_unsigned_thinking_as_thinking_pi_4464() -> None:
    compatible = CLAUDE.model_copy(update={"base_url": "https://api.example/anthropic",
                                           "compat": {"allowEmptySignature": True}})
    turn = AssistantMessage(api=compatible.api, provider=compatible.provider, model=compatible.id,
                            content=[ThinkingContent(thinking="pondering", thinking_signature=""),
                                     TextContent(text="hi")], stop_reason="stop")
    messages: list[Message] = [UserMessage(content="q"), turn, UserMessage(content="more")]
    body = anthropic_body(compatible, _prepared(compatible, messages), StreamOptions())
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "pondering", "signature": ""}
    plain = anthropic_body(CLAUDE, _prepared(CLAUDE, messages), StreamOptions())
    assert plain["messages"][1]["content"][0]["type"] == "text"


def test_opus_4_7_and_later_get_no_temperature_pi_5251() -> None:
    context = Context(messages=[UserMessage(content="hi")])
    for model_id, sent in [("claude-opus-4-7", False), ("claude-opus-5", False), ("claude-sonnet-4-5", True),
                           ("claude-opus-4-6", True)]:
        target = CLAUDE.model_copy(update={"id": model_id})
        body = anthropic_body(target, context, StreamOptions(temperature=0.3))
        assert ("temperature" in body) is sent, model_id


def test_responses_ids_sharing_a_call_id_stay_distinct_in_chat_completions_pi_6796() -> None:
    # Held already (the Chat Completions normaliser hashes the whole id); kept as a guard.
    deepseek = Model(id="deepseek-v4-pro", api="openai-completions", provider="deepseek",
                     base_url="https://api.deepseek.com")
    turn = AssistantMessage(
        api="openai-responses", provider="xai", model="grok-4.5", stop_reason="toolUse",
        content=[ToolCall(id="call-ce0c0639|fc_1", name="read", arguments={"path": "a"}),
                 ToolCall(id="call-ce0c0639|fc_2", name="read", arguments={"path": "b"})],
    )
    messages: list[Message] = [
        UserMessage(content="read"), turn,
        ToolResultMessage(tool_call_id="call-ce0c0639|fc_1", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="call-ce0c0639|fc_2", tool_name="read", content=[TextContent(text="B")]),
    ]
    body = completions_body(deepseek, _prepared(deepseek, messages), StreamOptions(), resolve_compat(deepseek))
    calls = body["messages"][1]["tool_calls"]
    ids = [c["id"] for c in calls]
    assert len(set(ids)) == 2 and all("|" not in i and len(i) <= 40 for i in ids)
    assert [(m["tool_call_id"], m["content"]) for m in body["messages"][2:]] == list(zip(ids, ["A", "B"], strict=True))


def test_chat_completions_prompt_cache_key_fits_64_characters_pi_4720() -> None:
    gpt = Model(id="gpt-4o", api="openai-completions", provider="openai", base_url="https://api.openai.com/v1")
    context = Context(messages=[UserMessage(content="hi")])

    def key(session_id: str) -> str:
        body = completions_body(gpt, context, StreamOptions(session_id=session_id), resolve_compat(gpt))
        return str(body["prompt_cache_key"])

    long_a, long_b = "s" * 100 + "a", "s" * 100 + "b"
    assert len(key(long_a)) <= 64 and key(long_a) == key(long_a) and key(long_a) != key(long_b)
    assert key("short-session") == "short-session"


def test_empty_tool_output_is_not_called_an_image_pi_0_80_4() -> None:
    # A tool result with no text and no image used to claim "(see attached image)".
    call = ToolCall(id="call_1", name="bash", arguments={"command": "true"})
    result = ToolResultMessage(tool_call_id="call_1", tool_name="bash", content=[])

    def messages(target: Model) -> list[Message]:
        turn = AssistantMessage(api=target.api, provider=target.provider, model=target.id, content=[call],
                                stop_reason="toolUse")
        return [UserMessage(content="run"), turn, result]

    gpt4o = Model(id="gpt-4o", api="openai-completions", provider="openai", base_url="https://api.openai.com/v1")
    body = completions_body(gpt4o, _prepared(gpt4o, messages(gpt4o)), StreamOptions(), resolve_compat(gpt4o))
    assert body["messages"][-1]["content"] == "(no tool output)"
    gpt5 = Model(id="gpt-5", api="openai-responses", provider="openai", base_url="https://api.openai.com/v1")
    body = responses_body(gpt5, _prepared(gpt5, messages(gpt5)), StreamOptions())
    assert body["input"][-1] == {"type": "function_call_output", "call_id": "call_1", "output": "(no tool output)"}

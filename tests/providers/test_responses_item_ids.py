"""OpenAI Responses input item ids are unique (issue 11, item 1; pi issues 5147/5149/5151).

The API answers "400 Duplicate item found with id msg_1" to a request whose input repeats an
item id. These tests send real requests through the adapter to the replay server and read the
body the server received.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.providers.dispatch import stream
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
from baton.providers.openai_responses import build_request
from baton.providers.options import StreamOptions
from tests.provider_scripts import text_reply
from tests.providers.claude_gemini_support import TOOLS, prepared
from tests.replay_server import ReplayServer, Reply

GPT5 = Model(id="gpt-5", api="openai-responses", provider="openai", reasoning=True, input=["text", "image"],
             base_url="https://api.openai.com/v1")


def _claude(*content: Any) -> AssistantMessage:
    return AssistantMessage(api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5",
                            content=list(content), stop_reason="toolUse" if any(
                                isinstance(b, ToolCall) for b in content) else "stop")


def _gpt5(*content: Any, model: str = "gpt-5", provider: str = "openai") -> AssistantMessage:
    return AssistantMessage(api="openai-responses", provider=provider, model=model, content=list(content),
                            stop_reason="toolUse" if any(isinstance(b, ToolCall) for b in content) else "stop")


async def _request_body(target: Model, messages: list[Message]) -> dict[str, Any]:
    """Send ``messages`` to ``target`` through the real adapter; the body the server got."""
    context = Context(system_prompt="sys", messages=messages, tools=TOOLS)
    with ReplayServer([Reply.sse(text_reply("openai-responses", "ok"))]) as server:
        live = target.model_copy(update={"base_url": server.url + "/v1"})
        async with asyncio.timeout(20):
            message = await stream(live, context, api_key="sk-test", thinking="low").result()
        assert message.stop_reason == "stop", message.error_message
        return server.requests[0].json()  # type: ignore[no-any-return]


def _duplicates(values: list[str]) -> list[str]:
    return [v for v, n in Counter(values).items() if n > 1]


def _ids(body: dict[str, Any]) -> list[str]:
    return [item["id"] for item in body["input"] if "id" in item]


async def test_claude_turn_with_thinking_and_text_gets_two_distinct_message_ids() -> None:
    # pi 5151: thinking becomes text for another model; both blocks used to get msg_<index>.
    messages: list[Message] = [
        UserMessage(content="read a.txt"),
        _claude(ThinkingContent(thinking="Let me look first.", thinking_signature="EqkECkYIBxgC"),
                TextContent(text="Let me look"),
                ToolCall(id="toolu_01", name="read", arguments={"path": "a.txt"})),
        ToolResultMessage(tool_call_id="toolu_01", tool_name="read", content=[TextContent(text="hello")]),
        _claude(TextContent(text="It says hello.")),
        UserMessage(content="thanks"),
    ]
    body = await _request_body(GPT5, messages)
    texts = [i for i in body["input"] if i.get("type") == "message"]
    assert [t["content"][0]["text"] for t in texts] == ["Let me look first.", "Let me look", "It says hello."]
    assert _duplicates(_ids(body)) == []
    assert all(t["id"].startswith("msg") and len(t["id"]) <= 64 for t in texts)


async def test_stored_ids_never_collide_with_made_up_ones() -> None:
    # pi 5147/5149: OpenAI names items msg_0, msg_1, ...; a stored one must not meet a made-up
    # id for another block, whatever the scheme for made-up ids is.
    stored = [f"msg_{i}" for i in range(6)] + [f"msg_{i}_{j}" for i in range(6) for j in range(3)]
    own = _gpt5(*(TextContent(text=f"t{n}", text_signature=sid) for n, sid in enumerate(stored)))
    messages: list[Message] = [
        UserMessage(content="one"),
        _claude(ThinkingContent(thinking="hmm", thinking_signature="sig"), TextContent(text="a"),
                TextContent(text="b")),
        UserMessage(content="two"),
        own,
        UserMessage(content="three"),
        _claude(TextContent(text="c"), TextContent(text="d")),
        UserMessage(content="four"),
    ]
    body = await _request_body(GPT5, messages)
    ids = _ids(body)
    assert _duplicates(ids) == []
    assert set(stored) <= set(ids)  # stored ids go out unchanged


async def test_a_repeated_stored_id_goes_out_once() -> None:
    # The same stored message id on two turns (a copied branch, a proxy that reuses ids).
    messages: list[Message] = [
        UserMessage(content="one"),
        _gpt5(TextContent(text="first", text_signature='{"v":1,"id":"msg_abc"}')),
        UserMessage(content="two"),
        _gpt5(TextContent(text="second", text_signature='{"v":1,"id":"msg_abc"}')),
        UserMessage(content="three"),
    ]
    body = await _request_body(GPT5, messages)
    ids = _ids(body)
    assert _duplicates(ids) == [] and ids[0] == "msg_abc"


async def test_calls_sharing_a_call_id_get_distinct_call_ids_and_results_follow() -> None:
    # pi 6796 in the other direction: a Responses server (grok) gave two calls one call_id
    # with different item ids; OpenAI Responses rejects a repeated call_id.
    grok = dict(model="grok-4.5", provider="xai")
    messages: list[Message] = [
        UserMessage(content="read both"),
        _gpt5(ToolCall(id="call-ce0c|fc_1", name="read", arguments={"path": "a"}),
              ToolCall(id="call-ce0c|fc_2", name="read", arguments={"path": "b"}), **grok),
        ToolResultMessage(tool_call_id="call-ce0c|fc_1", tool_name="read", content=[TextContent(text="A")]),
        ToolResultMessage(tool_call_id="call-ce0c|fc_2", tool_name="read", content=[TextContent(text="B")]),
        UserMessage(content="again"),
        _gpt5(ToolCall(id="call-ce0c|fc_3", name="read", arguments={"path": "c"}), **grok),
        ToolResultMessage(tool_call_id="call-ce0c|fc_3", tool_name="read", content=[TextContent(text="C")]),
    ]
    body = await _request_body(GPT5, messages)
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    outputs = {o["call_id"]: o["output"] for o in body["input"] if o.get("type") == "function_call_output"}
    assert _duplicates([c["call_id"] for c in calls]) == []
    assert [outputs[c["call_id"]] for c in calls] == ["A", "B", "C"]
    assert all(len(c["call_id"]) <= 64 for c in calls)


_block = st.one_of(
    st.builds(lambda t, s: ThinkingContent(thinking=t, thinking_signature=s), st.sampled_from(["x", "y z"]),
              st.sampled_from([None, "sig"])),
    st.builds(lambda t, s: TextContent(text=t, text_signature=s), st.sampled_from(["a", "b"]),
              st.sampled_from([None, "msg_0", "msg_1", "msg_2_1", "msg_3_0", '{"v":1,"id":"msg_1"}'])),
)
_source = st.sampled_from([("anthropic-messages", "anthropic", "claude"), ("openai-responses", "openai", "gpt-5"),
                           ("openai-completions", "openai", "gpt-4o")])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_source, st.lists(_block, min_size=1, max_size=4)), min_size=1, max_size=6))
def test_every_item_id_is_unique_for_any_transcript(turns: list[Any]) -> None:
    messages: list[Message] = []
    for (api, provider, model_id), blocks in turns:
        messages.append(UserMessage(content="go"))
        messages.append(AssistantMessage(api=api, provider=provider, model=model_id, content=blocks,
                                         stop_reason="stop"))
    messages.append(UserMessage(content="end"))
    context = Context(messages=messages)
    body = build_request(GPT5, prepared(GPT5, context), StreamOptions(), "sk").body
    ids = [i["id"] for i in body["input"] if "id" in i]
    assert _duplicates(ids) == [], json.dumps(body["input"])[:2000]

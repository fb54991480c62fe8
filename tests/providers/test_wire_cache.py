"""The per-message wire cache (providers/wire_cache.py): request bodies byte for byte as the
uncached path builds them, whatever the transcript, the model switches and in-place changes in
between; and a request converts only what is new."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.providers import AssistantMessage, Model, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.providers.dispatch import id_normalizer_for, prepare_context, wire_adapter
from baton.providers.messages import Context, Tool
from baton.providers.options import StreamOptions
from baton.providers.transform import transform_messages
from baton.providers.transport import _request_body
from tests.providers.test_transform_properties import SOURCES, TARGETS, transcripts

EXTRA_TARGETS = [
    Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic", reasoning=True,
          input=["text", "image"]),
    Model(id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic", reasoning=True,
          base_url="http://127.0.0.1:9/v1", compat={"allowEmptySignature": True}),
    Model(id="devstral", api="openai-completions", provider="mistral"),
    Model(id="gpt-4o", api="openai-completions", provider="openai", input=["text", "image"], reasoning=True),
    Model(id="anthropic/claude-sonnet-4.5", api="openai-completions", provider="openrouter",
          input=["text", "image"]),
    Model(id="gemini-3-pro-preview", api="google-generative-ai", provider="google", reasoning=True,
          input=["text", "image"]),
    Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google", input=["text", "image"]),
    Model(id="bridge", api="openai-completions", provider="proxy", input=["text", "image"], reasoning=True,
          compat={"requiresAssistantAfterToolResult": True, "requiresThinkingAsText": True,
                  "requiresToolResultName": True}),
]
ALL_TARGETS = [*TARGETS.values(), *EXTRA_TARGETS]
TOOLS = [Tool(name="bash", description="run", parameters={"type": "object", "properties": {"c": {"type": "string"}}})]


def bodies(
    model: Model, context: Context, options: StreamOptions, piecewise: bool = True
) -> tuple[bytes, Any, bytes, Any]:
    """(cached bytes, cached payload, uncached bytes, uncached body) of one request."""
    adapter = wire_adapter(model.api)
    assert adapter is not None
    cached = adapter.build_request(model, prepare_context(model, context, options), options, "k")
    reference = Context(
        system_prompt=context.system_prompt,
        messages=transform_messages(context.messages, model, id_normalizer_for(model),
                                    thinking_handoff=options.thinking_handoff),
        tools=context.tools,
    )
    plain = adapter.build_request(model, reference, options, "k")
    if model.api != "openai-responses" and model.provider != "openrouter":
        assert (cached.encoded is not None) == piecewise, "the cached path was (not) taken"
    sent = cached.encoded if cached.encoded is not None else _request_body(cached.body)
    return sent, cached.body, _request_body(plain.body), plain.body


def mutate(messages: list[Any], choice: int) -> None:
    """An in-place change of a message already sent (what a careless caller could do)."""
    for message in messages[choice % max(len(messages), 1):]:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolCall):
                    block.arguments["n"] = "changed"  # in place, same dict
                    return
                if isinstance(block, TextContent):
                    block.text += " (edited)"
                    return
            message.content.append(TextContent(text="appended"))
            return
        if isinstance(message, ToolResultMessage):
            message.content.append(TextContent(text="more output"))
            return
        if isinstance(message, UserMessage) and isinstance(message.content, list):
            message.content.insert(0, TextContent(text="first"))
            return


@pytest.mark.parametrize("source_api", list(SOURCES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_cached_bodies_are_byte_identical_over_growing_transcripts_and_model_switches(
    source_api: str, data: st.DataObject
) -> None:
    messages = data.draw(transcripts(source_api))
    cuts = sorted(data.draw(st.lists(st.integers(1, len(messages)), min_size=1, max_size=6)))
    for cut in [*cuts, len(messages)]:
        model = data.draw(st.sampled_from(ALL_TARGETS + SOURCES[source_api]))
        options = StreamOptions(
            cache_retention=data.draw(st.sampled_from(["none", "short", "long"])),
            thinking=data.draw(st.sampled_from([None, "off", "high"])),
            thinking_handoff=data.draw(st.sampled_from(["text", "drop"])),
        )
        context = Context(system_prompt=data.draw(st.sampled_from([None, "sys"])), messages=messages[:cut],
                          tools=data.draw(st.sampled_from([None, TOOLS])))
        sent, payload, expected, body = bodies(model, context, options)
        assert sent == expected
        assert payload == body
        if data.draw(st.integers(0, 3)) == 0:
            mutate(messages, data.draw(st.integers(0, 50)))
            sent, payload, expected, body = bodies(model, context, options)
            assert sent == expected, "a message changed in place was served from the cache"


@pytest.fixture
def conversions() -> Iterator[dict[str, int]]:
    """Counts calls of the functions that project or convert one message (by name, so the
    count means the same with and without the cache)."""
    names = {"_assistant", "_user", "_tool_result", "project_tool_result",  # the transform
             "_assistant_blocks", "_tool_result_block", "_user_message",  # Anthropic (and Chat's _user_message)
             "_assistant_message",  # Chat Completions (and _tool_result, _user_message)
             "_user_parts", "_model_parts", "_append_tool_result"}  # Gemini
    counts = dict.fromkeys(names, 0)

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_name in names:
            counts[frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        yield counts
    finally:
        sys.setprofile(None)


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "google-generative-ai"])
def test_a_request_converts_only_the_new_messages(api: str, conversions: dict[str, int]) -> None:
    model = TARGETS[api]
    options = StreamOptions(cache_retention="short")
    history: list[Any] = [UserMessage(content="go", timestamp=1)]
    per_turn: list[int] = []
    for turn in range(60):
        call = ToolCall(id=f"call_{turn:04d}", name="bash", arguments={"c": f"echo {turn}"})
        history.append(AssistantMessage(content=[TextContent(text=f"step {turn}"), call], api=model.api,
                                        provider=model.provider, model=model.id, stop_reason="toolUse"))
        history.append(ToolResultMessage(tool_call_id=call.id, tool_name="bash",
                                         content=[TextContent(text=f"{turn}\n")], timestamp=turn))
        before = sum(conversions.values())
        adapter = wire_adapter(model.api)
        assert adapter is not None
        adapter.build_request(model, prepare_context(model, Context(messages=list(history)), options),
                                        options, "k")
        per_turn.append(sum(conversions.values()) - before)
    # Two new messages a turn, each projected and converted once, plus the last user turn's
    # cache_control mark: the same count at turn 60 as at turn 5.
    assert per_turn[5:] == [per_turn[5]] * len(per_turn[5:])
    assert per_turn[-1] <= 8


def test_entries_of_messages_gone_from_the_context_are_dropped() -> None:
    from baton.providers import wire_cache

    wire_cache.clear()
    model = TARGETS["anthropic-messages"]
    options = StreamOptions()
    history: list[Any] = [UserMessage(content=f"message {i}", timestamp=i) for i in range(200)]
    prepare_context(model, Context(messages=history), options)
    assert wire_cache.cached_entries() == 200
    compacted = [UserMessage(content="summary", timestamp=0), *history[-2:]]
    for _ in range(wire_cache.KEEP_REQUESTS + 4):
        prepare_context(model, Context(messages=compacted), options)
    assert wire_cache.cached_entries() == 3
    gone = weakref.ref(history[0])
    del history
    gc.collect()
    assert gone() is None, "the cache still holds a message no longer in any context"


@pytest.mark.parametrize(("api", "piecewise"), [
    ("anthropic-messages", False),
    ("google-generative-ai", False),
    ("openai-completions", True),  # arguments go as a JSON string, "NaN" inside it either way
])
def test_a_value_json_cannot_hold_takes_the_uncached_path_with_the_same_body(api: str, piecewise: bool) -> None:
    # An old session can hold NaN in a tool call's arguments: the whole-body path sends it as
    # null. Piecewise encoding cannot reproduce that, so the request falls back, byte for byte.
    model = TARGETS[api]
    call = ToolCall(id="call_0001", name="bash", arguments={"n": float("nan")})
    history: list[Any] = [
        UserMessage(content="go", timestamp=1),
        AssistantMessage(content=[call], api=model.api, provider=model.provider, model=model.id,
                         stop_reason="toolUse", timestamp=2),
        ToolResultMessage(tool_call_id=call.id, tool_name="bash", content=[TextContent(text="ok")], timestamp=3),
    ]
    sent, _, expected, _ = bodies(model, Context(messages=history), StreamOptions(), piecewise=piecewise)
    assert sent == expected
    assert piecewise or b'"n":null' in sent

"""Oversized tool calls and results are cut per request, never in the transcript (issue 23)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.catalog import get_model
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.projection import (
    MAX_TOOL_CALL_CHARS,
    MAX_TOOL_RESULT_CHARS,
    project_arguments,
    project_message,
)
from baton.providers.transform import transform_messages
from baton.sessions.compaction import estimate_context_tokens, serialize_conversation

SLACK = 12_000
"""Room for the notes and the JSON punctuation around the cut strings."""

sizes = st.integers(0, 400_000)
argument_values = st.recursive(
    st.builds(lambda n, c: c * n, sizes, st.sampled_from("xé\n\"")) | st.integers() | st.none(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=6), argument_values, max_size=5))
def test_cut_arguments_are_bounded_and_the_original_is_untouched(arguments: dict[str, Any]) -> None:
    before = copy.deepcopy(arguments)
    projected = project_arguments(arguments)
    assert arguments == before
    if text_size(arguments) <= MAX_TOOL_CALL_CHARS - SLACK:
        assert projected is arguments
    assert text_size(projected) <= MAX_TOOL_CALL_CHARS + SLACK
    assert isinstance(projected, dict)


def text_size(value: Any) -> int:
    """Characters of text: the strings, the keys, and the JSON of everything else."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return 2 + sum(len(str(k)) + 4 + text_size(v) for k, v in value.items())
    if isinstance(value, list):
        return 2 + sum(1 + text_size(v) for v in value)
    return len(json.dumps(value))


def test_short_values_survive_and_the_note_says_how_much_was_cut() -> None:
    projected = project_arguments({"path": "src/app.py", "content": "a" * 5_000_000})
    assert projected["path"] == "src/app.py"
    assert projected["content"].startswith("a" * 1000)
    assert "4,9" in projected["content"] and "characters cut here" in projected["content"]


def test_arguments_that_are_all_structure_become_one_cut_string() -> None:
    projected = project_arguments({"numbers": list(range(100_000))})
    assert list(projected) == ["arguments"] and projected["arguments"].startswith('{"numbers": [0, 1, 2')


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 300_000), min_size=1, max_size=8), st.booleans())
def test_cut_results_are_bounded_and_keep_images(lengths: list[int], image: bool) -> None:
    content: list[Any] = [TextContent(text=f"{i}" + "r" * n + "END") for i, n in enumerate(lengths)]
    if image:
        content.insert(1, ImageContent(data="AAAA", mime_type="image/png"))
    message = ToolResultMessage(tool_call_id="c", tool_name="t", content=content)
    projected = project_message(message)
    texts = [b.text for b in projected.content if isinstance(b, TextContent)]
    assert sum(map(len, texts)) <= MAX_TOOL_RESULT_CHARS + SLACK
    assert sum(isinstance(b, ImageContent) for b in projected.content) == int(image)
    if sum(len(b.text) for b in content if isinstance(b, TextContent)) <= MAX_TOOL_RESULT_CHARS:
        assert projected is message
    else:
        assert texts[-1].endswith("END")  # the tail is kept: errors come last
    assert message.content == content


def test_every_request_and_every_estimate_carry_the_cut_copy() -> None:
    model = get_model("anthropic/claude-sonnet-4-5")
    call = ToolCall(id="toolu_1", name="bash", arguments={"command": "echo " + "x" * 10_000_000})
    messages: list[Any] = [
        UserMessage(content=[TextContent(text="go")]),
        AssistantMessage(api=model.api, provider=model.provider, model=model.id, content=[call],
                         stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="toolu_1", tool_name="bash", content=[TextContent(text="y" * 3_000_000)]),
    ]
    sent = transform_messages(messages, model)
    assert len(json.dumps([m.to_json_dict() for m in sent])) < 4 * (MAX_TOOL_CALL_CHARS + MAX_TOOL_RESULT_CHARS)
    assert len(call.arguments["command"]) == 10_000_005  # the transcript keeps it whole
    assert estimate_context_tokens(messages).tokens < 100_000
    assert len(serialize_conversation(messages)) < 2 * MAX_TOOL_CALL_CHARS

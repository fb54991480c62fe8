"""JSON mode's lines are valid JSON for every event, whatever it holds (issue 23): an event that
cannot be serialised as it is goes out cut, with ``serializationError`` saying why."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.agent.events import AgentEndEvent, ToolExecutionEndEvent
from baton.agent.tool import AgentToolResult
from baton.providers.json_depth import TOO_DEEP_MARKER
from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from baton.tui.modes.json_mode import dumps, event_line


def nested(depth: int, leaf: Any = 1) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def strict(line: str) -> dict[str, Any]:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} is not JSON")

    value: dict[str, Any] = json.loads(line, parse_constant=refuse)
    return value


def test_agent_end_always_comes_even_when_a_message_cannot_be_serialised() -> None:
    call = ToolCall(id="c1", name="t", arguments={"deep": nested(300)})
    reply = AssistantMessage(api="x", provider="p", model="m", content=[call], stop_reason="toolUse")
    result = ToolResultMessage(tool_call_id="c1", tool_name="t", content=[TextContent(text="ok")],
                               details={"score": math.inf})
    line = strict(event_line(AgentEndEvent([reply, result])))
    assert line["type"] == "agent_end" and "nested more than 100 levels deep" in line["serializationError"]
    assert TOO_DEEP_MARKER in json.dumps(line["messages"][0]) and line["messages"][1]["details"]["score"] is None


def test_a_tool_result_with_nan_details_is_valid_json_without_an_error() -> None:
    event = ToolExecutionEndEvent("c1", "t", AgentToolResult([TextContent(text="r")], {"x": math.nan}), False)
    line = strict(event_line(event))
    assert line["result"]["details"] == {"x": None}


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 600), st.sampled_from([1, math.nan, -math.inf, "text", None]))
def test_every_event_line_is_strict_json(depth: int, leaf: Any) -> None:
    event = ToolExecutionEndEvent("c1", "t", AgentToolResult([TextContent(text="r")], nested(depth, leaf)), False)
    assert strict(event_line(event))["type"] == "tool_execution_end"
    assert strict(dumps({"deep": nested(depth, leaf)}))

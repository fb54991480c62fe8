"""AgentEvent JSON (pi's shapes) from a real run."""

from __future__ import annotations

import json
from typing import Any

from baton.agent import Agent
from baton.providers.faux import faux_tool_call
from tests.agent.helpers import EchoTool, Recorder, faux, model_of, tool_reply

API = "faux-events"


async def test_every_event_serialises_to_pi_json() -> None:
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 3}, id="c1"), text="hm"), "three"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])
        rec = Recorder(agent)
        await agent.prompt("go")
    dumped = [e.to_dict() for e in rec.events]
    json.dumps(dumped)  # plain JSON all the way down
    by_type: dict[str, dict[str, Any]] = {}
    for d in dumped:
        by_type.setdefault(d["type"], d)
    assert by_type["agent_start"] == {"type": "agent_start"}
    assert by_type["turn_start"] == {"type": "turn_start"}
    assert by_type["message_start"]["message"]["role"] == "user"
    update = by_type["message_update"]
    assert set(update) == {"type", "message", "assistantMessageEvent"}
    assert update["assistantMessageEvent"]["type"] == "text_start"
    assert update["assistantMessageEvent"]["partial"]["role"] == "assistant"
    assert by_type["tool_execution_start"] == {"type": "tool_execution_start", "toolCallId": "c1",
                                               "toolName": "echo", "args": {"n": 3}}
    assert by_type["tool_execution_end"] == {
        "type": "tool_execution_end", "toolCallId": "c1", "toolName": "echo",
        "result": {"content": [{"type": "text", "text": "got 3"}], "details": {"n": 3}}, "isError": False,
    }
    turn_end = by_type["turn_end"]
    assert turn_end["message"]["stopReason"] == "toolUse"
    assert turn_end["toolResults"][0]["toolCallId"] == "c1"
    agent_end = dumped[-1]
    assert agent_end["type"] == "agent_end"
    assert [m["role"] for m in agent_end["messages"]] == ["user", "assistant", "toolResult", "assistant"]


async def test_message_update_without_partial() -> None:
    with faux(API, ["x"]) as provider:
        agent = Agent(model=model_of(provider))
        rec = Recorder(agent)
        await agent.prompt("go")
    update = rec.of("message_update")[1]
    d = update.to_dict(include_partial=False)
    assert d["assistantMessageEvent"] == {"type": "text_delta", "contentIndex": 0, "delta": "x"}


async def test_tool_update_event_json() -> None:
    from baton.agent import AgentToolResult, ToolExecutionUpdateEvent

    event = ToolExecutionUpdateEvent("c1", "bash", {"command": "ls"},
                                     AgentToolResult.text("partial", details={"lines": 1}))
    assert event.to_dict() == {
        "type": "tool_execution_update", "toolCallId": "c1", "toolName": "bash", "args": {"command": "ls"},
        "partialResult": {"content": [{"type": "text", "text": "partial"}], "details": {"lines": 1}},
    }

# mypy: disable-error-code="union-attr"
"""Steering and follow-up queues."""

from __future__ import annotations

import asyncio
from typing import Any

from baton.agent import Agent, BeforeToolCallResult, QueueMode
from baton.agent.execution import SKIPPED_TEXT
from baton.providers.faux import faux_model, faux_tool_call
from baton.providers.messages import UserMessage
from tests.agent.helpers import EchoTool, Recorder, WaitTool, faux, model_of, result_texts, tool_reply

API = "faux-queues"


def _three_waits() -> Any:
    return tool_reply(*(faux_tool_call("wait", {"label": label, "seconds": 0.01}, id=label)
                        for label in ("w1", "w2", "w3")))


def _text(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)


async def test_steering_mid_batch_skips_remaining_calls_sequential() -> None:
    wait = WaitTool()
    with faux(API, [_three_waits(), "changing course"]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait], tool_execution="sequential")
        rec = Recorder(agent)

        def steer_after_first(event: Any) -> None:
            if event.type == "tool_execution_end" and event.tool_call_id == "w1":
                agent.steer("stop, do something else")

        agent.subscribe(steer_after_first)
        await agent.prompt("go")
    assert [label for kind, label, _ in wait.log if kind == "start"] == ["w1"]
    assert result_texts(agent) == ["w1 done", SKIPPED_TEXT, SKIPPED_TEXT]
    assert [m.is_error for m in agent.messages if m.role == "toolResult"] == [False, True, True]
    assert rec.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_update*", "message_end",
        "tool_execution_start", "tool_execution_update", "tool_execution_end", "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end",
        "turn_end",
        "turn_start", "message_start", "message_end",  # the steering message
        "message_start", "message_update*", "message_end", "turn_end", "agent_end",
    ]
    # The model's second request ends with the steering message after all three results.
    sent = provider.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "toolResult", "toolResult", "toolResult", "user"]
    assert _text(sent[-1]) == "stop, do something else"
    assert agent.queued_messages == []


async def test_steering_while_parallel_batch_runs_is_delivered_after_it() -> None:
    wait = WaitTool()
    with faux(API, [_three_waits(), "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait])

        def steer_when_running(event: Any) -> None:
            if event.type == "tool_execution_update" and event.tool_call_id == "w1":
                agent.steer("also check the tests")

        agent.subscribe(steer_when_running)
        await agent.prompt("go")
    # pi: once a parallel batch is running, every call completes; steering comes after.
    assert result_texts(agent) == ["w1 done", "w2 done", "w3 done"]
    assert _text(provider.requests[1].messages[-1]) == "also check the tests"


async def test_steering_while_parallel_batch_is_prepared_skips_unstarted_calls() -> None:
    echo = EchoTool()
    agent: Agent

    def before(ctx: Any, signal: asyncio.Event) -> BeforeToolCallResult | None:
        if ctx.tool_call.id == "a":
            agent.steer("wait!")
        return None

    reply = tool_reply(*(faux_tool_call("echo", {"n": i}, id=cid) for i, cid in enumerate("abc")))
    with faux(API, [reply, "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo], before_tool_call=before)
        rec = Recorder(agent)
        await agent.prompt("go")
    assert echo.received == []
    assert result_texts(agent) == [SKIPPED_TEXT] * 3
    assert [e.tool_call_id for e in rec.of("tool_execution_start")] == ["a", "b", "c"]
    assert [e.tool_call_id for e in rec.of("tool_execution_end")] == ["a", "b", "c"]
    assert _text(provider.requests[1].messages[-1]) == "wait!"


async def test_follow_up_is_delivered_when_the_run_would_end() -> None:
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1})), "first answer", "second answer"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])
        rec = Recorder(agent)

        def queue_follow_up(event: Any) -> None:
            if event.type == "tool_execution_start":
                agent.follow_up("and then?")

        agent.subscribe(queue_follow_up)
        await agent.prompt("go")
    assert [m.role for m in agent.messages] == ["user", "assistant", "toolResult", "assistant", "user",
                                                "assistant"]
    # The follow-up waited for the model to stop calling tools.
    assert _text(agent.messages[4]) == "and then?"
    assert agent.messages[-1].text == "second answer"
    types = rec.types()
    assert types.count("agent_start") == 1 and types.count("agent_end") == 1
    assert types.count("turn_start") == 3
    assert types[-9:] == ["turn_end", "turn_start", "message_start", "message_end",
                          "message_start", "message_update*", "message_end", "turn_end", "agent_end"]


async def test_follow_up_queued_while_the_run_ends_is_delivered() -> None:
    # agent_end subscribers may await (the session persists, the UI redraws); a follow-up typed
    # in that window missed the loop's last look at the queue and must still be answered.
    with faux(API, ["first answer", "second answer"]) as provider:
        agent = Agent(model=model_of(provider), tools=[])
        ends = 0

        async def queue_on_first_end(event: Any) -> None:
            nonlocal ends
            if event.type == "agent_end":
                ends += 1
                if ends == 1:
                    await asyncio.sleep(0)
                    agent.follow_up("one more thing")

        agent.subscribe(queue_on_first_end)
        await agent.prompt("go")
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert _text(agent.messages[2]) == "one more thing"
    assert agent.messages[-1].text == "second answer"
    assert agent.queued_messages == [] and not agent.is_running


async def test_one_at_a_time_and_all_modes() -> None:
    cases: list[tuple[QueueMode, list[list[str]]]] = [("one-at-a-time", [["s1"], ["s2"]]), ("all", [["s1", "s2"]])]
    for mode, expected_user_turns in cases:
        with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1})), "a", "b"]) as provider:
            agent = Agent(model=model_of(provider), tools=[EchoTool()], steering_mode=mode)

            def steer_twice(event: Any, agent: Agent = agent) -> None:
                if event.type == "tool_execution_start":
                    agent.steer("s1")
                    agent.steer(UserMessage(content="s2"))

            agent.subscribe(steer_twice)
            await agent.prompt("go")
        groups: list[list[str]] = []
        previous = None
        for message in agent.messages[3:]:
            if message.role == "user":
                if previous != "user":
                    groups.append([])
                groups[-1].append(_text(message))
            previous = message.role
        assert groups == expected_user_turns, mode


async def test_clear_queues_and_snapshot() -> None:
    agent = Agent(model=faux_model(api=API))
    agent.steer("a")
    agent.follow_up("b")
    agent.steer("c")
    assert [_text(m) for m in agent.queued_messages] == ["a", "c", "b"]
    removed = agent.clear_queues()
    assert [_text(m) for m in removed] == ["a", "c", "b"]
    assert agent.queued_messages == []


async def test_steering_queued_while_idle_is_delivered_after_the_prompt() -> None:
    with faux(API, ["reply"]) as provider:
        agent = Agent(model=model_of(provider))
        agent.steer("early note")
        await agent.prompt("go")
    assert [_text(m) for m in provider.requests[0].messages] == ["go", "early note"]

# mypy: disable-error-code="union-attr"
"""Abort: during streaming, during tools, between them; nothing left running afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from baton.agent import Agent
from baton.agent.execution import ABORTED_TEXT
from baton.providers.events import AssistantMessageEventStream, StartEvent, TextDeltaEvent, TextStartEvent
from baton.providers.faux import FauxResponse, faux_model, faux_tool_call
from baton.providers.messages import AssistantMessage, TextContent, ToolCall
from baton.providers.options import StreamOptions
from tests.agent.helpers import (
    EchoTool,
    Recorder,
    SleepProcessTool,
    StubbornTool,
    WaitTool,
    faux,
    kill_quietly,
    model_of,
    process_alive,
    result_texts,
    tool_reply,
)

API = "faux-abort"


def _other_tasks() -> set[asyncio.Task[Any]]:
    current = asyncio.current_task()
    return {t for t in asyncio.all_tasks() if t is not current and not t.done()}


def abort_at(agent: Agent, nth: int, picks: Callable[[Any], bool]) -> None:
    """Abort ``agent`` from a listener at the ``nth`` event that ``picks`` chooses."""
    seen = 0

    def listener(event: Any) -> None:
        nonlocal seen
        if picks(event):
            seen += 1
            if seen == nth:
                agent.abort()

    agent.subscribe(listener)


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_abort_during_streaming_keeps_partial_text() -> None:
    text = "word " * 200
    with faux(API, [FauxResponse(content=[text], delay=0.002)]) as provider:
        agent = Agent(model=model_of(provider))
        rec = Recorder(agent)
        abort_at(agent, 5, lambda e: e.type == "message_update" and e.assistant_message_event.type == "text_delta")
        await agent.prompt("talk")
    reply = agent.messages[-1]
    assert reply.stop_reason == "aborted"
    assert reply.error_message == "Request was aborted"
    assert 0 < len(reply.text) < len(text)
    assert text.startswith(reply.text)
    assert rec.types()[-4:] == ["message_update*", "message_end", "turn_end", "agent_end"]
    assert not agent.is_running
    await _settle()
    assert _other_tasks() == set()


async def test_abort_during_tool_call_streaming_never_executes_half_calls() -> None:
    echo = EchoTool()
    reply = FauxResponse(
        content=["ok ", faux_tool_call("echo", {"n": 1}, id="done1"),
                 faux_tool_call("echo", {"n": 12345678901234567890}, id="half")],
        chunk_size=2, delay=0.001,
    )
    with faux(API, [reply, "never"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        rec = Recorder(agent)
        abort_at(agent, 5, lambda e: (ev := getattr(e, "assistant_message_event", None)) is not None
                 and ev.type == "toolcall_delta" and ev.content_index == 2)
        await agent.prompt("go")
    stored = agent.messages[-1]
    assert stored.stop_reason == "aborted"
    calls = stored.tool_calls
    assert [c.id for c in calls] == ["done1", "half"]
    assert calls[0].arguments == {"n": 1}
    assert calls[1].arguments != {"n": 12345678901234567890}  # kept as received, incomplete
    assert echo.received == []
    assert rec.of("tool_execution_start") == []
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert provider.calls == 1


async def test_abort_during_a_tool_cancels_it_and_ends_the_run() -> None:
    stubborn = StubbornTool()
    with faux(API, [tool_reply(faux_tool_call("stubborn", {}, id="s1")), "never"]) as provider:
        agent = Agent(model=model_of(provider), tools=[stubborn], abort_grace=0.05)
        rec = Recorder(agent)
        run = asyncio.create_task(agent.prompt("go"))
        await asyncio.wait_for(stubborn.started.wait(), 2)
        assert agent.pending_tool_calls == {"s1"}
        agent.abort()
        agent.abort()  # twice is fine
        await asyncio.wait_for(run, 2)
    assert stubborn.cancelled
    assert result_texts(agent) == [ABORTED_TEXT]
    assert agent.messages[-1].is_error
    end = rec.of("tool_execution_end")[0]
    assert end.is_error and end.result.content[0].text == ABORTED_TEXT
    assert provider.calls == 1  # no further model call after an abort
    assert rec.types()[-2:] == ["turn_end", "agent_end"]
    assert agent.pending_tool_calls == set()
    await _settle()
    assert _other_tasks() == set()


async def test_abort_during_parallel_tools_answers_every_call() -> None:
    wait = WaitTool()
    stubborn = StubbornTool()
    reply = tool_reply(faux_tool_call("wait", {"label": "w", "seconds": 30}, id="w"),
                       faux_tool_call("stubborn", {}, id="s"))
    with faux(API, [reply]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait, stubborn], abort_grace=0.05)
        run = asyncio.create_task(agent.prompt("go"))
        await asyncio.wait_for(stubborn.started.wait(), 2)
        agent.abort()
        await asyncio.wait_for(run, 2)
    # The cooperative tool stopped by itself (its own error), the stubborn one was cancelled.
    assert result_texts(agent) == ["Aborted", ABORTED_TEXT]
    assert ("aborted", "w") in [(k, label) for k, label, _ in wait.log]
    assert stubborn.cancelled


async def test_abort_in_sequential_batch_answers_unstarted_calls() -> None:
    wait = WaitTool()
    echo = EchoTool()
    reply = tool_reply(faux_tool_call("wait", {"label": "w", "seconds": 30}, id="w"),
                       faux_tool_call("echo", {"n": 1}, id="e"))
    with faux(API, [reply]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait, echo], tool_execution="sequential")
        run = asyncio.create_task(agent.prompt("go"))
        await asyncio.wait_for(wait.started.wait(), 2)
        agent.abort()
        await asyncio.wait_for(run, 2)
    assert echo.received == []
    assert result_texts(agent) == ["Aborted", ABORTED_TEXT]


async def test_abort_between_model_call_and_tool_start() -> None:
    echo = EchoTool()
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1}, id="c1")), "never"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        rec = Recorder(agent)

        def abort_on_reply(event: Any) -> None:
            if event.type == "message_end" and event.message.role == "assistant":
                agent.abort()

        agent.subscribe(abort_on_reply)
        await agent.prompt("go")
    assert echo.received == []
    assert agent.messages[1].stop_reason == "toolUse"  # the reply was complete
    assert result_texts(agent) == [ABORTED_TEXT]
    assert provider.calls == 1
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


async def test_abort_when_idle_is_a_no_op() -> None:
    with faux(API, ["hi", "again"]) as provider:
        agent = Agent(model=model_of(provider))
        agent.abort()
        await agent.prompt("go")
        agent.abort()
        agent.abort()
        await agent.prompt("go again")  # a previous abort does not leak into the next run
    assert agent.messages[-1].stop_reason == "stop"
    assert agent.messages[-1].text == "again"


@pytest.mark.parametrize("honour_signal", [True, False])
async def test_abort_kills_tool_subprocess(honour_signal: bool) -> None:
    tool = SleepProcessTool(honour_signal=honour_signal)
    with faux(API, [tool_reply(faux_tool_call("sleeper", {}, id="p1"))]) as provider:
        agent = Agent(model=model_of(provider), tools=[tool], abort_grace=0.1)
        run = asyncio.create_task(agent.prompt("go"))
        try:
            await asyncio.wait_for(tool.started.wait(), 5)
            assert tool.pid is not None and process_alive(tool.pid)
            agent.abort()
            await asyncio.wait_for(run, 5)
            assert not process_alive(tool.pid)
        finally:
            kill_quietly(tool.pid)
    assert agent.messages[-1].is_error
    expected = "Command aborted" if honour_signal else ABORTED_TEXT
    assert result_texts(agent) == [expected]
    await _settle()
    assert _other_tasks() == set()


async def test_provider_ignoring_the_signal_is_cut_off_after_grace() -> None:
    model = faux_model(api="deaf")
    producer: list[asyncio.Task[None]] = []

    def deaf_stream(model: Any, context: Any, options: StreamOptions) -> AssistantMessageEventStream:
        out = AssistantMessageEventStream()
        partial = AssistantMessage(api=model.api, provider=model.provider, model=model.id)

        async def produce() -> None:
            out.push(StartEvent(partial))
            partial.content.append(TextContent(text=""))
            out.push(TextStartEvent(0, partial))
            partial.content[0].text += "partial"
            out.push(TextDeltaEvent(0, "partial", partial))
            await asyncio.sleep(100)  # never looks at the signal

        out.task = asyncio.create_task(produce())
        producer.append(out.task)
        return out

    agent = Agent(model=model, stream_fn=deaf_stream, abort_grace=0.05)
    rec = Recorder(agent)

    def abort_on_delta(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            agent.abort()

    agent.subscribe(abort_on_delta)
    await asyncio.wait_for(agent.prompt("go"), 2)
    reply = agent.messages[-1]
    assert reply.stop_reason == "aborted" and reply.text == "partial"
    assert reply.error_message == "Request was aborted"
    assert rec.types()[-3:] == ["message_end", "turn_end", "agent_end"]
    await _settle()
    assert producer[0].done()


async def test_cancelling_the_prompt_caller_aborts_the_run() -> None:
    wait = WaitTool()
    with faux(API, [tool_reply(faux_tool_call("wait", {"label": "w", "seconds": 30}))]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait])
        rec = Recorder(agent)
        run = asyncio.create_task(agent.prompt("go"))
        await asyncio.wait_for(wait.started.wait(), 2)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await asyncio.wait_for(agent.wait_idle(), 2)
    assert not agent.is_running
    assert rec.types()[-1] == "agent_end"
    assert result_texts(agent) == ["Aborted"]


async def test_aborted_turn_is_skipped_in_the_next_request() -> None:
    with faux(API, [FauxResponse(content=["x" * 400, ToolCall(id="t", name="echo", arguments={})], delay=0.001),
                    "fresh start"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])

        def abort_early(event: Any) -> None:
            if event.type == "message_update" and len(event.message.text) > 20:
                agent.abort()

        unsubscribe = agent.subscribe(abort_early)
        await agent.prompt("one")
        unsubscribe()
        await agent.prompt("two")
    # The aborted reply stays in the history, on disk too, but the next request skips it.
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[1].stop_reason == "aborted"
    assert [m.role for m in provider.requests[1].messages] == ["user", "user"]


async def test_abort_while_context_is_prepared_ends_with_aborted_reply() -> None:
    agent: Agent

    async def slow_transform(messages: list[Any], signal: asyncio.Event) -> list[Any]:
        agent.abort()
        return messages

    with faux(API, ["never"]) as provider:
        agent = Agent(model=model_of(provider), transform_context=slow_transform)
        rec = Recorder(agent)
        await asyncio.wait_for(agent.prompt("go"), 2)
    reply = agent.messages[-1]
    assert reply.role == "assistant" and reply.stop_reason == "aborted"
    assert reply.content == []
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


async def test_deaf_provider_aborted_before_streaming_is_cut_off() -> None:
    def deaf_stream(model: Any, context: Any, options: StreamOptions) -> AssistantMessageEventStream:
        out = AssistantMessageEventStream()

        async def produce() -> None:
            await asyncio.sleep(100)

        out.task = asyncio.create_task(produce())
        return out

    agent: Agent

    async def abort_first(messages: list[Any], signal: asyncio.Event) -> list[Any]:
        agent.abort()
        return messages

    agent = Agent(model=faux_model(api="deaf"), stream_fn=deaf_stream, transform_context=abort_first,
                  abort_grace=0.05)
    await asyncio.wait_for(agent.prompt("go"), 2)
    assert agent.messages[-1].stop_reason == "aborted"
    assert agent.messages[-1].error_message == "Request was aborted"
    await _settle()
    assert _other_tasks() == set()

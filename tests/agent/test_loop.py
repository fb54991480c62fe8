# mypy: disable-error-code="union-attr"
"""The turn loop: event order, tool execution and its failures, hooks, model switching."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.agent import (
    AfterToolCallResult,
    Agent,
    AgentBusyError,
    AgentToolResult,
    BashExecutionMessage,
    BeforeToolCallResult,
    CustomMessage,
)
from baton.agent.execution import SKIPPED_TEXT
from baton.providers.faux import FauxResponse, faux_model, faux_thinking, faux_tool_call
from baton.providers.messages import AssistantMessage, TextContent, ThinkingContent, ToolCall, UserMessage
from baton.providers.options import StreamOptions
from tests.agent.helpers import (
    BoomTool,
    EchoTool,
    Recorder,
    WaitTool,
    faux,
    model_of,
    result_texts,
    tool_reply,
)

API = "faux-loop"


async def test_text_only_event_order() -> None:
    with faux(API, ["Hello there, friend."]) as provider:
        agent = Agent(model=model_of(provider))
        rec = Recorder(agent)
        await agent.prompt("hi")
    assert rec.types() == [
        "agent_start", "turn_start",
        "message_start", "message_end",  # the prompt
        "message_start", "message_update*", "message_end",  # the reply
        "turn_end", "agent_end",
    ]
    updates = rec.of("message_update")
    kinds = [u.assistant_message_event.type for u in updates]
    assert kinds[0] == "text_start" and kinds[-1] == "text_end"
    assert "".join(u.assistant_message_event.delta for u in updates if u.assistant_message_event.type == "text_delta") \
        == "Hello there, friend."
    assert [m.role for m in agent.messages] == ["user", "assistant"]
    assert agent.messages[1].text == "Hello there, friend."
    assert rec.of("agent_end")[0].messages == agent.messages
    assert rec.of("turn_end")[0].message is agent.messages[1]
    assert not agent.is_running


async def test_message_end_sees_message_in_history() -> None:
    with faux(API, ["ok"]) as provider:
        agent = Agent(model=model_of(provider))
        seen: list[tuple[str, bool]] = []
        agent.subscribe(lambda e: seen.append((e.type, e.message in agent.messages))
                        if e.type in ("message_start", "message_end") else None)
        await agent.prompt("hi")
    assert seen == [("message_start", False), ("message_end", True)] * 2


async def test_one_tool_call_event_order() -> None:
    echo = EchoTool()
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 7}, id="c1"), text="Let me check."),
                    "It said 7."]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        rec = Recorder(agent)
        await agent.prompt("echo 7")
    assert rec.types() == [
        "agent_start", "turn_start",
        "message_start", "message_end",
        "message_start", "message_update*", "message_end",
        "tool_execution_start", "tool_execution_end",
        "message_start", "message_end",  # the tool result
        "turn_end",
        "turn_start",
        "message_start", "message_update*", "message_end",
        "turn_end", "agent_end",
    ]
    assert echo.received == [7]
    end = rec.of("tool_execution_end")[0]
    assert (end.tool_call_id, end.tool_name, end.is_error) == ("c1", "echo", False)
    assert end.result.details == {"n": 7}
    assert rec.of("turn_end")[0].tool_results == [agent.messages[2]]
    assert [m.role for m in agent.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert agent.messages[2].tool_call_id == "c1" and agent.messages[2].details == {"n": 7}
    # The second request carried the tool result and the tool schema.
    second = provider.requests[1]
    assert second.messages[-1].role == "toolResult"
    assert second.tools is not None and second.tools[0].name == "echo"
    assert second.tools[0].parameters["properties"]["n"]["type"] == "integer"


async def test_toolcall_deltas_carry_partial_arguments() -> None:
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 123456789}, id="c1")), "done"],
              chunk_size=3) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])
        partials: list[dict[str, Any]] = []

        def on_event(e: Any) -> None:
            if e.type == "message_update" and e.assistant_message_event.type == "toolcall_delta":
                partials.append(dict(e.message.content[0].arguments))

        agent.subscribe(on_event)
        await agent.prompt("go")
    assert len(partials) >= 4
    assert partials[-1] == {"n": 123456789}


async def test_two_parallel_tools_overlap_and_results_in_call_order() -> None:
    wait = WaitTool()
    reply = tool_reply(
        faux_tool_call("wait", {"label": "slow", "seconds": 0.15}, id="a"),
        faux_tool_call("wait", {"label": "fast", "seconds": 0.01}, id="b"),
    )
    with faux(API, [reply, "both done"]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait])
        rec = Recorder(agent)
        await agent.prompt("go")
    # Concurrency: both started before either ended, and the fast one finished first.
    order = [(kind, label) for kind, label, _ in wait.log]
    assert order[:2] == [("start", "slow"), ("start", "fast")]
    assert order[2:] == [("end", "fast"), ("end", "slow")]
    # Results (events and history) in call order regardless of completion order.
    assert [e.tool_call_id for e in rec.of("tool_execution_start")] == ["a", "b"]
    assert [e.tool_call_id for e in rec.of("tool_execution_end")] == ["a", "b"]
    assert result_texts(agent) == ["slow done", "fast done"]
    assert [u.tool_call_id for u in rec.of("tool_execution_update")] == ["a", "b"]
    assert rec.of("tool_execution_update")[0].partial_result.content[0].text == "slow running"
    assert rec.types().count("turn_end") == 2


async def test_sequential_execution_does_not_overlap() -> None:
    wait = WaitTool()
    reply = tool_reply(
        faux_tool_call("wait", {"label": "one", "seconds": 0.03}, id="a"),
        faux_tool_call("wait", {"label": "two", "seconds": 0.01}, id="b"),
    )
    with faux(API, [reply, "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait], tool_execution="sequential")
        rec = Recorder(agent)
        await agent.prompt("go")
    assert [(k, label) for k, label, _ in wait.log] == [("start", "one"), ("end", "one"), ("start", "two"),
                                                         ("end", "two")]
    tool_types = [t for t in rec.types() if t.startswith("tool_execution") and t != "tool_execution_update"]
    assert tool_types == ["tool_execution_start", "tool_execution_end"] * 2


async def test_unknown_tool_gets_error_result() -> None:
    with faux(API, [tool_reply(faux_tool_call("nope", {"x": 1}, id="c1")), "sorry"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])
        rec = Recorder(agent)
        await agent.prompt("go")
    end = rec.of("tool_execution_end")[0]
    assert end.is_error
    assert result_texts(agent) == ["Tool nope not found"]
    assert agent.messages[2].is_error
    assert provider.calls == 2  # the loop went on so the model could react


async def test_invalid_arguments_tell_the_model_what_was_wrong_and_what_it_sent() -> None:
    echo = EchoTool()
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": "seven"}, id="c1")), "oops"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        await agent.prompt("go")
    assert echo.received == []
    text = result_texts(agent)[0]
    assert text.startswith('Validation failed for tool "echo":\n  - n: ')
    assert "valid integer" in text
    assert 'Received arguments:\n{\n  "n": "seven"\n}' in text
    assert agent.messages[2].is_error


async def test_missing_argument_is_reported() -> None:
    with faux(API, [tool_reply(faux_tool_call("echo", {}, id="c1")), "oops"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()])
        await agent.prompt("go")
    assert "  - n: Field required" in result_texts(agent)[0]


async def test_lax_coercion_of_string_number_succeeds() -> None:
    echo = EchoTool()
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": "5"}, id="c1")), "fine"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        await agent.prompt("go")
    assert echo.received == [5]
    assert result_texts(agent) == ["got 5"]
    assert not agent.messages[2].is_error


async def test_tool_raising_becomes_error_result() -> None:
    with faux(API, [tool_reply(faux_tool_call("boom", {}, id="c1")), "hm"]) as provider:
        agent = Agent(model=model_of(provider), tools=[BoomTool()])
        rec = Recorder(agent)
        await agent.prompt("go")
    assert result_texts(agent) == ["the tool exploded"]
    assert rec.of("tool_execution_end")[0].is_error
    assert rec.types()[-1] == "agent_end"


async def test_length_truncated_tool_calls_are_not_executed() -> None:
    echo = EchoTool()
    truncated = FauxResponse(
        content=[faux_tool_call("echo", {"n": 1}, id="c1"), faux_tool_call("echo", {"n": 2}, id="c2")],
        stop_reason="length",
    )
    with faux(API, [truncated, "retrying later"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        rec = Recorder(agent)
        await agent.prompt("go")
    assert echo.received == []
    texts = result_texts(agent)
    assert len(texts) == 2
    assert texts[0].startswith('Tool call "echo" was not executed: the response hit the output token limit')
    assert all(m.is_error for m in agent.messages if m.role == "toolResult")
    assert [e.is_error for e in rec.of("tool_execution_end")] == [True, True]
    assert provider.calls == 2


async def test_error_reply_ends_run_without_tools() -> None:
    echo = EchoTool()
    bad = FauxResponse(content=[faux_tool_call("echo", {"n": 1})], error_message="overloaded")
    with faux(API, [bad, "never"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo])
        rec = Recorder(agent)
        await agent.prompt("go")
    assert echo.received == []
    assert provider.calls == 1
    assert agent.messages[-1].stop_reason == "error"
    assert agent.messages[-1].error_message == "overloaded"
    assert agent.error == "overloaded"
    assert rec.types()[-3:] == ["message_end", "turn_end", "agent_end"]
    assert rec.of("turn_end")[0].tool_results == []


async def test_stream_fn_failure_becomes_error_message() -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no route to provider")

    agent = Agent(model=faux_model(api="nowhere"), stream_fn=broken)
    rec = Recorder(agent)
    await agent.prompt("go")
    assert agent.messages[-1].stop_reason == "error"
    assert agent.messages[-1].error_message == "no route to provider"
    assert rec.types() == ["agent_start", "turn_start", "message_start", "message_end",
                           "message_start", "message_end", "turn_end", "agent_end"]


async def test_unregistered_api_ends_with_error() -> None:
    agent = Agent(model=faux_model(api="faux-not-registered"))
    await agent.prompt("go")
    assert agent.messages[-1].stop_reason == "error"
    assert "faux-not-registered" in (agent.messages[-1].error_message or "")


async def test_prompt_while_running_is_an_error_and_continue_rules() -> None:
    with faux(API, [FauxResponse.text("slow reply", delay=0.01), "second"]) as provider:
        agent = Agent(model=model_of(provider))
        run = asyncio.create_task(agent.prompt("one"))
        await asyncio.sleep(0.005)
        assert agent.is_running
        with pytest.raises(AgentBusyError):
            await agent.prompt("two")
        with pytest.raises(AgentBusyError):
            await agent.continue_()
        await run
        # Ends in an assistant message with nothing queued: cannot continue.
        with pytest.raises(ValueError, match="assistant"):
            await agent.continue_()
        agent.messages.append(UserMessage(content="and now?"))
        await agent.continue_()
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[-1].text == "second"


async def test_continue_from_tool_result_and_empty_history() -> None:
    agent = Agent(model=faux_model(api=API))
    with pytest.raises(ValueError, match="No messages"):
        await agent.continue_()
    call = ToolCall(id="c1", name="echo", arguments={"n": 1})
    agent.replace_messages([
        UserMessage(content="go"),
        AssistantMessage(api=API, provider=API, model="faux-1", content=[call], stop_reason="toolUse"),
    ])
    agent.messages.append(
        __import__("baton.providers.messages", fromlist=["ToolResultMessage"]).ToolResultMessage(
            tool_call_id="c1", tool_name="echo", content=[TextContent(text="got 1")]
        )
    )
    with faux(API, ["continued"]) as provider:
        rec = Recorder(agent)
        await agent.continue_()
    assert rec.types() == ["agent_start", "turn_start", "message_start", "message_update*", "message_end",
                           "turn_end", "agent_end"]
    assert provider.requests[0].messages[-1].role == "toolResult"
    assert agent.messages[-1].text == "continued"


async def test_continue_from_bash_execution_but_not_ui_only_messages() -> None:
    agent = Agent(model=faux_model(api=API))
    agent.replace_messages([CustomMessage(custom_type="note", content="hidden", display=True)])
    with faux(API, ["seen it"]):
        await agent.continue_()  # custom converts to a user message
    agent.messages.append(BashExecutionMessage(command="ls", output="a", exit_code=0,
                                               exclude_from_context=True))
    with pytest.raises(ValueError, match="bashExecution"):
        await agent.continue_()


async def test_continue_from_assistant_delivers_queued_message() -> None:
    with faux(API, ["first", "after queue"]) as provider:
        agent = Agent(model=model_of(provider))
        await agent.prompt("one")
        agent.follow_up("queued while idle")
        await agent.continue_()
    assert [m.role for m in agent.messages] == ["user", "assistant", "user", "assistant"]
    assert agent.messages[2].content[0].text == "queued while idle"


async def test_before_tool_call_can_block_and_after_tool_call_can_replace() -> None:
    echo = EchoTool()
    seen: list[Any] = []

    def before(ctx: Any, signal: asyncio.Event) -> BeforeToolCallResult | None:
        seen.append((ctx.tool_call.id, ctx.args.n))
        if ctx.args.n == 13:
            return BeforeToolCallResult(block=True, reason="13 is unlucky")
        return None

    async def after(ctx: Any, signal: asyncio.Event) -> AfterToolCallResult | None:
        return AfterToolCallResult(content=[TextContent(text=f"rewritten {ctx.result.details['n']}")],
                                   is_error=True)

    reply = tool_reply(faux_tool_call("echo", {"n": 13}, id="a"), faux_tool_call("echo", {"n": "4"}, id="b"))
    with faux(API, [reply, "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[echo], before_tool_call=before, after_tool_call=after)
        await agent.prompt("go")
    assert seen == [("a", 13), ("b", 4)]
    assert echo.received == [4]
    assert result_texts(agent) == ["13 is unlucky", "rewritten 4"]
    assert [m.is_error for m in agent.messages if m.role == "toolResult"] == [True, True]


async def test_async_subscribers_are_awaited_in_order() -> None:
    log: list[str] = []

    async def slow(event: Any) -> None:
        await asyncio.sleep(0)
        log.append(f"slow:{event.type}")

    def fast(event: Any) -> None:
        log.append(f"fast:{event.type}")

    def broken(event: Any) -> None:
        raise RuntimeError("subscriber bug")

    with faux(API, ["x"]) as provider:
        agent = Agent(model=model_of(provider))
        agent.subscribe(slow)
        agent.subscribe(broken)  # must not break the run
        unsubscribe = agent.subscribe(fast)
        await agent.prompt("go")
        unsubscribe()
        count = len(log)
        provider.add("y")
        await agent.prompt("again")
    pairs = log[:count]
    assert pairs[0::2] == [p.replace("fast", "slow") for p in pairs[1::2]]
    assert all(entry.startswith("slow:") for entry in log[count:])


async def test_events_async_iterator() -> None:
    with faux(API, ["streamed"]) as provider:
        agent = Agent(model=model_of(provider))
        async with agent.events() as events:
            task = asyncio.create_task(agent.prompt("go"))
            kinds = [event.type async for event in events]
        await task
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert "message_update" in kinds


async def test_get_api_key_is_called_per_request() -> None:
    keys: list[str] = []
    received: list[str | None] = []

    async def get_key(provider_name: str) -> str:
        keys.append(provider_name)
        return f"key-{len(keys)}"

    def spy_stream(model: Any, context: Any, options: StreamOptions) -> Any:
        from baton.providers.dispatch import stream_request

        received.append(options.api_key)
        return stream_request(model, context, options)

    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1})), "done"]) as provider:
        agent = Agent(model=model_of(provider, provider_name="acme"), tools=[EchoTool()],
                      get_api_key=get_key, stream_fn=spy_stream)
        await agent.prompt("go")
    assert keys == ["acme", "acme"]
    assert received == ["key-1", "key-2"]


async def test_transform_context_runs_before_convert_on_every_call_without_mutating_history() -> None:
    calls: list[str] = []
    from baton.agent import convert_to_llm

    async def transform(messages: list[Any], signal: asyncio.Event) -> list[Any]:
        calls.append(f"transform:{len(messages)}")
        messages.append(UserMessage(content="injected"))  # mutate the list it was given
        return [m for m in messages if not (m.role == "user" and m.content == "drop me")]

    def convert(messages: list[Any]) -> list[Any]:
        calls.append(f"convert:{len(messages)}")
        return convert_to_llm(messages)

    history = [UserMessage(content="drop me"), UserMessage(content="keep me")]
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1})), "done"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()], messages=history,
                      transform_context=transform, convert_to_llm=convert)
        await agent.prompt("go")
    # history: 2 + prompt = 3, then + assistant + result = 5
    assert calls == ["transform:3", "convert:3", "transform:5", "convert:5"]
    assert [m.content for m in provider.requests[0].messages] == [
        "keep me", [TextContent(text="go")], "injected"]
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "user", "user", "assistant", "toolResult", "assistant"]
    assert agent.messages[0].content == "drop me"
    assert not any(getattr(m, "content", None) == "injected" for m in agent.messages)


async def test_model_switch_between_two_calls_of_one_run() -> None:
    with faux("faux-a", [FauxResponse(content=[
        faux_thinking("I should call echo.", signature="sig-a"),
        "Calling echo.",
        faux_tool_call("echo", {"n": 2}, id="call_a1"),
    ])]) as prov_a, faux("faux-b", ["Echo said 2."]) as prov_b:
        model_a = faux_model("model-a", api="faux-a", provider="vendor-a", reasoning=True)
        model_b = faux_model("model-b", api="faux-b", provider="vendor-b")
        agent = Agent(model=model_a, tools=[EchoTool()], thinking="high")
        thinking_seen: list[Any] = []
        orig_stream = agent.stream_fn

        def spy(model: Any, context: Any, options: StreamOptions) -> Any:
            thinking_seen.append((model.id, options.thinking))
            return orig_stream(model, context, options)

        agent.stream_fn = spy

        def switch(event: Any) -> None:
            if event.type == "tool_execution_end":
                agent.model = model_b

        agent.subscribe(switch)
        await agent.prompt("echo 2")
    assert (prov_a.calls, prov_b.calls) == (1, 1)
    # Thinking level is read per call and clamped to what each model supports.
    assert thinking_seen == [("model-a", "high"), ("model-b", "off")]
    # The second request went to model B with the history transformed for it.
    sent = prov_b.requests[0].messages
    assert [m.role for m in sent] == ["user", "assistant", "toolResult"]
    handed = sent[1]
    assert [b.type for b in handed.content] == ["text", "text", "toolCall"]
    assert handed.content[0].text == "I should call echo."
    # Model A saw its own request untouched.
    assert prov_a.requests[0].messages[0].role == "user"
    # The stored history still holds model A's thinking with its signature.
    stored = agent.messages[1]
    assert isinstance(stored.content[0], ThinkingContent)
    assert stored.content[0].thinking_signature == "sig-a"
    final = agent.messages[-1]
    assert (final.provider, final.api, final.model, final.text) == ("vendor-b", "faux-b", "model-b",
                                                                    "Echo said 2.")


async def test_skipped_text_constant_matches_pi() -> None:
    assert SKIPPED_TEXT == "Skipped due to queued user message."


async def test_tool_update_events_and_on_update_with_async_subscriber() -> None:
    updates: list[str] = []

    async def on_event(event: Any) -> None:
        if event.type == "tool_execution_update":
            await asyncio.sleep(0)
            updates.append(event.partial_result.content[0].text)

    wait = WaitTool()
    with faux(API, [tool_reply(faux_tool_call("wait", {"label": "w", "seconds": 0.01})), "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[wait])
        agent.subscribe(on_event)
        await agent.prompt("go")
    assert updates == ["w running"]


async def test_tool_result_details_and_images_survive() -> None:
    class ImageTool(EchoTool):
        name = "img"

        async def run(self, tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
            from baton.providers.messages import ImageContent

            return AgentToolResult([TextContent(text="an image"), ImageContent(data="aGk=", mime_type="image/png")],
                                   details={"path": "x.png"})

    with faux(API, [tool_reply(faux_tool_call("img", {"n": 1})), "nice"]) as provider:
        agent = Agent(model=model_of(provider), tools=[ImageTool()])
        await agent.prompt("go")
    result = agent.messages[2]
    assert [b.type for b in result.content] == ["text", "image"]
    assert result.details == {"path": "x.png"}


async def test_tool_returning_garbage_content_becomes_error_result() -> None:
    class Garbage(EchoTool):
        name = "garbage"

        async def run(self, tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
            return AgentToolResult(["not a block"], None)  # type: ignore[list-item]

    with faux(API, [tool_reply(faux_tool_call("garbage", {"n": 1})), "ok"]) as provider:
        agent = Agent(model=model_of(provider), tools=[Garbage()])
        rec = Recorder(agent)
        await agent.prompt("go")
    assert result_texts(agent)[0].startswith("Tool garbage returned an invalid result")
    assert rec.of("tool_execution_end")[0].is_error
    assert agent.messages[-1].text == "ok"


async def test_failing_hook_outside_tools_ends_run_cleanly() -> None:
    async def broken_transform(messages: list[Any], signal: asyncio.Event) -> list[Any]:
        raise RuntimeError("compaction exploded")

    with faux(API, ["never"]) as provider:
        agent = Agent(model=model_of(provider), transform_context=broken_transform)
        rec = Recorder(agent)
        await agent.prompt("go")
    assert agent.messages[-1].stop_reason == "error"
    assert agent.messages[-1].error_message == "compaction exploded"
    assert provider.calls == 0
    assert rec.types()[-1] == "agent_end"


async def test_request_context_is_the_validated_context_of_the_history() -> None:
    """The context a provider receives is what validating the history would give: the same
    messages (the very objects), system prompt, tools and fields set, on every call of a run."""
    from baton.providers.messages import Context

    received: list[Any] = []

    def spy_stream(model: Any, context: Any, options: StreamOptions) -> Any:
        from baton.providers.dispatch import stream_request

        received.append(context)
        return stream_request(model, context, options)

    history = [UserMessage(content="earlier"), UserMessage(content=[TextContent(text="more")])]
    with faux(API, [tool_reply(faux_tool_call("echo", {"n": 1})), "done"]) as provider:
        agent = Agent(model=model_of(provider), tools=[EchoTool()], messages=history,
                      system_prompt="Be brief.", stream_fn=spy_stream)
        await agent.prompt("go")
    assert len(received) == 2
    for context, size in zip(received, (3, 5), strict=True):
        validated = Context(system_prompt="Be brief.", messages=list(agent.messages[:size]),
                            tools=[EchoTool().schema()])
        assert context == validated
        assert context.model_fields_set == validated.model_fields_set
        assert context.to_json_dict() == validated.to_json_dict()
        assert all(a is b for a, b in zip(context.messages, agent.messages[:size], strict=True))


async def test_request_context_validates_what_convert_to_llm_did_not_build() -> None:
    """A ``convert_to_llm`` hook may hand back pi message dicts: they are validated into messages
    as before; something that is no model message fails the call with validation's error."""
    from baton.agent import convert_to_llm

    def convert(messages: list[Any]) -> list[Any]:
        return [*convert_to_llm(messages), {"role": "user", "content": "from a dict"}]

    with faux(API, ["ok"]) as provider:
        agent = Agent(model=model_of(provider), convert_to_llm=convert)
        await agent.prompt("go")
    sent = provider.requests[0].messages
    assert [type(m).__name__ for m in sent] == ["UserMessage", "UserMessage"]
    assert sent[1].content == "from a dict"

    def convert_bad(messages: list[Any]) -> list[Any]:
        return [*convert_to_llm(messages), BashExecutionMessage(command="ls")]

    with faux(API, ["never sent"]) as provider:
        agent = Agent(model=model_of(provider), convert_to_llm=convert_bad)
        await agent.prompt("go")
    assert provider.requests == []
    reply = agent.messages[-1]
    assert reply.stop_reason == "error" and "validation error" in (reply.error_message or "")

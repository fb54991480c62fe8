"""The faux provider: scripting, pacing, tool-call argument streaming, abort, usage and cost."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

from baton.providers.dispatch import resolve, stream
from baton.providers.events import AssistantMessageEvent
from baton.providers.faux import (
    NO_RESPONSE_LEFT,
    FauxProvider,
    FauxResponse,
    faux_model,
    faux_text,
    faux_thinking,
    faux_tool_call,
    hold_at,
)
from baton.providers.messages import AssistantMessage, Context, TextContent, ToolCall, UserMessage


def _ctx(text: str = "hello") -> Context:
    return Context(system_prompt="be brief", messages=[UserMessage(content=text)])


async def _collect(
    model: Any, context: Context, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    s = stream(model, context, **options)
    events = [e async for e in s]
    return events, await s.result()


async def test_text_streams_in_chunks_with_start_and_done() -> None:
    with FauxProvider("faux-t1", ["Hello world!"], chunk_size=5):
        events, message = await _collect(faux_model(api="faux-t1"), _ctx())
    kinds = [e.type for e in events]
    assert kinds == ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hello", " worl", "d!"]
    assert message.text == "Hello world!"
    assert message.stop_reason == "stop"
    assert (message.api, message.provider, message.model) == ("faux-t1", "faux", "faux-1")


async def test_pacing_delay_between_chunks() -> None:
    with FauxProvider("faux-t2", [FauxResponse.text("abcdefghij", chunk_size=2, delay=0.02)]):
        s = stream(faux_model(api="faux-t2"), _ctx())
        stamps = []
        async for event in s:
            if event.type == "text_delta":
                stamps.append(time.monotonic())
    assert len(stamps) == 5
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert min(gaps) >= 0.015  # token by token, not all at once


async def test_thinking_text_and_tool_calls_with_streamed_arguments() -> None:
    args = {"path": "src/main.py", "lines": [1, 2, 3], "note": "x" * 30}
    response = FauxResponse(content=[
        faux_thinking("Let me look.", signature="sig-123"),
        faux_text("Reading it now."),
        faux_tool_call("read", args, id="call_1"),
        ToolCall(id="call_2", name="ls", arguments={}),
    ])
    with FauxProvider("faux-t3", [response], chunk_size=4):
        events, message = await _collect(faux_model(api="faux-t3", reasoning=True), _ctx())
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]
    assert message.content[0].thinking_signature == "sig-123"  # type: ignore[union-attr]
    assert message.stop_reason == "toolUse"
    assert message.tool_calls[0].arguments == args
    assert message.tool_calls[1].arguments == {}
    deltas = [e for e in events if e.type == "toolcall_delta" and e.content_index == 2]
    assert len(deltas) > 10
    assert "".join(e.delta for e in deltas) == '{"path": "src/main.py", "lines": [1, 2, 3], "note": "' \
        + "x" * 30 + '"}'
    ends = [e for e in events if e.type == "toolcall_end"]
    assert [e.tool_call.id for e in ends] == ["call_1", "call_2"]


async def test_toolcall_deltas_carry_partial_arguments() -> None:
    seen: list[dict[str, Any]] = []
    # Events carry the live partial message, so pace the stream to observe each state.
    reply = FauxResponse(content=[faux_tool_call("write", {"content": "abcdefghijklmnop"})], delay=0.001)
    with FauxProvider("faux-t4", [reply], chunk_size=3):
        s = stream(faux_model(api="faux-t4"), _ctx())
        async for event in s:
            if event.type == "toolcall_delta":
                seen.append(dict(event.partial.content[0].arguments))  # type: ignore[union-attr]
    growing: list[str] = [a["content"] for a in seen if isinstance(a.get("content"), str)]
    assert growing, seen
    assert growing[-1] == "abcdefghijklmnop"
    assert any(0 < len(v) < 16 for v in growing)  # partial strings appear as prefixes


async def test_usage_estimate_and_cost_from_model_price() -> None:
    model = faux_model(api="faux-t5", cost={"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75})
    with FauxProvider("faux-t5", ["x" * 400, FauxResponse.text("ok", usage={"input": 1000, "output": 200,
                                                                          "cacheRead": 5000, "cacheWrite": 10})]):
        _, estimated = await _collect(model, _ctx("y" * 800))
        _, given = await _collect(model, _ctx())
    assert estimated.usage.output == 100
    assert estimated.usage.input == (len("be brief") + 800 + 3) // 4
    assert estimated.usage.total_tokens == estimated.usage.input + 100
    assert estimated.usage.cost.output == pytest.approx(100 * 15.0 / 1e6)
    u = given.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens) == (1000, 200, 5000, 10, 6210)
    assert u.cost.input == pytest.approx(0.003)
    assert u.cost.cache_read == pytest.approx(0.0015)
    assert u.cost.total == pytest.approx(0.003 + 0.003 + 0.0015 + 0.0000375)


async def test_abort_mid_stream_keeps_partial_content() -> None:
    signal = asyncio.Event()
    text = "0123456789" * 20
    with FauxProvider("faux-t6", [FauxResponse(content=[text], delay=0.002)], chunk_size=4):
        s = stream(faux_model(api="faux-t6"), _ctx(), signal=signal)
        kinds = []
        async for event in s:
            kinds.append(event.type)
            if kinds.count("text_delta") == 3:
                signal.set()
        message = await s.result()
    assert kinds[-1] == "error"
    assert "text_end" not in kinds
    assert message.stop_reason == "aborted"
    assert message.error_message == "Request was aborted"
    assert 0 < len(message.text) < len(text) and text.startswith(message.text)
    assert s.task is not None and s.task.done()


async def test_abort_mid_tool_call_keeps_half_call() -> None:
    signal = asyncio.Event()
    with FauxProvider("faux-t7", [FauxResponse(content=[faux_tool_call("w", {"text": "y" * 100}, id="c")],
                                               delay=0.001)], chunk_size=4):
        s = stream(faux_model(api="faux-t7"), _ctx(), signal=signal)
        deltas = 0
        async for event in s:
            if event.type == "toolcall_delta":
                deltas += 1
                if deltas == 5:
                    signal.set()
        message = await s.result()
    assert message.stop_reason == "aborted"
    assert message.tool_calls[0].id == "c"
    assert message.tool_calls[0].arguments != {"text": "y" * 100}


async def test_hold_keeps_the_stream_open_until_released() -> None:
    release = asyncio.Event()
    with FauxProvider("faux-t9", [FauxResponse.text("abcdefghij", hold=hold_at(2, release))], chunk_size=2):
        s = stream(faux_model(api="faux-t9"), _ctx())
        async for event in s:
            if event.type == "text_delta" and event.delta == "ab":
                await asyncio.sleep(0.05)
                assert event.partial.text == "ab", "nothing streams past the hold"
                release.set()
        message = await s.result()
    assert message.text == "abcdefghij" and message.stop_reason == "stop"


async def test_abort_wakes_a_held_stream() -> None:
    signal = asyncio.Event()
    never = asyncio.Event()
    with FauxProvider("faux-t10", [FauxResponse.text("abcdefghij", hold=hold_at(3, never))], chunk_size=2):
        s = stream(faux_model(api="faux-t10"), _ctx(), signal=signal)
        async for event in s:
            if event.type == "text_delta" and event.delta == "cd":
                signal.set()
        message = await asyncio.wait_for(s.result(), 5)
    assert message.stop_reason == "aborted" and message.text == "abcd"


async def test_signal_set_before_start_aborts_at_once() -> None:
    signal = asyncio.Event()
    signal.set()
    with FauxProvider("faux-t8", ["never streamed"]) as provider:
        events, message = await _collect(faux_model(api="faux-t8"), _ctx(), signal=signal)
    assert [e.type for e in events] == ["start", "error"]
    assert message.stop_reason == "aborted" and message.content == []
    assert provider.calls == 1


async def test_script_exhaustion_and_error_responses() -> None:
    with FauxProvider("faux-t9", [FauxResponse(content=["partial answer"], error_message="rate limited")]) as p:
        events, errored = await _collect(faux_model(api="faux-t9"), _ctx())
        _, exhausted = await _collect(faux_model(api="faux-t9"), _ctx())
    assert events[-1].type == "error"
    assert errored.stop_reason == "error" and errored.error_message == "rate limited"
    assert errored.text == "partial answer"
    assert exhausted.stop_reason == "error"
    assert exhausted.error_message == NO_RESPONSE_LEFT == "faux provider: no scripted response left"
    assert p.calls == 2 and p.remaining == 0


async def test_length_stop_and_response_function() -> None:
    def respond(context: Context, model: Any) -> FauxResponse | str:
        last = context.messages[-1]
        assert isinstance(last, UserMessage) and isinstance(last.content, str)
        if last.content == "long":
            return FauxResponse(content=["cut"], stop_reason="length")
        return f"echo: {last.content} via {model.id}"

    with FauxProvider("faux-t10", respond) as p:
        _, a = await _collect(faux_model("m1", api="faux-t10"), _ctx("hi"))
        _, b = await _collect(faux_model("m1", api="faux-t10"), _ctx("long"))
    assert a.text == "echo: hi via m1" and a.stop_reason == "stop"
    assert b.stop_reason == "length"
    assert [r.messages[-1].content for r in p.requests] == ["hi", "long"]


async def test_async_response_function_and_failures_never_raise() -> None:
    async def respond(context: Context, model: Any) -> FauxResponse:
        await asyncio.sleep(0)
        raise RuntimeError("script bug")

    with FauxProvider("faux-t11", respond):
        events, message = await _collect(faux_model(api="faux-t11"), _ctx())
    assert [e.type for e in events] == ["start", "error"]
    assert message.stop_reason == "error" and "script bug" in (message.error_message or "")


async def test_registration_and_several_apis_at_once() -> None:
    a = FauxProvider("faux-a1", ["from a"])
    b = FauxProvider("faux-b1", ["from b"])
    with a, b:
        assert resolve("faux-a1") == a.stream and resolve("faux-b1") == b.stream
        _, ma = await _collect(faux_model("x", api="faux-a1", provider="pa"), _ctx())
        _, mb = await _collect(faux_model("y", api="faux-b1", provider="pb"), _ctx())
    assert (ma.text, ma.provider, mb.text, mb.provider) == ("from a", "pa", "from b", "pb")
    assert resolve("faux-a1") is None and resolve("faux-b1") is None
    assert (a.calls, b.calls) == (1, 1)


async def test_requests_hold_the_transformed_context() -> None:
    # An aborted turn from another model is dropped by the handoff transform before the call.
    aborted = AssistantMessage(api="other", provider="other", model="o", stop_reason="aborted",
                               content=[TextContent(text="half")])
    context = Context(messages=[UserMessage(content="one"), aborted, UserMessage(content="two")])
    with FauxProvider("faux-t12", ["ok"]) as p:
        await _collect(faux_model(api="faux-t12"), context)
    assert [m.role for m in p.requests[0].messages] == ["user", "user"]
    assert len(context.messages) == 3  # the caller's context is untouched


def test_faux_model_fields() -> None:
    model = faux_model("demo", provider="acme", api="faux-x", reasoning=True, input=("text", "image"),
                       context_window=1000, max_tokens=100, cost={"input": 1.0})
    assert (model.id, model.name, model.provider, model.api) == ("demo", "demo", "acme", "faux-x")
    assert model.reasoning and model.supports_images
    assert (model.context_window, model.max_tokens, model.cost.input) == (1000, 100, 1.0)
    with pytest.raises(ValueError):
        FauxProvider(chunk_size=0)

"""JSON from outside: any nesting and any bytes give a clear error or a valid value, never a
RecursionError or a value that cannot be written back (issue 23)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.adapter import MessageBuilder
from baton.providers.json_depth import (
    MAX_VALUE_DEPTH,
    TOO_DEEP_MARKER,
    JsonTooDeepError,
    clamp_depth,
    clamp_object,
    depth_exceeds,
    loads_bounded,
    text_depth_exceeds,
)
from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage

LIMIT = 12

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=8))
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=20,
)
provider_values = st.recursive(  # what a provider's JSON may hold once Python parsed it: NaN too
    scalars | st.sampled_from([math.nan, math.inf, -math.inf]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=20,
)


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def wrap(value: Any, levels: int, as_list: bool) -> Any:
    for _ in range(levels):
        value = [value] if as_list else {"k": value}
    return value


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(0, 2 * LIMIT), st.booleans())
def test_loads_bounded_is_json_loads_up_to_the_limit_and_a_clear_error_past_it(
    value: Any, extra: int, as_list: bool
) -> None:
    value = wrap(value, extra, as_list)
    text = json.dumps(value)
    depth = depth_of(value)
    assert text_depth_exceeds(text, LIMIT) == (depth > LIMIT)
    assert depth_exceeds(value, LIMIT) == (depth > LIMIT)
    if depth > LIMIT:
        with pytest.raises(JsonTooDeepError, match=f"nested more than {LIMIT} levels deep"):
            loads_bounded(text, LIMIT)
    else:
        assert loads_bounded(text, LIMIT) == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.lists(st.sampled_from(['[', '{', '"', "\\", "]", "}", ":", ",", "1", "a"]),
                                          max_size=300).map(lambda parts: "".join(parts).encode()))
def test_any_bytes_give_a_value_or_a_value_error(data: bytes) -> None:
    try:
        loads_bounded(data, LIMIT)
    except ValueError:
        pass


def test_a_million_brackets_are_refused_without_recursion() -> None:
    for text in ("[" * 1_000_000, "{\"a\":" * 500_000, '"' + '\\"' * 100_000 + "[" * 300):
        try:
            loads_bounded(text)
        except ValueError:
            pass
    with pytest.raises(JsonTooDeepError):
        loads_bounded(b"[" * 1_000_000 + b"]" * 1_000_000)


def test_nan_and_infinity_are_not_json() -> None:
    for text in ("[NaN]", '{"a": Infinity}', "-Infinity"):
        with pytest.raises(ValueError, match="is not JSON"):
            loads_bounded(text)
    assert math.isnan(loads_bounded("[NaN]", allow_nan=True)[0])


@settings(max_examples=200, deadline=None)
@given(json_values, st.integers(0, 40), st.booleans(), st.sampled_from([math.nan, math.inf, -math.inf, 1.5]))
def test_clamp_depth_always_gives_writable_json_within_the_limit(
    value: Any, extra: int, as_list: bool, odd: float
) -> None:
    value = wrap([value, odd, {1: b"bytes", "set": {3}}], extra, as_list)
    clamped = clamp_depth(value, LIMIT)
    text = json.dumps(clamped, allow_nan=False)
    assert depth_of(json.loads(text)) <= LIMIT
    if depth_of(value) > LIMIT:
        assert TOO_DEEP_MARKER in text


def test_clamp_object_cuts_the_free_form_values_of_a_message() -> None:
    deep = wrap(1, 400, True)
    result = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="ok")],
                               details={"deep": deep, "nan": math.nan})
    with pytest.raises(ValueError):  # pydantic gives up past 254 levels
        json.dumps(result.to_json_dict(), allow_nan=False)
    clamped = clamp_object(result)
    data = json.loads(json.dumps(clamped.to_json_dict(), allow_nan=False))
    assert data["content"] == [{"type": "text", "text": "ok"}] and data["details"]["nan"] is None
    assert result.details["deep"] is deep  # the original is untouched


# --------------------------------------------------------------------------------------------
# Tool-call arguments, as every adapter delivers them (fragments, or whole)


def _builder() -> tuple[MessageBuilder, AssistantMessage]:
    output = AssistantMessage(api="x", provider="p", model="m")
    return MessageBuilder(output, lambda event: None), output


@settings(max_examples=200, deadline=None)
@given(provider_values, st.integers(0, 2 * MAX_VALUE_DEPTH), st.booleans(),
       st.lists(st.integers(1, 50), min_size=1, max_size=30), st.booleans())
def test_streamed_arguments_are_valid_or_refused_with_a_reason(
    value: Any, extra: int, as_list: bool, cuts: list[int], whole: bool
) -> None:
    arguments = {"a": wrap(value, extra, as_list)}
    raw = json.dumps(arguments)
    builder, output = _builder()
    index = builder.start_tool_call("call_1", "bash")
    position = 0
    for size in cuts:
        builder.tool_call_delta(index, raw[position:position + size])
        position += size
    builder.tool_call_delta(index, raw[position:])
    builder.end_tool_call(index, arguments if whole else None)
    [call] = output.tool_calls
    assert isinstance(call, ToolCall)
    json.dumps(output.to_json_dict(), allow_nan=False)  # always serialisable
    if depth_of(arguments) > MAX_VALUE_DEPTH:
        assert call.arguments == {} and call.argument_error is not None
        assert f"nested more than {MAX_VALUE_DEPTH} levels deep" in call.argument_error
    else:
        assert call.argument_error is None and call.arguments == finite(arguments)


def finite(value: Any) -> Any:
    """``value`` with NaN and the infinities as ``None`` (what JSON can carry)."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def test_a_refusal_is_never_stored_or_sent() -> None:
    call = ToolCall(id="c", name="bash", arguments={"a": 1})
    call.refuse_arguments("too deep")
    assert call.to_json_dict() == {"type": "toolCall", "id": "c", "name": "bash", "arguments": {}}
    assert call.model_copy().argument_error == "too deep"
    assert ToolCall.model_validate(call.to_json_dict()).argument_error is None

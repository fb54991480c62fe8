"""transform_messages, rule by rule (docs/architecture.md, "The handoff transform"), with the cases pi's
own suite uses."""

from __future__ import annotations

import re
from typing import Any

import pytest

from baton.providers import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    id_normalizer_for,
    transform_messages,
)
from baton.providers.transform import (
    NO_RESULT_TEXT,
    TOOL_IMAGE_PLACEHOLDER,
    USER_IMAGE_PLACEHOLDER,
    TransformReport,
)

CLAUDE = Model(id="claude-sonnet-4", api="anthropic-messages", provider="anthropic", input=["text", "image"])
GPT = Model(id="gpt-5", api="openai-responses", provider="openai", input=["text", "image"])
TEXT_ONLY = Model(id="deepseek-chat", api="openai-completions", provider="deepseek", input=["text"])
ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
IMG = ImageContent(data="aGVsbG8=", mime_type="image/png")


def user(text: str = "hi", ts: int = 1) -> Any:
    return UserMessage(content=text, timestamp=ts)


def assistant(
    *blocks: Any, source: Model = CLAUDE, stop: str = "stop", model_id: str | None = None, ts: int = 2
) -> Any:
    return AssistantMessage(
        content=list(blocks), api=source.api, provider=source.provider,
        model=model_id or source.id, stop_reason=stop, timestamp=ts,
    )


def call(call_id: str, name: str = "bash", **extra: Any) -> Any:
    return ToolCall(id=call_id, name=name, arguments={"command": "ls"}, **extra)


def result(call_id: str, text: str = "out", name: str = "bash", *content: Any) -> Any:
    blocks = list(content) or [TextContent(text=text)]
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=blocks, timestamp=3)


def dumps(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in messages]


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


# --- rule 1: content=None and image downgrade ------------------------------------------------


def test_images_become_one_placeholder_per_run_for_a_text_only_target() -> None:
    text = TextContent(text="look")
    messages = [
        UserMessage(content=[text, IMG, IMG, TextContent(text="and"), IMG], timestamp=1),
        assistant(call("c1"), source=TEXT_ONLY),
        result("c1", "", "read", IMG, IMG),
    ]
    report = TransformReport()
    out = transform_messages(messages, TEXT_ONLY, report=report)
    assert dumps(out)[0]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "text", "text": USER_IMAGE_PLACEHOLDER},
        {"type": "text", "text": "and"},
        {"type": "text", "text": USER_IMAGE_PLACEHOLDER},
    ]
    assert dumps(out)[2]["content"] == [{"type": "text", "text": TOOL_IMAGE_PLACEHOLDER}]
    assert report.images_replaced == 5
    assert out[0].content[0] is text  # untouched blocks are shared, not copied


def test_image_after_an_existing_placeholder_text_collapses_into_it() -> None:
    messages = [UserMessage(content=[TextContent(text=USER_IMAGE_PLACEHOLDER), IMG], timestamp=1)]
    out = transform_messages(messages, TEXT_ONLY)
    assert dumps(out)[0]["content"] == [{"type": "text", "text": USER_IMAGE_PLACEHOLDER}]


def test_images_are_kept_for_an_image_target_and_the_stored_transcript_keeps_them() -> None:
    messages = [UserMessage(content=[IMG], timestamp=1)]
    assert transform_messages(messages, CLAUDE)[0] is messages[0]
    transform_messages(messages, TEXT_ONLY)
    assert messages[0].content == [IMG]


def test_none_content_becomes_an_empty_list() -> None:
    message = assistant(source=CLAUDE)
    broken = AssistantMessage.model_construct(**{**dict(message), "content": None})
    empty_user = UserMessage.model_construct(role="user", content=None, timestamp=1)  # type: ignore[arg-type]
    out = transform_messages([empty_user, broken], GPT)
    assert out[0].content == []
    assert out[1].content == []


# --- rule 2: thinking ------------------------------------------------------------------------


def test_same_model_keeps_signed_thinking_even_when_empty() -> None:
    signed_empty = ThinkingContent(thinking="", thinking_signature="enc")
    signed = ThinkingContent(thinking="plan", thinking_signature="sig")
    message = assistant(signed_empty, signed, TextContent(text="done", text_signature="ts"))
    out = transform_messages([user(), message], CLAUDE)
    assert out[1] is message


def test_same_model_drops_empty_unsigned_thinking_and_keeps_unsigned_text() -> None:
    message = assistant(ThinkingContent(thinking="  \n"), ThinkingContent(thinking="plan"), TextContent(text="ok"))
    out = transform_messages([user(), message], CLAUDE)
    assert dumps(out)[1]["content"] == [
        {"type": "thinking", "thinking": "plan"},
        {"type": "text", "text": "ok"},
    ]


def test_same_model_keeps_redacted_thinking() -> None:
    message = assistant(ThinkingContent(thinking="", thinking_signature="opaque", redacted=True))
    assert transform_messages([user(), message], CLAUDE)[1] is message


def test_other_model_gets_thinking_as_plain_text_without_signature() -> None:
    # pi: "converts thinking blocks to plain text when source model differs"
    message = assistant(
        ThinkingContent(thinking="Let me think about this...", thinking_signature="reasoning_content"),
        TextContent(text="Hi there!"),
        source=GPT,
    )
    report = TransformReport()
    out = transform_messages([user(), message], CLAUDE, report=report)
    assert dumps(out)[1]["content"] == [
        {"type": "text", "text": "Let me think about this..."},
        {"type": "text", "text": "Hi there!"},
    ]
    assert out[1].content[0] == TextContent(text="Let me think about this...")
    assert out[1].content[0].__pydantic_fields_set__ == {"text"}
    assert report.thinking_as_text == 1
    assert report.signatures_dropped == 1
    assert "1 thinking block sent as text" in report.summary()


def test_other_model_with_drop_handoff_gets_no_thinking() -> None:
    message = assistant(ThinkingContent(thinking="secret plan", thinking_signature="s"), TextContent(text="ok"))
    report = TransformReport()
    out = transform_messages([user(), message], GPT, thinking_handoff="drop", report=report)
    assert dumps(out)[1]["content"] == [{"type": "text", "text": "ok"}]
    assert report.thinking_dropped == 1
    assert report.thinking_as_text == 0


def test_other_model_drops_redacted_and_empty_thinking() -> None:
    message = assistant(
        ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
        ThinkingContent(thinking="", thinking_signature="encrypted-reasoning"),
        ThinkingContent(thinking="   "),
        TextContent(text="answer"),
    )
    report = TransformReport()
    out = transform_messages([user(), message], GPT, report=report)
    assert dumps(out)[1]["content"] == [{"type": "text", "text": "answer"}]
    assert report.redacted_dropped == 1
    assert report.signatures_dropped == 1


def test_same_provider_and_api_but_another_model_id_is_another_model() -> None:
    message = assistant(ThinkingContent(thinking="plan", thinking_signature="sig"), model_id="claude-opus-4-5")
    out = transform_messages([user(), message], CLAUDE)
    assert dumps(out)[1]["content"] == [{"type": "text", "text": "plan"}]


# --- rule 2: text signatures and tool calls --------------------------------------------------


def test_other_model_text_loses_its_signature_and_stays_otherwise() -> None:
    plain = TextContent(text="plain")
    message = assistant(TextContent(text="signed", text_signature="msg_123"), plain, source=GPT)
    out = transform_messages([user(), message], CLAUDE)
    assert dumps(out)[1]["content"] == [{"type": "text", "text": "signed"}, {"type": "text", "text": "plain"}]
    assert out[1].content[1] is plain
    assert message.content[0].text_signature == "msg_123"


def test_other_model_tool_call_loses_thought_signature() -> None:
    # pi: "removes thoughtSignature from tool calls when migrating between models"
    gemini = Model(id="gemini-2.5-pro", api="google-generative-ai", provider="google")
    message = assistant(call("call_123", thought_signature="c2lnbmF0dXJl"), source=gemini, stop="toolUse")
    report = TransformReport()
    out = transform_messages([user(), message, result("call_123")], CLAUDE, id_normalizer_for(CLAUDE), report=report)
    block = out[1].content[0]
    assert isinstance(block, ToolCall)
    assert block.thought_signature is None
    assert "thoughtSignature" not in dumps(out)[1]["content"][0]
    assert report.signatures_dropped == 1
    assert message.content[0].thought_signature == "c2lnbmF0dXJl"


def test_same_model_tool_call_keeps_thought_signature_and_id() -> None:
    gemini = Model(id="gemini-2.5-pro", api="google-generative-ai", provider="google")
    message = assistant(call("a|b", thought_signature="sig"), source=gemini, stop="toolUse")
    out = transform_messages([user(), message, result("a|b")], gemini, id_normalizer_for(gemini))
    assert out[1] is message


def test_450_char_responses_id_going_to_anthropic_is_normalised_and_results_follow() -> None:
    item = "fc_" + "aB3+/=" * 74
    long_id = f"call_pAyhMq9X7a2bqaYLfOOh0bYF|{item}"
    assert len(long_id) >= 450
    responses = assistant(call(long_id), source=GPT, stop="toolUse")
    messages = [user(), responses, result(long_id), user("next")]
    report = TransformReport()
    out = transform_messages(messages, CLAUDE, id_normalizer_for(CLAUDE), report=report)
    new_id = out[1].content[0].id  # type: ignore[union-attr]
    assert ANTHROPIC_ID.fullmatch(new_id)
    assert new_id.startswith("call_pAyhMq9X7a2bqaYLfOOh0bYF")
    assert out[2].tool_call_id == new_id  # type: ignore[union-attr]
    assert report.tool_ids_rewritten == 1
    assert messages[2].tool_call_id == long_id


def test_ids_sharing_a_long_prefix_stay_distinct_after_normalisation() -> None:
    prefix = "call_" + "x" * 80
    ids = [prefix + "|fc_1", prefix + "|fc_2"]
    message = assistant(call(ids[0]), call(ids[1]), source=GPT, stop="toolUse")
    out = transform_messages([user(), message, result(ids[1], "two"), result(ids[0], "one")], CLAUDE,
                             id_normalizer_for(CLAUDE))
    new_ids = [b.id for b in out[1].content]  # type: ignore[union-attr]
    assert new_ids[0] != new_ids[1]
    assert [m.tool_call_id for m in out[2:]] == [new_ids[1], new_ids[0]]  # type: ignore[union-attr]
    assert [m.content[0].text for m in out[2:]] == ["two", "one"]  # type: ignore[union-attr]


# --- rule 3: error and aborted turns ---------------------------------------------------------


def test_errored_assistant_and_its_results_are_dropped() -> None:
    # pi: "filters tool results when assistant message is skipped due to error"
    errored = assistant(TextContent(text="Error occurred"), call("toolu_123", "test_tool"), stop="error")
    messages = [user("Call a tool"), errored, result("toolu_123", "Tool result", "test_tool"), user("Continue")]
    report = TransformReport()
    out = transform_messages(messages, CLAUDE, report=report)
    assert roles(out) == ["user", "user"]
    assert report.error_turns_skipped == 1
    assert report.orphan_results_dropped == 1


def test_aborted_assistant_with_several_calls_and_their_results_are_dropped() -> None:
    # pi: "drops toolResults referencing tool calls from aborted assistants"
    aborted = assistant(call("call_abort_1"), call("call_abort_2"), stop="aborted")
    messages = [user("run commands"), aborted, result("call_abort_1", "output1"),
                result("call_abort_2", "output2"), user("retry")]
    report = TransformReport()
    out = transform_messages(messages, CLAUDE, report=report)
    assert roles(out) == ["user", "user"]
    assert report.aborted_turns_skipped == 1


def test_aborted_turn_without_results_needs_no_synthetic_results() -> None:
    aborted = assistant(TextContent(text="partial"), call("c9"), stop="aborted")
    out = transform_messages([user(), aborted, user("again")], CLAUDE)
    assert roles(out) == ["user", "user"]


def test_mixed_success_and_error_turns() -> None:
    # pi: "handles mixed success and error tool calls in conversation"
    ok = assistant(call("toolu_success", "tool_success"), stop="toolUse")
    bad = assistant(call("toolu_error", "tool_error"), stop="error")
    messages = [user("First request"), ok, result("toolu_success", "Success result", "tool_success"),
                user("Second request"), bad, result("toolu_error", "Error result", "tool_error"),
                user("Third request")]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult", "user", "user"]
    assert out[2].tool_call_id == "toolu_success"  # type: ignore[union-attr]


def test_retry_after_an_error_keeps_only_the_successful_call() -> None:
    # pi: "handles mixed errored and valid assistants correctly"
    messages = [user("run a command"), assistant(call("call_err_1"), stop="error"),
                result("call_err_1", "synthetic"), assistant(call("call_ok_1"), stop="toolUse"),
                result("call_ok_1", "file1.txt")]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult"]
    assert out[2].tool_call_id == "call_ok_1"  # type: ignore[union-attr]


# --- rule 4: synthetic results ---------------------------------------------------------------


def test_orphaned_call_before_a_user_message_gets_a_synthetic_error_result() -> None:
    # pi: tool-call-without-result ("Never mind, just tell me what is 2+2?")
    calling = assistant(call("call_1", "calculate"), stop="toolUse", ts=50)
    messages = [user("Please calculate 25 * 18"), calling, user("Never mind, what is 2+2?")]
    report = TransformReport()
    out = transform_messages(messages, CLAUDE, report=report)
    assert roles(out) == ["user", "assistant", "toolResult", "user"]
    assert dumps(out)[2] == {
        "role": "toolResult", "toolCallId": "call_1", "toolName": "calculate",
        "content": [{"type": "text", "text": NO_RESULT_TEXT}], "isError": True, "timestamp": 50,
    }
    assert report.synthetic_results == 1


def test_orphaned_call_before_an_assistant_message_gets_a_synthetic_result() -> None:
    messages = [user(), assistant(call("c1"), stop="toolUse"), assistant(TextContent(text="moving on"))]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult", "assistant"]
    assert out[2].tool_call_id == "c1"  # type: ignore[union-attr]


def test_orphaned_call_before_a_skipped_aborted_turn_still_gets_its_result() -> None:
    messages = [user(), assistant(call("c1"), stop="toolUse"), assistant(call("c2"), stop="aborted")]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult"]
    assert out[2].content[0].text == NO_RESULT_TEXT  # type: ignore[union-attr]


def test_partially_answered_batch_gets_results_only_for_the_missing_calls() -> None:
    batch = assistant(call("a"), call("b"), call("c"), stop="toolUse")
    messages = [user(), batch, result("b", "B"), user("stop")]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult", "toolResult", "toolResult", "user"]
    assert [(m.tool_call_id, m.is_error) for m in out[2:5]] == [  # type: ignore[union-attr]
        ("b", False), ("a", True), ("c", True),
    ]


def test_trailing_orphaned_calls_get_synthetic_results_at_the_end() -> None:
    # pi-ai (0.82) closes the transcript too: a trailing unanswered call would be rejected.
    out = transform_messages([user(), assistant(call("x"), call("y"), stop="toolUse"), result("y")], CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult", "toolResult"]
    assert out[3].tool_call_id == "x"  # type: ignore[union-attr]


def test_synthetic_results_use_normalised_ids() -> None:
    long_id = "call_abc|fc_" + "z" * 300
    out = transform_messages([user(), assistant(call(long_id), source=GPT, stop="toolUse"), user("x")],
                             CLAUDE, id_normalizer_for(CLAUDE))
    assert out[2].tool_call_id == out[1].content[0].id  # type: ignore[union-attr]
    assert ANTHROPIC_ID.fullmatch(out[2].tool_call_id)  # type: ignore[union-attr]


def test_duplicate_result_for_an_answered_call_is_dropped() -> None:
    messages = [user(), assistant(call("c1"), stop="toolUse"), result("c1", "first"), result("c1", "again")]
    out = transform_messages(messages, CLAUDE)
    assert roles(out) == ["user", "assistant", "toolResult"]
    assert out[2].content[0].text == "first"  # type: ignore[union-attr]


# --- the whole: purity, identity, report -----------------------------------------------------


def test_unchanged_messages_are_returned_as_the_same_objects_and_input_is_untouched() -> None:
    messages = [user(), assistant(TextContent(text="a"), call("c1"), stop="toolUse"), result("c1")]
    before = dumps(messages)
    out = transform_messages(messages, CLAUDE, id_normalizer_for(CLAUDE))
    assert all(a is b for a, b in zip(out, messages, strict=True))
    assert out is not messages
    transform_messages(messages, TEXT_ONLY, id_normalizer_for(TEXT_ONLY))
    assert dumps(messages) == before


def test_no_normaliser_keeps_foreign_ids() -> None:
    long_id = "call_1|fc_" + "+" * 100
    out = transform_messages([user(), assistant(call(long_id), source=GPT, stop="toolUse"), result(long_id)],
                             CLAUDE)
    assert out[1].content[0].id == long_id  # type: ignore[union-attr]
    assert out[2].tool_call_id == long_id  # type: ignore[union-attr]


def test_report_summary_and_emptiness() -> None:
    report = TransformReport()
    assert report.is_empty
    assert report.summary() == "nothing lost"
    report.thinking_as_text = 12
    report.signatures_dropped = 3
    report.images_replaced = 1
    assert not report.is_empty
    assert report.summary() == "12 thinking blocks sent as text, 3 signatures dropped, 1 image replaced"


@pytest.mark.parametrize("handoff", ["text", "drop"])
def test_transform_is_deterministic(handoff: str) -> None:
    messages = [user(), assistant(ThinkingContent(thinking="t", thinking_signature="s"),
                                  call("call_1|fc_+/"), source=GPT, stop="toolUse"), user()]
    first = transform_messages(messages, CLAUDE, id_normalizer_for(CLAUDE), thinking_handoff=handoff)  # type: ignore[arg-type]
    second = transform_messages(messages, CLAUDE, id_normalizer_for(CLAUDE), thinking_handoff=handoff)  # type: ignore[arg-type]
    assert dumps(first) == dumps(second)

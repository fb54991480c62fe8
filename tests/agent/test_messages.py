"""AgentMessage types, the registry, pi round trips and convert_to_llm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from baton.agent import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    AgentMessage,
    AppMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    UnknownMessageRoleError,
    agent_message_from_dict,
    agent_message_to_dict,
    convert_to_llm,
    register_message_type,
)
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)


def _session_messages(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message":
            out.append(entry["message"])
    return out


def test_bash_execution_lines_of_a_pi_session_round_trip(pi_sessions: Path) -> None:
    raw = [m for m in _session_messages(pi_sessions / "before-compaction.jsonl") if m["role"] == "bashExecution"]
    assert len(raw) == 3
    for data in raw:
        message = agent_message_from_dict(data)
        assert isinstance(message, BashExecutionMessage)
        assert message.command in ("ls", "find .")
        assert agent_message_to_dict(message) == data
    truncated = agent_message_from_dict(raw[2])
    assert isinstance(truncated, BashExecutionMessage)
    assert truncated.truncated and truncated.full_output_path and truncated.full_output_path.endswith(".log")


def test_every_message_of_a_pi_session_round_trips(pi_sessions: Path) -> None:
    raw = _session_messages(pi_sessions / "before-compaction.jsonl")
    for data in raw:
        assert agent_message_to_dict(agent_message_from_dict(data)) == data


def test_bash_execution_to_text_matches_pi() -> None:
    base: dict[str, Any] = {"role": "bashExecution", "command": "make", "timestamp": 5}
    ok = BashExecutionMessage.model_validate({**base, "output": "built", "exitCode": 0, "cancelled": False,
                                              "truncated": False})
    assert _llm_text(ok) == "Ran `make`\n```\nbuilt\n```"
    failed = BashExecutionMessage.model_validate({**base, "output": "", "exitCode": 2, "cancelled": False,
                                                  "truncated": True, "fullOutputPath": "/tmp/full.log"})
    assert _llm_text(failed) == ("Ran `make`\n(no output)\n\nCommand exited with code 2"
                                 "\n\n[Output truncated. Full output: /tmp/full.log]")
    cancelled = BashExecutionMessage(command="sleep 9", output="x", exit_code=None, cancelled=True)
    assert _llm_text(cancelled) == "Ran `sleep 9`\n```\nx\n```\n\n(command cancelled)"
    assert convert_to_llm([BashExecutionMessage(command="ls", exclude_from_context=True)]) == []


def test_explicit_null_exit_code_survives() -> None:
    data = {"role": "bashExecution", "command": "x", "output": "", "exitCode": None, "cancelled": True,
            "truncated": False, "timestamp": 1}
    assert agent_message_to_dict(agent_message_from_dict(data)) == data


def _llm_text(message: Any) -> str:
    (converted,) = convert_to_llm([message])
    assert isinstance(converted, UserMessage)
    assert converted.timestamp == message.timestamp
    assert isinstance(converted.content, list)
    return "".join(b.text for b in converted.content if isinstance(b, TextContent))


def test_convert_to_llm_rules_for_every_type() -> None:
    user = UserMessage(content="hi", timestamp=1)
    assistant = AssistantMessage(api="a", provider="p", model="m", content=[TextContent(text="yo")])
    result = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="r")])
    custom_text = CustomMessage(custom_type="notice", content="remember this", display=False, timestamp=2)
    image = ImageContent(data="aGk=", mime_type="image/png")
    custom_blocks = CustomMessage(custom_type="notice", content=[TextContent(text="see"), image], display=True)
    compaction = CompactionSummaryMessage(summary="we did X", tokens_before=1000, timestamp=3)
    branch = BranchSummaryMessage(summary="tried Y", from_id="abc", timestamp=4)
    bash = BashExecutionMessage(command="pwd", output="/w", exit_code=0)

    class UiOnly(AppMessage):
        role: Literal["uiOnly"] = "uiOnly"

    history: list[AgentMessage] = [user, assistant, result, custom_text, custom_blocks, compaction, branch, bash,
                                   UiOnly()]
    before = [m.model_dump() for m in history]
    out = convert_to_llm(history)
    assert out[0] is user and out[1] is assistant and out[2] is result  # LLM messages pass as is
    assert [m.role for m in out] == ["user"] * 1 + ["assistant", "toolResult"] + ["user"] * 5
    assert out[3].content == [TextContent(text="remember this")]
    assert out[4].content == [TextContent(text="see"), image]
    assert _llm_text(compaction) == COMPACTION_SUMMARY_PREFIX + "we did X" + "\n</summary>"
    assert COMPACTION_SUMMARY_PREFIX.startswith(
        "The conversation history before this point was compacted into the following summary:")
    assert _llm_text(branch) == BRANCH_SUMMARY_PREFIX + "tried Y" + "</summary>"
    assert _llm_text(bash).startswith("Ran `pwd`")
    assert len(out) == 8  # the UI-only message was dropped
    assert [m.model_dump() for m in history] == before  # nothing mutated


def test_unknown_role_is_refused_clearly() -> None:
    with pytest.raises(UnknownMessageRoleError, match=r"'hologram'.*known roles: .*bashExecution"):
        agent_message_from_dict({"role": "hologram", "timestamp": 1})
    with pytest.raises(ValidationError):
        agent_message_from_dict({"role": "bashExecution"})  # no command
    with pytest.raises(TypeError):
        agent_message_from_dict(["not", "a", "dict"])  # type: ignore[arg-type]


def test_register_message_type_round_trips_and_converts() -> None:
    @register_message_type
    class Reminder(AppMessage):
        role: Literal["testReminder"] = "testReminder"
        note: str

        def to_llm(self) -> UserMessage:
            return UserMessage(content=[TextContent(text=f"Reminder: {self.note}")], timestamp=self.timestamp)

    data = {"role": "testReminder", "note": "run tests", "timestamp": 9, "extraKey": True}
    message = agent_message_from_dict(data)
    assert isinstance(message, Reminder)
    assert agent_message_to_dict(message) == data
    assert _llm_text(message) == "Reminder: run tests"

    with pytest.raises(ValueError):
        class Bad(AppMessage):
            role: Literal["user"] = "user"

        register_message_type(Bad)


def test_custom_message_json_shape() -> None:
    message = CustomMessage(custom_type="hook", content="x", display=True, details={"a": 1}, timestamp=7)
    assert agent_message_to_dict(message) == {
        "role": "custom", "customType": "hook", "content": "x", "display": True, "details": {"a": 1},
        "timestamp": 7,
    }
    summary = CompactionSummaryMessage(summary="s", tokens_before=12, timestamp=1)
    assert agent_message_to_dict(summary) == {"role": "compactionSummary", "summary": "s",
                                              "tokensBefore": 12, "timestamp": 1}
    branch = BranchSummaryMessage(summary="b", from_id="e1", timestamp=1)
    assert agent_message_to_dict(branch) == {"role": "branchSummary", "summary": "b", "fromId": "e1",
                                             "timestamp": 1}


def test_convert_to_llm_of_model_messages_only_is_a_new_list_of_the_same_messages() -> None:
    class Tagged(UserMessage):
        pass

    history: list[Any] = [UserMessage(content="a"), ToolResultMessage(tool_call_id="c", tool_name="t"),
                          Tagged(content="sub")]
    for messages in (history[:2], history):
        out = convert_to_llm(messages)
        assert out is not messages and out == messages
        assert all(a is b for a, b in zip(out, messages, strict=True))
    with_app = [*history, BashExecutionMessage(command="ls", exclude_from_context=True)]
    assert convert_to_llm(with_app) == history

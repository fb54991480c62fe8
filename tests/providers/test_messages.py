"""The message model against real pi data: every LLM message line round-trips unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from baton.providers import AssistantMessage, Message, ToolResultMessage, UserMessage

ADAPTER: TypeAdapter[Any] = TypeAdapter(Message)
LLM_ROLES = {"user", "assistant", "toolResult"}


def _dump(message: Any) -> dict[str, Any]:
    return message.model_dump(mode="json", by_alias=True, exclude_none=True)


def _message_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message":
            out.append(entry["message"])
    return out


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_every_llm_message_of_a_pi_session_round_trips(pi_sessions: Path, name: str) -> None:
    raw = _message_lines(pi_sessions / name)
    llm = [m for m in raw if m["role"] in LLM_ROLES]
    assert len(llm) > 800
    for data in llm:
        message = ADAPTER.validate_python(data)
        assert message.role == data["role"]
        assert _dump(message) == data


def test_round_trip_keeps_stray_keys_and_absent_optionals(pi_sessions: Path) -> None:
    raw = _message_lines(pi_sessions / "large-session.jsonl")
    with_partial = [
        m for m in raw
        if m["role"] == "assistant" and any("partialJson" in b for b in m["content"])
    ]
    assert with_partial, "fixture is expected to carry pi's stray partialJson key"
    message = ADAPTER.validate_python(with_partial[0])
    dumped = _dump(message)
    assert any("partialJson" in b for b in dumped["content"])
    assert dumped == with_partial[0]
    without_total = {
        "role": "assistant", "content": [], "api": "anthropic-messages", "provider": "anthropic",
        "model": "m", "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 1,
    }
    assert "totalTokens" not in _dump(ADAPTER.validate_python(without_total))["usage"]


def test_thinking_code_fixture_round_trips(pi_sessions: Path) -> None:
    data = json.loads((pi_sessions / "assistant-message-with-thinking-code.json").read_text("utf-8"))
    message = ADAPTER.validate_python(data)
    assert isinstance(message, AssistantMessage)
    assert message.content[0].type == "thinking"
    assert "```typescript" in message.content[0].thinking
    assert _dump(message) == data


def test_each_role_validates_to_its_class() -> None:
    user = ADAPTER.validate_python({"role": "user", "content": "hi", "timestamp": 1})
    result = ADAPTER.validate_python(
        {"role": "toolResult", "toolCallId": "c", "toolName": "t",
         "content": [{"type": "text", "text": "ok"}], "isError": False, "timestamp": 2}
    )
    assert isinstance(user, UserMessage)
    assert isinstance(result, ToolResultMessage)
    assert result.tool_call_id == "c"


def test_unknown_role_is_refused_naming_the_tag() -> None:
    with pytest.raises(ValidationError) as info:
        ADAPTER.validate_python({"role": "bashExecution", "command": "ls", "timestamp": 1})
    text = str(info.value)
    assert "bashExecution" in text
    assert "role" in text


def test_unknown_block_type_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        ADAPTER.validate_python(
            {"role": "user", "content": [{"type": "video", "url": "x"}], "timestamp": 1}
        )
    assert "video" in str(info.value)

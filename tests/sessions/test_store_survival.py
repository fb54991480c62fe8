"""The writer survives anything a message may hold, and a session file read back is bounded
(issue 23): whatever is appended, the file is strict JSONL that loads and resumes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.agent.messages import CustomMessage
from baton.providers.json_depth import MAX_LINE_DEPTH, TOO_DEEP_MARKER
from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.sessions import SessionStore


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def strict_lines(path: Path) -> list[dict[str, Any]]:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the session file")

    text = path.read_text(encoding="utf-8")
    return [json.loads(line, parse_constant=refuse) for line in text.split("\n") if line]  # LF only


def test_a_message_pydantic_cannot_serialise_is_saved_cut_and_the_file_resumes(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    store.append_message(UserMessage(content=[TextContent(text="go")]))
    call = ToolCall(id="c1", name="mcp__x__y", arguments={"a": nested(300)})
    store.append_message(AssistantMessage(api="x", provider="p", model="m", content=[call], stop_reason="toolUse"))
    store.append_message(ToolResultMessage(tool_call_id="c1", tool_name="mcp__x__y", content=[TextContent(text="r")],
                                           details={"structured": nested(400), "score": math.nan}))
    store.append_message(UserMessage(content=[TextContent(text="after")]))
    assert store.path is not None
    store.close()
    lines = strict_lines(store.path)
    assert [line["type"] for line in lines] == ["session", "message", "message", "message", "message"]
    assert TOO_DEEP_MARKER in json.dumps(lines[2]) and TOO_DEEP_MARKER in json.dumps(lines[3])
    assert lines[3]["message"]["details"]["score"] is None
    loaded = SessionStore.open(store.path)
    assert loaded.warnings == []
    assert [m.role for m in loaded.build_context().messages] == ["user", "assistant", "toolResult", "user"]
    loaded.append_message(UserMessage(content=[TextContent(text="resumed")]))
    loaded.close()
    assert strict_lines(store.path)[-1]["message"]["content"][0]["text"] == "resumed"


def test_a_line_nested_past_the_cap_is_skipped_with_a_warning(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    store.append_message(UserMessage(content=[TextContent(text="one")]))
    assert store.path is not None
    store.close()
    deep = '{"type":"custom","id":"deep0001","parentId":null,"data":' + "[" * MAX_LINE_DEPTH + "]" * MAX_LINE_DEPTH
    with store.path.open("a") as handle:
        handle.write(deep + "}\n")
        handle.write("[" * 300_000 + "\n")
    loaded = SessionStore.open(store.path)
    assert any(f"nested more than {MAX_LINE_DEPTH} levels deep" in w for w in loaded.warnings)
    assert [m.role for m in loaded.build_context().messages] == ["user"]
    loaded.append_message(UserMessage(content=[TextContent(text="two")]))
    loaded.close()


json_leaves = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
               | st.sampled_from([math.nan, math.inf, -math.inf]))
json_like = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(json_like, st.integers(0, 400), json_like)
def test_whatever_details_a_message_holds_the_file_stays_valid_and_loads(
    tmp_path_factory: Any, details: Any, depth: int, data: Any
) -> None:
    directory = tmp_path_factory.mktemp("store")
    store = SessionStore.create(directory / "s", directory)
    store.append_message(UserMessage(content=[TextContent(text="go")]))
    store.append_message(ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="r")],
                                           details=nested(depth, details)))
    store.append_message(CustomMessage(custom_type="note", content="x", details=data))
    store.append_custom("ext", nested(depth, data))
    assert store.path is not None
    store.close()
    assert len(strict_lines(store.path)) == 5
    loaded = SessionStore.load(store.path)
    assert loaded.warnings == [] and len(loaded.entries) == 4

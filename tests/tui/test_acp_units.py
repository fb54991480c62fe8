"""The ACP mapping pieces on their own: tool kinds/titles/locations/content, prompt blocks and
the replay of a stored transcript."""

from __future__ import annotations

import pytest

from baton.agent.tool import AgentToolResult
from baton.providers.messages import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from baton.tui.modes.acp.prompt import PromptError, prompt_from_blocks
from baton.tui.modes.acp.tool_info import result_content, terminal_text, tool_kind, tool_locations, tool_title
from baton.tui.modes.acp.updates import replay_updates

CWD = "/repo"


@pytest.mark.parametrize(("name", "kind"), [
    ("read", "read"), ("ls", "read"), ("edit", "edit"), ("write", "edit"), ("bash", "execute"),
    ("grep", "search"), ("find", "search"), ("mcp__web__fetch_page", "fetch"), ("mcp__db__query", "other"),
])
def test_tool_kinds(name: str, kind: str) -> None:
    assert tool_kind(name) == kind


def test_titles_and_locations() -> None:
    assert tool_title("read", {"path": "src/a.py", "offset": 10, "limit": 5}, CWD) == "Read src/a.py (lines 10-14)"
    assert tool_locations("read", {"path": "src/a.py", "offset": 10}, CWD) == [{"path": "/repo/src/a.py", "line": 10}]
    assert tool_title("bash", {"command": "npm test\necho done"}, CWD) == "npm test …"
    assert tool_title("grep", {"pattern": "TODO", "path": "src"}, CWD) == "grep TODO in src"
    assert tool_title("mcp__github__create_issue", {}, CWD) == "github › create_issue"
    assert tool_locations("edit", {"path": "../x.txt"}, CWD, {"firstChangedLine": 7}) == [{"path": "/x.txt", "line": 7}]
    assert tool_locations("bash", {"command": "ls"}, CWD) == []
    assert tool_title("read", {}, CWD) == "read"  # arguments still streaming


def test_result_content_diff_for_edits_console_for_bash_text_otherwise() -> None:
    ok = AgentToolResult([TextContent(text="Successfully replaced 2 block(s)")], {"firstChangedLine": 3})
    edit_args = {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}], "oldText": "c", "newText": "d"}
    assert result_content("edit", edit_args, CWD, ok, False) == [
        {"type": "diff", "path": "/repo/a.py", "oldText": "a", "newText": "b"},
        {"type": "diff", "path": "/repo/a.py", "oldText": "c", "newText": "d"},
    ]
    write = result_content("write", {"path": "n.txt", "content": "new\n"}, CWD, ok, False, "old\n")
    assert write == [{"type": "diff", "path": "/repo/n.txt", "oldText": "old\n", "newText": "new\n"}]
    failed = AgentToolResult([TextContent(text="oldText not found")], None, is_error=True)
    assert result_content("edit", edit_args, CWD, failed, True)[0]["content"]["text"] == "oldText not found"
    bash = AgentToolResult([TextContent(text="boom")], {"exitCode": 2}, is_error=True)
    text = result_content("bash", {"command": "make"}, CWD, bash, True)[0]["content"]["text"]
    assert text == "```console\n$ make\nboom\n[exit code 2]\n```"
    assert terminal_text("cat f", "```\ninside\n```").startswith("````console")  # fences cannot be closed early


def test_prompt_blocks() -> None:
    text, images = prompt_from_blocks([
        {"type": "text", "text": "look at"},
        {"type": "resource", "resource": {"uri": "file:///repo/a%20b.py", "text": "print(1)"}},
        {"type": "resource_link", "uri": "file:///repo/c.py", "name": "c.py"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
    ])
    assert text == 'look at\n<file path="/repo/a b.py">\nprint(1)\n</file>\n@/repo/c.py'
    assert [(i.mime_type, i.data) for i in images] == [("image/png", "aGk=")]
    with pytest.raises(PromptError):
        prompt_from_blocks([{"type": "audio", "data": "x", "mimeType": "audio/wav"}])
    with pytest.raises(PromptError):
        prompt_from_blocks([{"type": "image", "data": ""}])


def test_replay_pairs_calls_with_results_and_marks_missing_ones() -> None:
    call = ToolCall(id="c1", name="bash", arguments={"command": "ls"})
    lost = ToolCall(id="c2", name="read", arguments={"path": "x"})
    messages = [
        UserMessage(content="hi"),
        AssistantMessage(content=[TextContent(text="Listing."), call, lost], api="a", provider="p", model="m"),
        ToolResultMessage(tool_call_id="c1", tool_name="bash", content=[TextContent(text="a.txt")], is_error=False),
    ]
    updates = replay_updates(messages, CWD)
    assert [u["sessionUpdate"] for u in updates] == ["user_message_chunk", "agent_message_chunk", "tool_call",
                                                     "tool_call"]
    assert updates[2]["status"] == "completed" and "a.txt" in updates[2]["content"][0]["content"]["text"]
    assert updates[3]["status"] == "failed"

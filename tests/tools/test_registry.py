"""Tool sets and lookup by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.tools import TOOL_NAMES, all_tools, default_tools, read_only_tools, tools_by_name
from baton.tools.read import ReadTool


def test_sets(tmp_path: Path) -> None:
    assert [t.name for t in default_tools(str(tmp_path))] == ["read", "bash", "edit", "write", "web_fetch", "task",
                                                               "todo_write"]
    assert [t.name for t in read_only_tools(str(tmp_path))] == ["read", "grep", "find", "ls", "web_fetch", "web_search"]
    assert [t.name for t in all_tools(str(tmp_path))] == list(TOOL_NAMES)


def test_by_name_keeps_order_and_binds_cwd(tmp_path: Path) -> None:
    tools = tools_by_name(["ls", "read", "ls"], str(tmp_path), images=False)
    assert [t.name for t in tools] == ["ls", "read"]
    read = tools[1]
    assert isinstance(read, ReadTool) and read.images is False and read.cwd == str(tmp_path)


def test_unknown_names_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Unknown tools: cat, rm\. Valid tools: read, bash, edit, write, grep"):
        tools_by_name(["read", "cat", "rm"], str(tmp_path))


def test_schemas_are_plain(tmp_path: Path) -> None:
    for tool in all_tools(str(tmp_path)):
        schema = tool.schema().parameters
        text = repr(schema)
        assert "anyOf" not in text and "$ref" not in text and "title" not in text
        assert schema["type"] == "object"
    edit = next(t for t in all_tools(str(tmp_path)) if t.name == "edit").schema().parameters
    assert set(edit["properties"]) == {"path", "oldText", "newText", "edits"}
    assert edit["properties"]["edits"]["items"]["required"] == ["oldText", "newText"]


def test_schema_is_a_fresh_copy_equal_to_the_generated_one(tmp_path: Path) -> None:
    for tool in all_tools(str(tmp_path)):
        first = tool.schema().parameters
        expected = tool.parameters.model_json_schema(by_alias=True)
        expected.pop("title", None)
        for prop in expected.get("properties", {}).values():
            prop.pop("title", None)
        assert first == expected
        first["properties"].clear()  # a caller changing what it got must not change the next request
        assert tool.schema().parameters == expected


def test_schema_is_the_tool_validation_would_build(tmp_path: Path) -> None:
    from baton.providers.messages import Tool

    for tool in all_tools(str(tmp_path)):
        sent = tool.schema()
        validated = Tool(name=tool.name, description=tool.schema_description(), parameters=sent.parameters)
        assert sent == validated and sent.model_fields_set == validated.model_fields_set
        assert sent.to_json_dict() == validated.to_json_dict()

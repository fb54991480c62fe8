"""MCP configuration: files merged in order, ${VAR} expansion, bad entries reported, tool names,
result mapping, and project servers waiting for trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, faux_model
from baton.providers.messages import ImageContent, TextContent
from baton.sessions import CodingSession, SessionOptions, load_settings
from baton.tools.mcp.config import configs_from_acp, expand_vars, merge_servers, parse_servers, read_config_file
from baton.tools.mcp.results import to_tool_result
from baton.tools.mcp.tool import tool_name


def test_expansion_defaults_and_missing() -> None:
    env = {"TOKEN": "abc", "EMPTY": ""}
    missing: list[str] = []
    assert expand_vars("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand_vars("${NOPE:-fallback}/x", env) == "fallback/x"
    assert expand_vars("${EMPTY:-used}", env) == "used"
    assert expand_vars("[${NOPE}]", env, missing) == "[]"
    assert expand_vars("$TOKEN and ${", env) == "$TOKEN and ${"
    assert missing == ["NOPE"]


def test_servers_parsed_with_expansion_and_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_T_KEY", "k1")
    monkeypatch.delenv("MCP_T_UNSET", raising=False)
    data = {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server", "${MCP_T_KEY}"], "env": {"KEY": "${MCP_T_KEY}"}},
        "web": {"type": "http", "url": "https://h/${MCP_T_PATH:-mcp}", "headers": {"X": "${MCP_T_UNSET}"}},
        "implicit": {"url": "http://127.0.0.1:1/mcp"},
        "bad name!": {"command": "x"},
        "nocmd": {"args": []},
        "sse": {"type": "sse", "url": "http://x"},
        "off": {"command": "x", "disabled": True},
        "badenv": {"command": "x", "env": ["A=1"]},
    }}
    problems: list[str] = []
    servers = {s.name: s for s in parse_servers(data, "global", "mcp.json", problems)}
    assert set(servers) == {"files", "web", "implicit"}
    assert servers["files"].args == ["-y", "server", "k1"] and servers["files"].env == {"KEY": "k1"}
    assert servers["web"].url == "https://h/mcp" and servers["web"].headers == {"X": ""}
    assert servers["implicit"].transport == "http"
    joined = "\n".join(problems)
    for expected in ("'bad name!'", "'nocmd': needs a 'command'", "transport 'sse' is not supported",
                     "'badenv': 'env' must map", "${MCP_T_UNSET} is not set"):
        assert expected in joined, expected
    assert len(problems) == 5


def test_files_merge_later_wins_and_bad_json_is_reported(tmp_path: Path) -> None:
    first, second, broken = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    first.write_text(json.dumps({"mcpServers": {"x": {"command": "one"}, "y": {"command": "keep"}}}))
    second.write_text(json.dumps({"mcpServers": {"x": {"command": "two"}}}))
    broken.write_text("{not json")
    problems: list[str] = []
    merged = merge_servers(*(read_config_file(p, "global", problems) for p in (first, second, broken)))
    assert [(s.name, s.command) for s in merged] == [("x", "two"), ("y", "keep")]
    assert len(problems) == 1 and "not valid JSON" in problems[0]
    assert read_config_file(tmp_path / "missing.json", "global", problems) == []


def test_acp_server_shapes() -> None:
    problems: list[str] = []
    configs = configs_from_acp([
        {"name": "fs", "command": "/bin/fs", "args": ["--root", "/"], "env": [{"name": "A", "value": "1"}]},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "H", "value": "v"}]},
        {"command": "nameless"},
    ], problems)
    assert [(c.name, c.transport, c.source) for c in configs] == [("fs", "stdio", "client"), ("web", "http", "client")]
    assert configs[0].env == {"A": "1"} and configs[1].headers == {"H": "v"}
    assert len(problems) == 1


def test_tool_names_are_safe_for_every_provider() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my.server", "do it/now") == "mcp__my_server__do_it_now"
    long_a, long_b = tool_name("s", "x" * 80 + "a"), tool_name("s", "x" * 80 + "b")
    assert len(long_a) == 64 and long_a != long_b


def test_result_mapping_shapes() -> None:
    result = to_tool_result({
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
            {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAAAA", "mimeType": "x/y"}},
        ],
        "structuredContent": {"ok": True}, "_meta": {"trace": "t1"}, "isError": False,
    }, "srv", "tool")
    text, image, audio, blob = result.content
    assert isinstance(text, TextContent) and text.text == "hello"
    assert isinstance(image, ImageContent) and image.mime_type == "image/jpeg"
    assert isinstance(audio, TextContent) and '"type": "audio"' in audio.text
    assert isinstance(blob, TextContent) and blob.text.startswith("[Resource: file:///b.bin] (x/y, about 6 bytes")
    assert result.details == {"server": "srv", "tool": "tool", "structuredContent": {"ok": True},
                              "meta": {"trace": "t1"}}
    empty = to_tool_result({"content": [], "isError": True}, "s", "t")
    assert empty.is_error and empty.content[0].text == "(no output)"  # type: ignore[union-attr]


async def test_project_mcp_json_waits_for_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("BATON_HOME", str(home))
    cwd = tmp_path / "proj"
    cwd.mkdir()
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": "/nonexistent/server"}}}))
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "/nonexistent/other"}}}))

    async def open_session(trust: bool | None) -> CodingSession:
        options: dict[str, Any] = {"cwd": cwd, "model": faux_model("m", api="faux-mcp"), "tools": [],
                                   "session": "none", "context_files": False, "start_mcp": False,
                                   "settings": load_settings(project_dir=cwd), "trust_project": trust}
        return await CodingSession.open(SessionOptions(**options))

    with FauxProvider("faux-mcp"):
        session = await open_session(None)
        try:
            assert [s.name for s in session.mcp.statuses()] == ["mine"]
            assert session.extensions.pending_trust is not None
            assert ".mcp.json (1 server: local)" in session.extensions.pending_trust.describe()
            session.extensions.trust_project()
            assert [s.name for s in session.mcp.statuses()] == ["mine", "local"]
        finally:
            await session.close()
        session = await open_session(None)  # remembered
        try:
            assert session.extensions.pending_trust is None
            assert {s.name for s in session.mcp.statuses()} == {"mine", "local"}
        finally:
            await session.close()
        session = await open_session(False)
        try:
            assert [s.name for s in session.mcp.statuses()] == ["mine"]
        finally:
            await session.close()

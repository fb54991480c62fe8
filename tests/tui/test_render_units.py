"""Unit tests: formatters, tool rendering, command parsing, file listing and completion."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from baton.tools import TOOL_MODULES
from baton.tui.app.commands import COMMANDS, match_models, parse_command
from baton.tui.app.completer import Completer, FileIndex
from baton.tui.app.files import fuzzy_filter, fuzzy_score, list_project_files
from baton.tui.app.render import format_bytes, format_cost, format_duration, format_tokens, one_line, short_path
from baton.tui.app.widgets.tool_render import PREVIEW_LINES, args_body, header, result_body


def test_formatters() -> None:
    assert format_tokens(950) == "950"
    assert format_tokens(12_345) == "12k"
    assert format_tokens(1_250) == "1.2k"
    assert format_tokens(2_500_000) == "2.5M"
    assert format_cost(0) == "$0.00"
    assert format_cost(0.0042) == "$0.0042"
    assert format_cost(1.5) == "$1.50"
    assert format_duration(0.042) == "42ms"
    assert format_duration(4.25) == "4.2s"
    assert format_duration(185) == "3m05s"
    assert format_bytes(12_700) == "12.7 kB"
    assert one_line("first\nsecond", 80) == "first"
    assert one_line("x" * 10, 5) == "xxxx…"


def test_short_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert short_path(tmp_path / "a" / "b") == "~/a/b"
    assert short_path(tmp_path / "a" / "b", tmp_path / "a") == "b"
    assert short_path("/elsewhere/x") == "/elsewhere/x"


def test_tool_headers() -> None:
    assert header("bash", {"command": "ls -la\necho hi"}).plain == "bash $ ls -la  (+1 lines)"
    assert header("read", {"path": "src/app.py", "offset": 10, "limit": 40}).plain == "read src/app.py:10-49"
    assert header("write", {"path": "notes.md", "content": "é" * 600}).plain == "write notes.md  (1.2 kB)"
    assert header("grep", {"pattern": "TODO", "path": "src", "glob": "*.py"}).plain == "grep TODO in src (*.py)"
    assert header("mystery", {"x": 1}).plain == 'mystery {"x": 1}'


def test_a_made_up_tool_renders_by_its_traits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TOOL_MODULES, "stamp", ("tests.sessions.made_up_tools", "StampTool"))
    monkeypatch.setitem(TOOL_MODULES, "peek", ("tests.sessions.made_up_tools", "PeekTool"))
    # the header shows its path argument (whatever it is called), then the rest
    assert header("stamp", {"file": "notes.txt", "text": "hi"}).plain == 'stamp notes.txt {"text": "hi"}'
    assert header("peek", {"target": "a.txt"}).plain == "peek a.txt"
    # its result is drawn by the details view it names: the edit tool's diff
    details = {"file": "notes.txt", "diff": "+1 hi"}
    assert result_body("stamp", {}, "Stamped notes.txt", details, is_error=False).full == \
        result_body("edit", {}, "ok", details, is_error=False).full
    assert result_body("peek", {}, "line one", None, is_error=False).full.plain == "line one"


def test_edit_args_show_the_diff_forming() -> None:
    body = args_body("edit", {"path": "a.py", "oldText": "old line\n", "newText": "new 1\nnew"})
    assert body is not None
    assert body.plain.split("\n") == ["- old line", "+ new 1", "+ new"]
    multi = args_body("edit", {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"},
                                                        {"oldText": "c", "newText": "d"}]})
    assert multi is not None and multi.plain.split("\n") == ["- a", "+ b", "  ⋯", "- c", "+ d"]
    assert args_body("bash", {"command": "ls"}) is None


def test_results_collapse_past_a_few_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(30))
    rendered = result_body("grep", {}, text, None, is_error=False)
    assert rendered.hidden == 30 - PREVIEW_LINES
    assert rendered.preview.plain.startswith("line 0")
    assert "line 29" in rendered.full.plain and "line 29" not in rendered.preview.plain
    bash = result_body("bash", {}, text, {"exitCode": 0}, is_error=False, duration=1.25)
    assert bash.tail and "line 29" in bash.preview.plain and "line 0\n" not in bash.preview.plain
    assert bash.preview.plain.endswith("exit 0 · 1.2s")


def test_edit_result_diff_styles_lines() -> None:
    diff = "  1 keep\n- 2 old\n+ 2 new\n   ..."
    rendered = result_body("edit", {}, "ok", {"diff": diff}, is_error=False)
    assert rendered.full.plain == diff
    styles = {str(span.style) for span in rendered.full.spans}
    assert any("success" in s for s in styles) and any("error" in s for s in styles)


def test_read_result_is_a_summary_until_expanded() -> None:
    text = "a\nb\nc\n[Showing lines 1-3 of 10. Use offset=4 to continue.]"
    rendered = result_body("read", {"path": "x"}, text, None, is_error=False)
    assert rendered.preview.plain.startswith("3 lines  [Showing lines 1-3 of 10.")
    assert "b\nc" in rendered.full.plain


def test_error_result_is_red_text() -> None:
    rendered = result_body("edit", {}, "Could not find the text", None, is_error=True)
    assert rendered.preview.plain == "Could not find the text"
    assert any("error" in str(span.style) for span in rendered.preview.spans)


def test_failed_shell_command_without_output_says_how_it_ended() -> None:
    exited = result_body("bash", {}, "", {"exitCode": 1}, is_error=True, duration=0.004)
    assert exited.preview.plain == "exit 1 · 4ms"
    aborted = result_body("bash", {}, "", {"aborted": True}, is_error=True, duration=1.5)
    assert aborted.preview.plain == "aborted · 1.5s"
    assert result_body("bash", {}, "", None, is_error=True).preview.plain == "error"


def test_parse_command() -> None:
    assert parse_command("/model  gpt") == parse_command("/model gpt")
    parsed = parse_command("/compact keep the API notes")
    assert parsed is not None and (parsed.name, parsed.args) == ("compact", "keep the API notes")
    assert parse_command("/etc/hosts is broken") is None
    assert parse_command("hello /model") is None
    assert parse_command("/QUIT") is not None and parse_command("/QUIT").name == "quit"  # type: ignore[union-attr]


def test_every_command_in_the_issue_exists() -> None:
    wanted = {"model", "thinking", "compact", "new", "resume", "fork", "tree", "session", "export", "copy",
              "name", "hotkeys", "quit"}
    assert wanted <= set(COMMANDS)


def test_match_models() -> None:
    from baton.providers.faux import faux_model

    models = [faux_model("claude-sonnet", provider="anthropic"), faux_model("gpt-5", provider="openai"),
              faux_model("gpt-5-mini", provider="openai")]
    assert [m.id for m in match_models(models, "openai/gpt-5")] == ["gpt-5"]
    assert [m.id for m in match_models(models, "sonnet")] == ["claude-sonnet"]
    assert {m.id for m in match_models(models, "gpt")} == {"gpt-5", "gpt-5-mini"}
    assert match_models(models, "zzz") == []


def test_fuzzy_prefers_basename_and_prefix() -> None:
    files = ["src/tui/app/baton_app.py", "src/apply.py", "docs/application-notes.md", "tests/test_app.py"]
    assert fuzzy_filter("app", files)[0] in ("src/tui/app/baton_app.py", "src/apply.py")
    assert fuzzy_filter("tapp", files)[0] == "tests/test_app.py"
    assert fuzzy_score("xyz", "src/app.py") is None


def _write(root: Path, rel: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x", encoding="utf-8")


@pytest.mark.parametrize("use_git", [False, True])
def test_project_files_respect_gitignore(tmp_path: Path, use_git: bool) -> None:
    for rel in ("src/app.py", "src/build/out.js", "node_modules/lib/index.js", "notes.log", "keep.log",
                "docs/guide.md", "docs/.gitignore"):
        _write(tmp_path, rel)
    (tmp_path / ".gitignore").write_text("node_modules/\n*.log\n!keep.log\nbuild/\n", encoding="utf-8")
    (tmp_path / "docs" / ".gitignore").write_text("guide.md\n", encoding="utf-8")
    if use_git:
        if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    files = list_project_files(tmp_path)
    assert "src/app.py" in files and "keep.log" in files and "src/" in files
    for ignored in ("notes.log", "node_modules/lib/index.js", "src/build/out.js", "docs/guide.md"):
        assert ignored not in files


def test_completer_commands_files_and_arguments(tmp_path: Path) -> None:
    _write(tmp_path, "src/widget.py")
    _write(tmp_path, "README.md")
    index = FileIndex(tmp_path)
    index.load_now()
    completer = Completer(tmp_path, [("model", "Switch model"), ("compact", "Compact")],
                          {"model": lambda: [("prov/alpha", "Alpha"), ("prov/beta", "Beta")]}, index)
    start, items = completer.complete("/co", first_line=True)  # type: ignore[misc]
    assert start == 0 and [i.replacement for i in items] == ["/compact"]
    start, items = completer.complete("/model be", first_line=True)  # type: ignore[misc]
    assert start == len("/model ") and items[0].replacement == "prov/beta"
    start, items = completer.complete("look at @widg", first_line=True)  # type: ignore[misc]
    assert start == len("look at ") and items[0].replacement == "@src/widget.py"
    assert completer.complete("/model", first_line=False) is None
    assert completer.complete("plain text", first_line=True) is None


def test_mcp_tool_calls_render_with_server_and_tool() -> None:
    from baton.tui.app.widgets.tool_render import header, mcp_label, result_body

    assert mcp_label("mcp__github__create_issue") == "github › create_issue"
    assert mcp_label("bash") == "bash"
    assert header("mcp__db__query", {"sql": "select 1"}).plain == 'db › query {"sql": "select 1"}'
    rendered = result_body("mcp__db__query", {}, "", {"structuredContent": {"rows": [1, 2]}}, is_error=False)
    assert '"rows"' in str(rendered)

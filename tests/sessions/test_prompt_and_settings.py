"""Settings validation, context files, system prompt assembly."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider
from baton.sessions import CodingSession, SessionOptions, load_settings
from baton.sessions.context_files import load_append_system_md, load_context_files, load_system_md
from baton.sessions.system_prompt import build_system_prompt


def test_missing_settings_give_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "settings.json")
    assert settings.problems == []
    assert settings.compaction.reserve_tokens == 16_384 and settings.compaction.keep_recent_tokens == 20_000
    assert settings.retry.enabled and settings.retry.max_retries == 3
    assert settings.thinking_handoff == "text"


def test_pi_settings_file_is_understood(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({
        "defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5", "defaultThinkingLevel": "medium",
        "compaction": {"enabled": False, "reserveTokens": 8000}, "retry": {"maxRetries": 5},
        "theme": "light", "favoriteModels": ["openai/gpt-5"], "somethingPiOnly": True,
    }))
    settings = load_settings(path)
    assert settings.problems == []
    assert settings.default_model == "anthropic/claude-sonnet-4-5"
    assert settings.default_thinking_level == "medium"
    assert not settings.compaction.enabled and settings.compaction.reserve_tokens == 8000
    assert settings.compaction.keep_recent_tokens == 20_000
    assert settings.retry.max_retries == 5 and settings.theme == "light"


def test_bad_values_are_reported_and_replaced_by_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({
        "default_thinking_level": "maximum", "compaction": {"reserve_tokens": "lots", "keep_recent_tokens": 500},
        "thinking_handoff": "keep", "theme": "dark",
    }))
    settings = load_settings(path)
    assert settings.default_thinking_level is None and settings.thinking_handoff == "text"
    assert settings.compaction.reserve_tokens == 16_384 and settings.compaction.keep_recent_tokens == 500
    assert settings.theme == "dark"
    assert len(settings.problems) == 3
    assert any("default_thinking_level" in p and str(path) in p for p in settings.problems)


def test_invalid_json_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{ not json")
    settings = load_settings(path)
    assert settings.compaction.enabled and len(settings.problems) == 1
    assert "not valid JSON" in settings.problems[0]


def test_context_files_come_from_home_then_ancestors_then_cwd(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    work = repo / "pkg" / "work"
    work.mkdir(parents=True)
    home.mkdir()
    (home / "AGENTS.md").write_text("global rules")
    (repo / "CLAUDE.md").write_text("repo rules (claude)")
    (repo / "pkg" / "AGENTS.md").write_text("pkg rules")
    (repo / "pkg" / "CLAUDE.md").write_text("pkg rules (claude), read beside AGENTS.md")
    (work / "AGENTS.md").write_text("work rules")
    (work / ".claude").mkdir()
    (work / ".claude" / "CLAUDE.md").write_text("work rules (claude)")
    (work / "CLAUDE.md").write_text("work rules")  # the same text again: not repeated
    files = load_context_files(work, home)
    assert [f.content for f in files] == ["global rules", "repo rules (claude)", "pkg rules",
                                          "pkg rules (claude), read beside AGENTS.md", "work rules",
                                          "work rules (claude)"]
    assert files[-1].path == work / ".claude" / "CLAUDE.md"


def test_the_users_claude_md_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    (user / ".claude" / "CLAUDE.md").write_text("my own rules")
    monkeypatch.setenv("HOME", str(user))
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "baton-home"
    home.mkdir()
    assert [f.content for f in load_context_files(work, home)] == ["my own rules"]


def test_system_md_and_append_system_md(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    (work / ".baton").mkdir(parents=True)
    (home / "SYSTEM.md").write_text("global system")
    (home / "APPEND_SYSTEM.md").write_text("global append")
    assert load_system_md(work, home) == "global system"
    (work / ".baton" / "SYSTEM.md").write_text("project system")
    assert load_system_md(work, home) == "project system"
    assert load_append_system_md(work, home) == "global append"


def test_default_prompt_lists_tools_guidelines_context_date_and_cwd(tmp_path: Path) -> None:
    from baton.sessions.context_files import ContextFile

    prompt = build_system_prompt(
        cwd=tmp_path, tools=["read", "bash", "edit", "write", "grep"],
        context_files=[ContextFile(tmp_path / "AGENTS.md", "Use tabs.")], append="Extra rule.",
        now=datetime(2026, 1, 5, 9, 30),
    )
    assert "operating inside baton" in prompt
    assert "- read: Read file contents\n- bash:" in prompt and "- grep: Search file contents" in prompt
    assert "Prefer grep/find/ls tools over bash" in prompt and "Use read to examine files before editing" in prompt
    assert prompt.index("Extra rule.") < prompt.index("# Project Context")
    assert f"## {tmp_path / 'AGENTS.md'}\n\nUse tabs." in prompt
    assert "Current date and time: Monday, January 5, 2026" in prompt
    assert prompt.endswith(f"Current working directory: {tmp_path}")
    bare = build_system_prompt(cwd=tmp_path, tools=[])
    assert "Available tools:\n(none)" in bare and "Use edit" not in bare
    custom = build_system_prompt(cwd=tmp_path, custom_prompt="You are a poet.", append="Rhyme.")
    assert custom.startswith("You are a poet.\n\nRhyme.\nCurrent date and time:")


async def test_session_prompt_uses_files_and_options(
    baton_home: Path, cwd: Path, options: SessionOptions, faux_a: FauxProvider
) -> None:
    (baton_home / "AGENTS.md").write_text("home instructions")
    (cwd / "AGENTS.md").write_text("project instructions")
    (cwd / ".baton").mkdir()
    (cwd / ".baton" / "APPEND_SYSTEM.md").write_text("appended from file")
    prompt_file = cwd / "my-prompt.txt"
    prompt_file.write_text("Custom base prompt.")
    faux_a.add("ok")
    options.context_files = True
    options.system_prompt = str(prompt_file)
    options.append_system_prompt = "appended from flag"
    session = await CodingSession.open(options)
    await session.prompt("hi")
    system = faux_a.requests[0].system_prompt or ""
    assert system.startswith("Custom base prompt.\n\nappended from file\n\nappended from flag")
    assert "home instructions" in system and "project instructions" in system
    assert session.context_files[0] == baton_home / "AGENTS.md"
    assert session.context_files[-1] == cwd / "AGENTS.md"
    await session.close()

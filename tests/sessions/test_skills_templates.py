"""Skills and prompt templates: found in every place, listed in the system prompt, expanded by
``CodingSession.prompt`` (so every mode gets them), bad files warned about."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider
from baton.providers.messages import TextContent, UserMessage
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.errors import PromptRefusedError
from baton.sessions.prompt_commands import PromptCommands
from baton.sessions.prompt_templates import BUILTIN_COMMANDS, load_templates, split_arguments


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _skill(root: Path, name: str, description: str = "Does things", body: str = "Step one.") -> Path:
    return _write(root / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def _last_user_text(faux: FauxProvider) -> str:
    message = faux.requests[-1].messages[-1]
    assert isinstance(message, UserMessage)
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content if isinstance(b, TextContent))


async def test_skills_found_in_every_place_and_listed(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path, baton_home: Path, user_home: Path
) -> None:
    places = {
        "proj-baton": cwd / ".baton" / "skills",
        "proj-agents": cwd / ".agents" / "skills",
        "proj-claude": cwd / ".claude" / "skills",
        "home-baton": baton_home / "skills",
        "home-agents": user_home / ".agents" / "skills",
        "home-claude": user_home / ".claude" / "skills",
    }
    paths = {name: _skill(root, name, f"Skill from {name}") for name, root in places.items()}
    options.tools = ["read"]
    faux_a.add("ok")
    session = await CodingSession.open(options)
    try:
        prompt = session.agent.system_prompt
        for name, path in paths.items():
            assert f"<name>{name}</name>" in prompt
            assert f"<description>Skill from {name}</description>" in prompt
            assert f"<location>{path}</location>" in prompt
        names = {c.name for c in session.prompt_commands()}
        assert {f"skill:{n}" for n in paths} <= names
        assert session.warnings == []
    finally:
        await session.close()


async def test_skill_invocation_expands_into_the_prompt(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path, user_home: Path
) -> None:
    path = _skill(cwd / ".baton" / "skills", "deploy", "Deploys the app", "Run ./deploy.sh --env $ENV")
    faux_a.add("done")
    session = await CodingSession.open(options)
    try:
        await session.prompt("/skill:deploy to staging please")
        sent = _last_user_text(faux_a)
        assert sent.startswith(f'<skill name="deploy" location="{path}">')
        assert f"References are relative to {path.parent}." in sent
        assert "Run ./deploy.sh --env $ENV" in sent  # a skill body is not a template
        assert "name: deploy" not in sent  # front matter stays out
        assert sent.endswith("</skill>\n\nto staging please")
        with pytest.raises(PromptRefusedError, match="Unknown skill 'nope'"):
            await session.prompt("/skill:nope")
        assert faux_a.calls == 1
    finally:
        await session.close()


async def test_skills_without_read_tool_are_not_listed(options: SessionOptions, cwd: Path, user_home: Path) -> None:
    _skill(cwd / ".baton" / "skills", "hidden")
    session = await CodingSession.open(options)  # tools=[]: the model could not read the file
    try:
        assert "<available_skills>" not in session.agent.system_prompt
        assert "skill:hidden" in {c.name for c in session.prompt_commands()}
    finally:
        await session.close()


def test_bad_skills_are_warned_once_each(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _write(root / "broken" / "SKILL.md", "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
    _write(root / "nodesc" / "SKILL.md", "---\nname: nodesc\n---\nbody\n")
    _write(root / "open" / "SKILL.md", "---\nname: open\ndescription: never closed\n")
    _write(root / "binary" / "SKILL.md", "").write_bytes(b"---\nname: x\xff\xfe\n---\n")
    _skill(root, "good")
    _skill(tmp_path / "other", "good", "A second skill of the same name")
    _write(root / "folded" / "SKILL.md", "---\nname: folded\ndescription: >-\n  Line one\n  line two\n"
           "metadata:\n  version: 2\nallowed-tools: [read, bash]\n---\nx\n")
    library = PromptCommands.load(tmp_path / "nowhere")
    assert library.skills == []
    from baton.sessions.skills import load_skills

    warnings: list[str] = []
    skills = load_skills([root, tmp_path / "other"], warnings)
    assert sorted(s.name for s in skills) == ["folded", "good"]
    folded = next(s for s in skills if s.name == "folded")
    assert folded.description == "Line one line two"
    assert folded.meta["allowed-tools"] == ["read", "bash"] and folded.meta["metadata"] == {"version": 2}
    assert len(warnings) == 5, warnings
    joined = "\n".join(warnings)
    assert "broken" in joined and "invalid YAML" in joined
    assert "needs a 'description'" in joined
    assert "not closed" in joined
    assert "cannot be read" in joined
    assert "already defined" in joined


async def test_templates_found_in_every_place_and_expanded(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path, baton_home: Path, user_home: Path
) -> None:
    _write(cwd / ".baton" / "prompts" / "review.md",
           "---\ndescription: Review a file\nargument-hint: <file> [focus]\n---\nReview $1 focusing on $2.\n"
           "All: $@ | raw: $ARGUMENTS | rest: ${@:2}\n")
    _write(cwd / ".claude" / "commands" / "fix-issue.md", "Fix issue #$ARGUMENTS following our standards.\n")
    _write(baton_home / "prompts" / "hello.md", "Say hello to $1$9.\n")
    _write(user_home / ".claude" / "commands" / "outline.md", "---\ndescription: Outline\n---\nOutline: $@\n")
    faux_a.add("1", "2", "3", "4", "5")
    session = await CodingSession.open(options)
    try:
        commands = {c.name: c for c in session.prompt_commands()}
        assert {"review", "fix-issue", "hello", "outline"} <= set(commands)
        assert commands["review"].description == "Review a file"
        assert commands["review"].argument_hint == "<file> [focus]"
        assert commands["fix-issue"].description == "Fix issue #$ARGUMENTS following our standards."
        await session.prompt('/review src/app.py "error handling" extra')
        assert _last_user_text(faux_a) == (
            "Review src/app.py focusing on error handling.\n"
            'All: src/app.py error handling extra | raw: src/app.py "error handling" extra | rest: error handling extra'
        )
        await session.prompt("/fix-issue 123")
        assert _last_user_text(faux_a) == "Fix issue #123 following our standards."
        await session.prompt("/hello world")
        assert _last_user_text(faux_a) == "Say hello to world."
        await session.prompt("/outline a b")  # (/plan is baton's own: plan mode)
        assert _last_user_text(faux_a) == "Outline: a b"
        await session.prompt("/unknown stays as typed")
        assert _last_user_text(faux_a) == "/unknown stays as typed"
    finally:
        await session.close()


def test_templates_shadowing_builtins_and_bad_names_are_warned(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _write(first / "model.md", "not allowed\n")
    _write(first / "ok.md", "first\n")
    _write(second / "ok.md", "second\n")
    _write(first / "1bad.md", "bad name\n")
    _write(first / "broken.md", "---\ndescription: [x\n---\nbody\n")
    warnings: list[str] = []
    templates = load_templates([first, second], warnings)
    assert [(t.name, t.body.strip()) for t in templates] == [("ok", "first")]
    assert len(warnings) == 4, warnings
    assert any("/model is a built-in command" in w for w in warnings)


def test_builtin_names_cover_the_apps_commands() -> None:
    from baton.tui.app.commands import COMMANDS

    assert set(COMMANDS) <= BUILTIN_COMMANDS


def test_argument_split_handles_quotes_and_unbalanced_quotes() -> None:
    assert split_arguments('a "b c" d') == ["a", "b c", "d"]
    assert split_arguments("it's fine") == ["it's", "fine"]


async def test_claude_code_commands_namespaced_and_arguments_never_dropped(
    options: SessionOptions, faux_a: FauxProvider, cwd: Path, user_home: Path
) -> None:
    _write(cwd / ".claude" / "commands" / "frontend" / "component.md", "Make a React component.\n")
    _write(cwd / ".claude" / "commands" / "plain.md", "Summarise the project.\n")
    outside = cwd.parent / "elsewhere"
    _write(outside / "sneaky.md", "from a linked folder\n")
    (cwd / ".claude" / "commands" / "linked").symlink_to(outside)  # a symlinked folder is not entered
    faux_a.add("1", "2", "3")
    session = await CodingSession.open(options)
    try:
        names = {c.name for c in session.prompt_commands()}
        assert "frontend:component" in names and "plain" in names
        assert not any(name.startswith("linked") for name in names)
        await session.prompt("/frontend:component Button with an icon")
        assert _last_user_text(faux_a) == "Make a React component.\n\nARGUMENTS: Button with an icon"
        await session.prompt("/plain")
        assert _last_user_text(faux_a) == "Summarise the project."
    finally:
        await session.close()

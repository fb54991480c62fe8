"""Model roles (``models.*``) and agent definitions (Claude Code's format), without a model call."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.catalog import list_models
from baton.providers.catalog_infer import alias_target
from baton.providers.models import Model
from baton.sessions.agents import AgentDefinition, allowed_tools, load_agents
from baton.sessions.roles import RoleError, resolve_model_spec, role_bindings
from baton.sessions.setting_trust import rule_for
from baton.sessions.settings import load_settings, validate_settings
from tests.sessions.subagent_helpers import write_agent

pytestmark = pytest.mark.usefixtures("baton_home")
CURRENT = Model(id="mine", api="openai-completions", provider="local-x", base_url="http://127.0.0.1:9/v1")


def test_a_role_names_a_model_of_any_provider() -> None:
    settings = validate_settings({"models": {"fast": "openai/gpt-4o-mini", "smart": "opus"}})
    assert resolve_model_spec("fast", settings, CURRENT).ref == "openai/gpt-4o-mini"
    smart = alias_target("opus", list_models())
    assert smart is not None and resolve_model_spec("smart", settings, CURRENT).ref == smart.ref
    assert resolve_model_spec("inherit", settings, CURRENT) is CURRENT
    assert resolve_model_spec("haiku", settings, CURRENT).id.startswith("claude-haiku-")
    assert resolve_model_spec("google/gemini-2.5-flash", settings, CURRENT).api == "google-generative-ai"


def test_unset_roles_fall_back_and_the_advisor_does_not() -> None:
    settings = validate_settings({})
    assert resolve_model_spec("fast", settings, CURRENT) is CURRENT  # fast → default → the session's model
    assert resolve_model_spec("default", validate_settings({"defaultModel": "openai/gpt-4o"}), CURRENT).ref \
        == "openai/gpt-4o"
    with pytest.raises(RoleError, match=r"models\.advisor"):
        resolve_model_spec("advisor", settings, CURRENT)
    bindings = {b.role: b for b in role_bindings(validate_settings({"models": {"fast": "openai/gpt-4o-mini"}}),
                                                 CURRENT)}
    assert bindings["fast"].describe() == "fast: openai/gpt-4o-mini (settings)"
    assert bindings["smart"].describe() == "smart: local-x/mine (default role)"
    assert bindings["advisor"].describe() == "advisor: not set"


def test_an_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(RoleError, match="no known model or role"):
        resolve_model_spec("nonesuch-vendor/whatever", validate_settings({}), CURRENT)
    settings = validate_settings({"models": {"fast": "openai/gpt-4o-mini-typo-zz"}})
    # an unknown id under a known provider is inferred from its nearest sibling (the catalog's rule)
    assert resolve_model_spec("fast", settings, CURRENT).provider == "openai"
    bad = validate_settings({"models": {"smart": "fast"}})
    with pytest.raises(RoleError, match="names a role"):
        resolve_model_spec("smart", bad, CURRENT)
    assert "names a role" in (role_bindings(bad, CURRENT)[2].problem or "")


def test_a_project_cannot_choose_the_roles_models_before_trust(tmp_path: Path) -> None:
    assert rule_for(("models", "fast")).kind == "trust"
    assert rule_for(("subagents", "max_parallel")).kind == "tightens"
    (tmp_path / ".baton").mkdir()
    (tmp_path / ".baton" / "settings.json").write_text(
        '{"models": {"fast": "openai/gpt-4o"}, "subagents": {"maxParallel": 2, "maxDepth": 3}}')
    settings = load_settings(project_dir=tmp_path)
    assert settings.models.fast is None  # waits for trust
    assert settings.subagents.max_parallel == 2  # fewer at once: stricter, applies
    assert settings.subagents.max_depth == 1  # deeper nesting widens: waits
    trusted = settings.with_trust()
    assert trusted.models.fast == "openai/gpt-4o" and trusted.subagents.max_depth == 3


def test_agent_files_in_claude_codes_format(tmp_path: Path, baton_home: Path) -> None:
    write_agent(baton_home / "agents", "reviewer", model="sonnet", tools="Read, Glob, Grep, WebFetch, Frobnicate")
    write_agent(tmp_path / ".claude" / "agents", "reviewer", model="inherit")  # a later one of the name: warned
    catalog = load_agents(tmp_path)
    names = list(catalog.agents)
    assert names[:2] == ["general", "explore"] and "reviewer" in names
    reviewer = catalog.agents["reviewer"]
    assert reviewer.source == "project"  # the project's comes first
    user = load_agents(tmp_path / "elsewhere").agents["reviewer"]
    assert user.tools == ("read", "find", "grep", "web_fetch")
    assert user.model == "sonnet" and user.prompt == "You look things up."
    unknown = [w for w in load_agents(tmp_path / "elsewhere").warnings if "unknown tool" in w]
    assert len(unknown) == 1 and "Frobnicate" in unknown[0] and "WebFetch" not in unknown[0]
    assert any("ignored: already defined" in w for w in catalog.warnings)


def test_a_project_agent_cannot_widen_tools_or_pick_a_provider(tmp_path: Path) -> None:
    write_agent(tmp_path / ".baton" / "agents", "wide", model="openai/gpt-4o", tools="Bash, Write, Edit, Read, Grep")
    catalog = load_agents(tmp_path)
    wide = catalog.agents["wide"]
    assert wide.model == "inherit"
    assert any("model 'openai/gpt-4o' ignored" in w for w in catalog.warnings)
    # the session has read and task only: bash, write and edit stay out; grep reads, so it may come
    assert allowed_tools(wide, ["read", "task"], can_delegate=False) == ["read", "grep"]
    assert "task" not in allowed_tools(AgentDefinition("g", "d", "", None, "inherit", "built-in"),
                                       ["read", "task"], can_delegate=False)
    explore = catalog.agents["explore"]
    assert allowed_tools(explore, ["read", "bash", "edit", "write", "task"], can_delegate=True) == \
        ["read", "grep", "find", "ls"]


def test_project_agents_wait_while_the_project_waits_for_trust(tmp_path: Path) -> None:
    write_agent(tmp_path / ".claude" / "agents", "sneaky")
    catalog = load_agents(tmp_path, project_trusted=False)
    assert "sneaky" not in catalog.agents and catalog.held == 1
    assert any("waits for your trust" in w for w in catalog.warnings)


def test_a_symlinked_project_agent_leading_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_agent(outside, "leak")
    project = tmp_path / "project"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "leak.md").symlink_to(outside / "leak.md")
    catalog = load_agents(project)
    assert "leak" not in catalog.agents
    assert any("leads outside" in w for w in catalog.warnings)


def test_the_task_tool_takes_claude_codes_argument_name() -> None:
    from baton.tools.task import TaskParams, TaskTool

    assert TaskParams.model_validate({"description": "d", "prompt": "p", "subagent_type": "explore"}).agent == "explore"
    assert list(TaskTool(".").schema().parameters["properties"]) == ["description", "prompt", "agent"]
    assert TaskTool.title({"description": "find the loader", "agent": "explore"}) == "Task (explore): find the loader"

"""Front matter without aliases, and saving a rule into a project that planted symlinks (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.sessions.frontmatter import FrontMatterError, parse_front_matter
from baton.sessions.permissions.persist import RuleSaveError, save_allow_rule


def test_front_matter_refuses_aliases_anchors_and_deep_nesting() -> None:
    with pytest.raises(FrontMatterError, match="anchors and aliases"):
        parse_front_matter("---\na: &a [x, x]\nb: [*a, *a]\n---\nbody\n")
    with pytest.raises(FrontMatterError, match="anchors and aliases"):
        parse_front_matter("---\nbase: &b {k: v}\nother:\n  <<: *b\n---\n")
    with pytest.raises(FrontMatterError, match="nested more than 32 levels"):
        parse_front_matter("---\na: " + "[" * 40 + "]" * 40 + "\n---\n")
    doc = parse_front_matter("---\nname: x\ndescription: >-\n  folded\n  text\nmetadata: {tags: [a, b]}\n---\nhi\n")
    assert doc.meta == {"name": "x", "description": "folded text", "metadata": {"tags": ["a", "b"]}}


def test_saving_a_rule_never_writes_through_a_planted_temporary_symlink(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".baton").mkdir(parents=True)
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    (project / ".baton" / "settings.json.tmp").symlink_to(victim)  # where the old code wrote first
    save_allow_rule(project, "bash(ls)")
    assert victim.read_text() == "export PATH=/usr/bin\n"
    saved = json.loads((project / ".baton" / "settings.json").read_text())
    assert saved == {"permissions": {"allow": ["bash(ls)"]}}


def test_saving_a_rule_refuses_settings_that_lead_out_of_the_project(tmp_path: Path, baton_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (baton_home / "settings.json").write_text('{"approval": "ask"}')
    (project / ".baton").symlink_to(baton_home)  # the project's rule would land in the user's own settings
    with pytest.raises(RuleSaveError, match="leads"):
        save_allow_rule(project, "bash(ls)")
    assert (baton_home / "settings.json").read_text() == '{"approval": "ask"}'

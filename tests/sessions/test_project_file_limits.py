"""Front matter without aliases, and saving a rule into a project that planted symlinks (issue 23)."""

from __future__ import annotations

import json
import os
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
    saved = json.loads((project / ".baton" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["bash(ls)"]}}


def test_saving_a_rule_refuses_settings_that_lead_out_of_the_project(tmp_path: Path, baton_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (baton_home / "settings.json").write_text('{"approval": "ask"}')
    (project / ".baton").symlink_to(baton_home)  # the project's rule would land in the user's own settings
    with pytest.raises(RuleSaveError, match="leads"):
        save_allow_rule(project, "bash(ls)")
    assert (baton_home / "settings.json").read_text() == '{"approval": "ask"}'


# ---------------------------------------------------------------------------------------- .git/info/exclude


def _git_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git" / "info").mkdir(parents=True)
    return project


def test_a_saved_rule_goes_to_the_personal_file_kept_out_of_git(tmp_path: Path) -> None:
    project = _git_project(tmp_path)
    (project / ".git" / "info" / "exclude").write_text("# git ls-files --others --exclude-from=.git/info/exclude\n*.o")
    path = save_allow_rule(project, "bash(ls)")
    save_allow_rule(project, "bash(make)")
    assert path == project / ".baton" / "settings.local.json"
    assert not (project / ".baton" / "settings.json").exists()
    lines = (project / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines[1:] == ["*.o", "/.baton/settings.local.json"]  # added once, after the last line


def test_the_exclude_line_is_never_written_through_a_hostile_git_folder(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    # .git/info/exclude a symlink to a file outside
    project = _git_project(tmp_path)
    (project / ".git" / "info" / "exclude").symlink_to(victim)
    save_allow_rule(project, "bash(ls)")
    # .git/info/exclude a hard link to it
    other = tmp_path / "other"
    (other / ".git" / "info").mkdir(parents=True)
    os.link(victim, other / ".git" / "info" / "exclude")
    save_allow_rule(other, "bash(ls)")
    # .git/info a symlink to a folder outside
    outside = tmp_path / "outside"
    outside.mkdir()
    third = tmp_path / "third"
    (third / ".git").mkdir(parents=True)
    (third / ".git" / "info").symlink_to(outside)
    save_allow_rule(third, "bash(ls)")
    # .git itself a symlink
    fourth = tmp_path / "fourth"
    fourth.mkdir()
    (fourth / ".git").symlink_to(outside)
    save_allow_rule(fourth, "bash(ls)")
    # a FIFO
    fifo = tmp_path / "fifo"
    (fifo / ".git" / "info").mkdir(parents=True)
    os.mkfifo(fifo / ".git" / "info" / "exclude")
    save_allow_rule(fifo, "bash(ls)")
    assert victim.read_text() == "precious\n"
    assert list(outside.iterdir()) == []
    for place in (project, other, third, fourth, fifo):  # the rule itself is saved all the same
        assert "bash(ls)" in (place / ".baton" / "settings.local.json").read_text()

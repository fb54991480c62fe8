"""The read policy for files a project brings (tools/project_files.py), and bounded reading."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.providers.bounded_read import FileTooLargeError, NotRegularFileError, read_regular
from baton.tools import grep
from baton.tools.find import FindTool
from baton.tools.grep import GrepTool
from baton.tools.project_files import ProjectFileRefusedError, ProjectFiles
from tests.tools.conftest import Call


@pytest.fixture
def user_home(tmp_path: Path, baton_home: Path) -> Path:
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("private key")
    return home


@pytest.fixture
def repo(user_home: Path) -> Path:
    root = user_home / "src" / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    return root


def policy(cwd: Path, user_home: Path) -> ProjectFiles:
    return ProjectFiles.for_dir(cwd, home=user_home)


def test_a_file_inside_the_project_is_read_and_one_leading_out_is_not(repo: Path, user_home: Path) -> None:
    (repo / "CLAUDE.md").write_text("rules")
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    (repo / "pkg" / "AGENTS.md").symlink_to("../CLAUDE.md")  # a monorepo sharing one file: inside the repo
    (repo / "LEAK.md").symlink_to(user_home / ".ssh" / "id_rsa")
    files = policy(repo / "pkg", user_home)
    assert files.read(repo / "AGENTS.md", 100) == b"rules"
    assert files.read(repo / "pkg" / "AGENTS.md", 100) == b"rules"
    with pytest.raises(ProjectFileRefusedError, match="leads outside the project"):
        files.read(repo / "LEAK.md", 100)


def test_baton_home_and_credential_stores_are_refused_even_inside_the_project(
    user_home: Path, baton_home: Path
) -> None:
    # baton run in the home directory: ~/.ssh and $BATON_HOME lie inside "the project"
    (user_home / "AGENTS.md").symlink_to(".ssh/id_rsa")
    files = ProjectFiles.for_dir(user_home, home=user_home, baton_dir=user_home / ".baton")
    (user_home / ".baton").mkdir()
    (user_home / ".baton" / "models.json").write_text('{"apiKey": "k"}')
    (user_home / "APPEND.md").symlink_to(".baton/models.json")
    with pytest.raises(ProjectFileRefusedError, match=r"leads into .*\.ssh"):
        files.read(user_home / "AGENTS.md", 100)
    with pytest.raises(ProjectFileRefusedError, match=r"leads into .*\.baton"):
        files.read(user_home / "APPEND.md", 100)
    # the user's own place is read wherever it points
    assert files.read(user_home / ".baton" / "models.json", 100) == b'{"apiKey": "k"}'


def test_a_file_above_the_project_stays_in_its_own_folder(repo: Path, user_home: Path, tmp_path: Path) -> None:
    (user_home / "dotfiles").mkdir()
    (user_home / "dotfiles" / "AGENTS.md").write_text("mine")
    (user_home / "AGENTS.md").symlink_to("dotfiles/AGENTS.md")
    (user_home / "src" / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("not the folder's")
    files = policy(repo, user_home)
    assert files.read(user_home / "AGENTS.md", 100) == b"mine"
    with pytest.raises(ProjectFileRefusedError, match="leads outside its folder"):
        files.read(user_home / "src" / "AGENTS.md", 100)


def test_the_users_folders_are_read_wherever_they_point(repo: Path, user_home: Path, tmp_path: Path) -> None:
    (tmp_path / "shared-skill.md").write_text("shared")
    skills = user_home / ".claude" / "skills" / "x"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").symlink_to(tmp_path / "shared-skill.md")
    assert policy(repo, user_home).read(skills / "SKILL.md", 100) == b"shared"


def test_a_project_reached_through_a_symlink_is_judged_by_its_real_path(
    repo: Path, user_home: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(repo)
    (repo / "skills").mkdir()
    (repo / "skills" / "out").symlink_to(tmp_path)  # a folder inside leading out
    (tmp_path / "SKILL.md").write_text("outside")
    files = policy(alias, user_home)
    with pytest.raises(ProjectFileRefusedError):
        files.read(alias / "skills" / "out" / "SKILL.md", 100)


def test_fifos_and_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegularFileError, match="a FIFO"):
        read_regular(tmp_path / "fifo", 100)
    with pytest.raises(NotRegularFileError, match="a character device"):
        read_regular("/dev/zero", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(FileTooLargeError, match="larger than 100 bytes"):
        read_regular(tmp_path / "big", 100)
    assert read_regular(tmp_path / "big", 100, truncate=True) == b"x" * 100


@pytest.mark.parametrize("make", ["fifo", "zero"])
async def test_find_and_python_grep_skip_a_gitignore_or_file_that_is_not_a_file(
    cwd: Path, call: Call, make: str
) -> None:
    (cwd / "a.txt").write_text("needle\n")
    if make == "fifo":
        os.mkfifo(cwd / ".gitignore")
        os.mkfifo(cwd / "pipe.txt")
    else:
        (cwd / ".gitignore").symlink_to("/dev/zero")
        (cwd / "zero.txt").symlink_to("/dev/zero")
    found = await asyncio.wait_for(call(FindTool(str(cwd)), pattern="*.txt"), 30)
    assert "a.txt" in found.content[0].text  # type: ignore[union-attr]
    result = await asyncio.wait_for(call(GrepTool(str(cwd), use_ripgrep=False), pattern="needle"), 30)
    assert "a.txt:1: needle" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
@pytest.mark.parametrize("make", ["fifo", "zero"])
async def test_ripgrep_stopped_by_a_hostile_gitignore_is_a_clear_error(
    cwd: Path, call: Call, make: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ripgrep itself waits forever on a FIFO .gitignore and reads a /dev/zero one without end:
    # the search has a time budget and ripgrep a heap cap, so the call ends with an error
    monkeypatch.setattr(grep, "PYTHON_SEARCH_BUDGET", 3.0)
    (cwd / "a.txt").write_text("needle\n")
    if make == "fifo":
        os.mkfifo(cwd / ".gitignore")
    else:
        (cwd / ".gitignore").symlink_to("/dev/zero")
    with pytest.raises(ToolError, match=r"took longer than 3 s|ripgrep failed: memory allocation"):
        await asyncio.wait_for(call(GrepTool(str(cwd)), pattern="needle"), 60)

"""grep, find and ls: results, limits and notices, .gitignore, binary files."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.find import FindTool
from baton.tools.grep import GrepTool
from baton.tools.ls import LsTool
from tests.tools.conftest import Call, text_of


def tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.fixture
def project(cwd: Path) -> Path:
    tree(cwd, {
        ".gitignore": "build/\n*.log\n!keep.log\n/root_only.txt\ndocs/**/*.tmp\n",
        "src/main.py": "import os\n\ndef main():\n    return TODO_marker\n",
        "src/util.py": "def helper():\n    pass  # TODO later\n",
        "src/nested/.gitignore": "secret.py\n",
        "src/nested/secret.py": "TODO hidden by nested gitignore\n",
        "src/nested/visible.py": "TODO visible\n",
        "build/out.py": "TODO in build\n",
        "debug.log": "TODO in log\n",
        "keep.log": "TODO kept log\n",
        "root_only.txt": "TODO anchored\n",
        "sub/root_only.txt": "TODO not anchored here\n",
        "docs/a/b/x.tmp": "TODO tmp\n",
        "docs/a/b/x.md": "TODO md\n",
        ".hidden/conf.py": "TODO hidden dir\n",
        ".git/config": "TODO git internals\n",
        "image.bin": b"\x00\x01TODO binary\x00",
    })
    return cwd


def grep_files(text: str) -> set[str]:
    return {line.split(":", 1)[0] for line in text.splitlines() if ":" in line}


async def test_grep_respects_gitignore_and_skips_binary(project: Path, call: Call) -> None:
    result = await call(GrepTool(str(project), use_ripgrep=False), pattern="TODO")
    assert grep_files(text_of(result)) == {
        "src/main.py", "src/util.py", "src/nested/visible.py", "keep.log", "sub/root_only.txt",
        "docs/a/b/x.md", ".hidden/conf.py",
    }
    assert result.details["engine"] == "python"
    assert result.details["matches"] == 7


async def test_grep_output_format_and_context(project: Path, call: Call) -> None:
    result = await call(GrepTool(str(project), use_ripgrep=False), pattern="TODO_marker", context=1)
    assert text_of(result) == "src/main.py-3- def main():\nsrc/main.py:4:     return TODO_marker"


async def test_grep_context_groups_are_merged_and_separated(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("\n".join(f"{'hit' if i in (3, 4, 10) else 'x'} {i}" for i in range(1, 13)) + "\n")
    result = await call(GrepTool(str(cwd), use_ripgrep=False), pattern="hit", context=1)
    assert text_of(result).split("\n") == [
        "f.txt-2- x 2", "f.txt:3: hit 3", "f.txt:4: hit 4", "f.txt-5- x 5", "--",
        "f.txt-9- x 9", "f.txt:10: hit 10", "f.txt-11- x 11",
    ]


async def test_grep_flags(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("Value (a+b)\nvalue\n")
    tool = GrepTool(str(cwd), use_ripgrep=False)
    assert text_of(await call(tool, pattern="value", ignoreCase=True)) == "f.txt:1: Value (a+b)\nf.txt:2: value"
    assert text_of(await call(tool, pattern="(a+b)", literal=True)) == "f.txt:1: Value (a+b)"
    assert text_of(await call(tool, pattern="^value$")) == "f.txt:2: value"
    assert text_of(await call(tool, pattern="nothing")) == "No matches found"


async def test_grep_glob_and_single_file(project: Path, call: Call) -> None:
    tool = GrepTool(str(project), use_ripgrep=False)
    assert grep_files(text_of(await call(tool, pattern="TODO", glob="*.log"))) == {"keep.log"}
    assert grep_files(text_of(await call(tool, pattern="TODO", glob="src/**/*.py"))) == {
        "src/main.py", "src/util.py", "src/nested/visible.py"}
    single = await call(tool, pattern="TODO", path="src/util.py")
    assert text_of(single) == "util.py:2:     pass  # TODO later"


async def test_grep_limit_notice(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("match\n" * 10)
    result = await call(GrepTool(str(cwd), use_ripgrep=False), pattern="match", limit=3)
    assert text_of(result) == (
        "f.txt:1: match\nf.txt:2: match\nf.txt:3: match\n\n"
        "[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    )
    assert result.details["limitReached"] is True
    exact = await call(GrepTool(str(cwd), use_ripgrep=False), pattern="match", limit=10)
    assert exact.details["limitReached"] is False


async def test_grep_long_lines_are_cut(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("needle " + "x" * 1000 + "\n")
    text = text_of(await call(GrepTool(str(cwd), use_ripgrep=False), pattern="needle"))
    assert text.endswith("... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]")


async def test_grep_byte_limit(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text(("needle " + "y" * 400 + "\n") * 200)
    result = await call(GrepTool(str(cwd), use_ripgrep=False), pattern="needle", limit=1000)
    assert text_of(result).endswith("\n\n[50.0KB limit reached]")
    assert result.details["truncated"] is True


async def test_grep_errors(cwd: Path, call: Call) -> None:
    tool = GrepTool(str(cwd), use_ripgrep=False)
    with pytest.raises(ToolError, match="Path not found: missing"):
        await call(tool, pattern="x", path="missing")
    with pytest.raises(ToolError, match="Invalid regex pattern"):
        await call(tool, pattern="(unclosed")


async def test_grep_with_ripgrep_agrees(project: Path, call: Call) -> None:
    import shutil

    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    python = await call(GrepTool(str(project), use_ripgrep=False), pattern="TODO")
    ripgrep = await call(GrepTool(str(project), use_ripgrep=True), pattern="TODO")
    assert ripgrep.details["engine"] == "ripgrep"
    assert grep_files(text_of(ripgrep)) == grep_files(text_of(python))


async def test_find_respects_gitignore(project: Path, call: Call) -> None:
    result = await call(FindTool(str(project)), pattern="*.py")
    assert text_of(result).split("\n") == [
        ".hidden/conf.py", "src/main.py", "src/nested/visible.py", "src/util.py",
    ]
    assert result.details["count"] == 4


async def test_find_path_patterns_and_directories(project: Path, call: Call) -> None:
    tool = FindTool(str(project))
    assert text_of(await call(tool, pattern="src/**/*.py")).split("\n") == [
        "src/main.py", "src/nested/visible.py", "src/util.py"]
    assert text_of(await call(tool, pattern="nested")) == "src/nested/"
    assert text_of(await call(tool, pattern="**/*.tmp")) == "No files found matching pattern"
    assert text_of(await call(tool, pattern="*.py", path="src/nested")) == "visible.py"
    assert text_of(await call(tool, pattern="*.{md,log}")).split("\n") == ["docs/a/b/x.md", "keep.log"]


async def test_find_limit_notice(cwd: Path, call: Call) -> None:
    tree(cwd, {f"f{i}.txt": "" for i in range(5)})
    result = await call(FindTool(str(cwd)), pattern="*.txt", limit=2)
    assert text_of(result) == "f0.txt\nf1.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    assert result.details["limitReached"] is True


async def test_find_errors(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Path not found"):
        await call(FindTool(str(cwd)), pattern="*", path="nope")


async def test_gitignore_of_the_enclosing_repository_applies(cwd: Path, call: Call) -> None:
    tree(cwd, {".git/HEAD": "ref\n", ".gitignore": "*.gen.py\n", "pkg/a.py": "x", "pkg/b.gen.py": "x"})
    result = await call(FindTool(str(cwd)), pattern="*.py", path="pkg")
    assert text_of(result) == "a.py"


async def test_ls_sorted_dirs_marked_dotfiles_included(cwd: Path, call: Call) -> None:
    tree(cwd, {"b.txt": "", "A.txt": "", ".env": "", "dir/x": "", "Zeta/y": ""})
    (cwd / "link").symlink_to("dir")
    result = await call(LsTool(str(cwd)))
    assert text_of(result).split("\n") == [".env", "A.txt", "b.txt", "dir/", "link/", "Zeta/"]
    assert result.details["count"] == 6


async def test_ls_limit_and_errors(cwd: Path, call: Call) -> None:
    tree(cwd, {f"f{i}": "" for i in range(4)})
    tool = LsTool(str(cwd))
    assert text_of(await call(tool, limit=2)) == "f0\nf1\n\n[2 entries limit reached. Use limit=4 for more]"
    (cwd / "empty").mkdir()
    assert text_of(await call(tool, path="empty")) == "(empty directory)"
    with pytest.raises(ToolError, match="Not a directory: f0"):
        await call(tool, path="f0")
    with pytest.raises(ToolError, match="Path not found: nope"):
        await call(tool, path="nope")


async def test_find_accepts_an_absolute_pattern_inside_the_root(project: Path, call: Call) -> None:
    result = await call(FindTool(str(project)), pattern=f"{project}/src/*.py")
    assert text_of(result).split("\n") == ["src/main.py", "src/util.py"]

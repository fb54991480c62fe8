"""The file tools open the path the permission check approved, and nothing a symlink swapped in
since leads to (the race itself, with a real sandboxed job: tests/tui/test_file_tool_race.py).

Each test pins the real path as the session's permission gate does, then replaces a folder on it
with a symlink to a place outside the workspace, as a sandboxed command can at any moment."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from baton.agent.tool import AgentTool, ToolError
from baton.tools.anchored import PathChangedError, anchor, open_dir, replace_file
from baton.tools.edit import EditTool
from baton.tools.find import FindTool
from baton.tools.grep import GrepTool
from baton.tools.ls import LsTool
from baton.tools.path_pins import PathPins
from baton.tools.read import ReadTool
from baton.tools.write import WriteTool
from tests.tools.conftest import Call


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "notes.txt").write_text("outside secret\n")
    return place


def swap_for_link(folder: Path, target: Path) -> None:
    """What the sandboxed job does: the checked folder becomes a symlink out of the workspace."""
    folder.rename(folder.with_name(folder.name + ".real"))
    folder.symlink_to(target)


def pinned(tool: AgentTool, call_id: str, real: Path, path: str) -> AgentTool:
    pins = PathPins()
    pins.pin(call_id, path, str(real))
    tool.pins = pins  # type: ignore[attr-defined]
    return tool


async def run(tool: AgentTool, call_id: str, **args: object) -> str:
    result = await tool.execute(call_id, args, asyncio.Event())
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_write_refuses_a_folder_swapped_for_a_symlink_after_the_check(cwd: Path, outside: Path) -> None:
    (cwd / "dir").mkdir()
    tool = pinned(WriteTool(str(cwd)), "c1", cwd / "dir" / "new.txt", "dir/new.txt")
    swap_for_link(cwd / "dir", outside)
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c1", path="dir/new.txt", content="planted")
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


async def test_edit_refuses_a_folder_swapped_for_a_symlink_after_the_check(cwd: Path, outside: Path) -> None:
    (cwd / "dir").mkdir()
    (cwd / "dir" / "notes.txt").write_text("inside notes\n")
    tool = pinned(EditTool(str(cwd)), "c1", cwd / "dir" / "notes.txt", "dir/notes.txt")
    swap_for_link(cwd / "dir", outside)
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c1", path="dir/notes.txt", oldText="secret", newText="planted")
    assert (outside / "notes.txt").read_text() == "outside secret\n"


async def test_read_refuses_a_folder_swapped_for_a_symlink_after_the_check(cwd: Path, outside: Path) -> None:
    (cwd / "dir").mkdir()
    (cwd / "dir" / "notes.txt").write_text("inside notes\n")
    tool = pinned(ReadTool(str(cwd)), "c1", cwd / "dir" / "notes.txt", "dir/notes.txt")
    swap_for_link(cwd / "dir", outside)
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c1", path="dir/notes.txt")


async def test_read_refuses_a_file_swapped_for_a_symlink_after_the_check(cwd: Path, outside: Path) -> None:
    (cwd / "notes.txt").write_text("inside notes\n")
    tool = pinned(ReadTool(str(cwd)), "c1", cwd / "notes.txt", "notes.txt")
    (cwd / "notes.txt").unlink()
    (cwd / "notes.txt").symlink_to(outside / "notes.txt")
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c1", path="notes.txt")


@pytest.mark.parametrize("make", [LsTool, FindTool, lambda cwd: GrepTool(cwd, use_ripgrep=False), GrepTool])
async def test_listing_and_searching_refuse_a_swapped_root(cwd: Path, outside: Path, make: object) -> None:
    (cwd / "dir").mkdir()
    tool = make(str(cwd))  # type: ignore[operator]
    pinned(tool, "c1", cwd / "dir", "dir")
    swap_for_link(cwd / "dir", outside)
    args: dict[str, object] = {"path": "dir"}
    if tool.name == "grep":
        args["pattern"] = "secret"
    if tool.name == "find":
        args["pattern"] = "*"
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c1", **args)


async def test_find_and_grep_do_not_descend_into_a_folder_that_became_a_symlink(cwd: Path, outside: Path) -> None:
    # a symlinked folder is never followed; the walk opens each folder without following one
    (cwd / "sub").symlink_to(outside)
    assert "notes.txt" not in await run(FindTool(str(cwd)), "c1", pattern="**/*.txt")
    for engine in (False, None):
        assert await run(GrepTool(str(cwd), use_ripgrep=engine), "c1", pattern="secret") == "No matches found"


async def test_write_makes_missing_folders_through_handles(cwd: Path, outside: Path) -> None:
    tool = pinned(WriteTool(str(cwd)), "c1", cwd / "a" / "b" / "c.txt", "a/b/c.txt")
    assert "Successfully wrote" in await run(tool, "c1", path="a/b/c.txt", content="x")
    assert (cwd / "a" / "b" / "c.txt").read_text() == "x"
    # a folder on the way that is a symlink (made by someone else) is not followed
    (cwd / "d").symlink_to(outside)
    tool = pinned(WriteTool(str(cwd)), "c2", cwd / "d" / "e" / "f.txt", "d/e/f.txt")
    with pytest.raises(ToolError, match="the path changed after it was checked"):
        await run(tool, "c2", path="d/e/f.txt", content="x")
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


def test_open_dir_walks_without_following_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    fd = open_dir(str(tmp_path / "real"))
    os.close(fd)
    with pytest.raises(PathChangedError):
        open_dir(str(tmp_path / "link"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        open_dir(str(tmp_path / "file" / "below"))


def test_replace_refuses_a_file_changed_since_it_was_read(cwd: Path) -> None:
    target = cwd / "f.txt"
    target.write_text("old")
    with anchor(str(target)) as place:
        seen = os.stat(place.name, dir_fd=place.dir_fd)
        target.rename(cwd / "aside")
        target.write_text("someone else's")  # a new file under the same name
        with pytest.raises(PathChangedError, match="changed on disk"):
            replace_file(place, b"mine", expect=seen)
    assert target.read_text() == "someone else's"
    assert sorted(p.name for p in cwd.iterdir()) == ["aside", "f.txt"]


async def test_without_pins_a_tool_resolves_the_path_itself(cwd: Path, call: Call) -> None:
    (cwd / "real").mkdir()
    (cwd / "link").symlink_to(cwd / "real")
    await call(WriteTool(str(cwd)), path="link/x.txt", content="through the link")
    assert (cwd / "real" / "x.txt").read_text() == "through the link"


async def test_a_call_the_check_did_not_approve_is_refused(cwd: Path) -> None:
    # pins installed (a permission check in front) but none for this call: a second call reusing
    # another's id, or a path argument other than the one approved
    tool = pinned(WriteTool(str(cwd)), "c1", cwd / "a.txt", "a.txt")
    with pytest.raises(ToolError, match="did not approve"):
        await run(tool, "c1", path="b.txt", content="x")
    assert "Successfully wrote" in await run(tool, "c1", path="a.txt", content="x")
    with pytest.raises(ToolError, match="did not approve"):
        await run(tool, "c1", path="a.txt", content="again")  # a pin is taken once
    assert not (cwd / "b.txt").exists() and (cwd / "a.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"path": "a\x00b.txt", "content": "x"}),
        ("read", {"path": "a\x00b.txt"}),
        ("write", {"path": "new\nline.txt", "content": "x"}),
        ("read", {"path": "/proc/self/environ"}),
        ("read", {"path": "/dev/zero"}),
        ("write", {"path": "~/../escape.txt", "content": "x"}),
    ],
    ids=["write NUL", "read NUL", "write newline", "read /proc/self/environ", "read /dev/zero", "write ~/.."],
)
async def test_path_tricks_through_the_real_gate(tmp_path: Path, baton_home: Path, tool: str, args: dict) -> None:
    from tests.sessions.permissions.helpers import run_call

    ws = tmp_path / "ws"
    ws.mkdir()
    outcome = await run_call(ws, tool, args)
    if args["path"] == "new\nline.txt":  # an odd name, but inside the workspace: written there
        assert not outcome.is_error and (ws / "new\nline.txt").read_text() == "x"
        return
    assert outcome.is_error, outcome.result_text
    assert "BATON_HOME" not in outcome.result_text and str(baton_home) not in outcome.result_text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baton-home", "tmp", "ws"]

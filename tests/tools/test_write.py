"""The write tool: parents created, atomic replace, byte counts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.write import WriteTool
from tests.tools.conftest import Call, text_of


async def test_creates_parents_and_reports_bytes_not_characters(cwd: Path, call: Call) -> None:
    content = "h\u00e9llo \u2603\n"  # 8 characters, 11 bytes
    result = await call(WriteTool(str(cwd)), path="a/b/c.txt", content=content)
    assert (cwd / "a" / "b" / "c.txt").read_text(encoding="utf-8") == content
    assert text_of(result) == "Successfully wrote 11 bytes to a/b/c.txt"
    assert result.details == {"path": "a/b/c.txt", "bytes": 11, "lines": 1, "created": True}


async def test_overwrite_keeps_mode_and_leaves_no_temp_file(cwd: Path, call: Call) -> None:
    target = cwd / "tool.sh"
    target.write_text("old")
    os.chmod(target, 0o700)
    result = await call(WriteTool(str(cwd)), path="tool.sh", content="new")
    assert target.read_text() == "new"
    assert result.details["created"] is False
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert [p.name for p in cwd.iterdir()] == ["tool.sh"]


async def test_new_file_gets_umask_permissions(cwd: Path, call: Call) -> None:
    old = os.umask(0o022)
    try:
        await call(WriteTool(str(cwd)), path="n.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((cwd / "n.txt").stat().st_mode) == 0o644


async def test_writing_a_directory_is_an_error(cwd: Path, call: Call) -> None:
    (cwd / "d").mkdir()
    with pytest.raises(ToolError, match="it is a directory"):
        await call(WriteTool(str(cwd)), path="d", content="x")


async def test_parent_that_is_a_file_is_an_error(cwd: Path, call: Call) -> None:
    (cwd / "f").write_text("x")
    with pytest.raises(ToolError, match=r"Cannot write f/g\.txt"):
        await call(WriteTool(str(cwd)), path="f/g.txt", content="x")


async def test_failed_write_keeps_the_old_file(cwd: Path, call: Call, monkeypatch: pytest.MonkeyPatch) -> None:
    import baton.tools.anchored as anchored

    target = cwd / "keep.txt"
    target.write_text("precious")

    def broken_rename(src: str, dst: str, **_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(anchored.os, "rename", broken_rename)
    with pytest.raises(ToolError, match="No space left on device"):
        await call(WriteTool(str(cwd)), path="keep.txt", content="half")
    assert target.read_text() == "precious"
    assert [p.name for p in cwd.iterdir()] == ["keep.txt"]

"""read, edit and write through a pluggable file-text backend (an editor's buffers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.tools.edit import EditTool
from baton.tools.read import ReadTool
from baton.tools.write import WriteTool
from tests.tools.conftest import Call, text_of


class Buffers:
    """An editor holding unsaved text for some files; the rest is "not mine"."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.writes: list[tuple[str, str]] = []

    async def read_text(self, path: str) -> str | None:
        return self.texts.get(path)

    async def write_text(self, path: str, content: str) -> bool:
        self.writes.append((path, content))
        self.texts[path] = content
        return True


async def test_read_and_edit_see_the_buffer_and_write_through_it(cwd: Path, call: Call) -> None:
    notes = cwd / "notes.txt"
    notes.write_text("on disk\n")
    buffers = Buffers({str(notes): "line one\nunsaved line\n"})
    read, edit, write = ReadTool(str(cwd)), EditTool(str(cwd)), WriteTool(str(cwd))
    for tool in (read, edit, write):
        tool.file_access = buffers
    assert "unsaved line" in text_of(await call(read, path="notes.txt", offset=2))
    result = await call(edit, path="notes.txt", oldText="unsaved", newText="edited")
    assert result.details["firstChangedLine"] == 2
    assert buffers.texts[str(notes)] == "line one\nedited line\n"
    assert notes.read_text() == "on disk\n"  # the editor saves when it wants to
    created = await call(write, path="new.txt", content="fresh\n")
    assert created.details["created"] is True and not (cwd / "new.txt").exists()
    assert buffers.writes[-1] == (str(cwd / "new.txt"), "fresh\n")


async def test_files_the_backend_does_not_hold_and_binaries_come_from_disk(cwd: Path, call: Call) -> None:
    (cwd / "plain.txt").write_text("from disk\n")
    (cwd / "blob.bin").write_bytes(b"\x00\x01binary")
    buffers = Buffers({str(cwd / "blob.bin"): "should never be read"})
    read = ReadTool(str(cwd))
    read.file_access = buffers
    assert "from disk" in text_of(await call(read, path="plain.txt"))
    with pytest.raises(ToolError, match="binary file"):  # the disk's answer, not the buffer's text
        await call(read, path="blob.bin")

"""Edit and write keep files intact: every byte outside the replaced span, hard links, FIFOs."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.agent.tool import ToolError
from baton.tools.edit import EditTool
from baton.tools.file_lock import file_lock
from baton.tools.write import WriteTool
from tests.tools.conftest import Call


async def test_lone_cr_and_odd_bytes_outside_the_span_survive(cwd: Path, call: Call) -> None:
    original = b"head\rmid\r\nxx TARGET yy\n\xff\xfe tail\r\rend"
    (cwd / "f.bin").write_bytes(original)
    await call(EditTool(str(cwd)), path="f.bin", oldText="TARGET", newText="DONE")
    assert (cwd / "f.bin").read_bytes() == original.replace(b"TARGET", b"DONE")


async def test_mixed_endings_span_over_crlf_keeps_the_rest(cwd: Path, call: Call) -> None:
    original = b"a\r\nb\r\nc\nd\re\n"
    (cwd / "f.txt").write_bytes(original)
    await call(EditTool(str(cwd)), path="f.txt", oldText="b\nc", newText="B\nC")
    # the first break is CRLF, so the new text's break takes that style; the rest is untouched
    assert (cwd / "f.txt").read_bytes() == b"a\r\nB\r\nC\nd\re\n"


@settings(max_examples=60, deadline=None)
@given(
    before=st.lists(st.sampled_from(["x", "\r", "\n", "\r\n", "é", " "]), max_size=12),
    after=st.lists(st.sampled_from(["y", "\r", "\n", "\r\n", "ü", " "]), max_size=12),
)
def test_bytes_outside_the_replacement_never_change(before: list[str], after: list[str]) -> None:
    prefix, suffix = "".join(before), "".join(after)
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "p.txt"
        target.write_bytes((prefix + "@@MARK@@" + suffix).encode())
        asyncio.run(EditTool(scratch).execute("c", {"path": "p.txt", "oldText": "@@MARK@@", "newText": "=="}))
        assert target.read_bytes() == (prefix + "==" + suffix).encode()


async def test_file_with_nul_bytes_is_refused_and_unchanged(cwd: Path, call: Call) -> None:
    original = b"abc\x00def TARGET\n"
    (cwd / "f.bin").write_bytes(original)
    with pytest.raises(ToolError, match="NUL bytes"):
        await call(EditTool(str(cwd)), path="f.bin", oldText="TARGET", newText="X")
    assert (cwd / "f.bin").read_bytes() == original


async def test_a_hard_linked_file_is_replaced_never_written_through(cwd: Path, call: Call, tmp_path: Path) -> None:
    # The other link may lie outside the workspace (a sandboxed command can make one to any file
    # on the same mount it can see): writing through the shared inode would change that file.
    outside = tmp_path / "outside.txt"
    outside.write_text("one two\n")
    os.link(outside, cwd / "a.txt")
    result = await call(EditTool(str(cwd)), path="a.txt", oldText="two", newText="three")
    assert (cwd / "a.txt").read_text() == "one three\n"
    assert outside.read_text() == "one two\n"
    assert (cwd / "a.txt").stat().st_nlink == 1
    text = result.content[0].text  # type: ignore[union-attr]
    assert "(the file had 2 hard links: it was replaced, not written through, so its other link keeps the" in text
    os.link(outside, cwd / "b.txt")
    result = await call(WriteTool(str(cwd)), path="b.txt", content="short\n")
    assert (cwd / "b.txt").read_text() == "short\n" and outside.read_text() == "one two\n"
    assert "hard links" in result.content[0].text  # type: ignore[union-attr]
    assert sorted(p.name for p in cwd.iterdir()) == ["a.txt", "b.txt"]  # no temp file left


async def test_edit_refuses_a_fifo_without_blocking(cwd: Path, call: Call) -> None:
    os.mkfifo(cwd / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(call(EditTool(str(cwd)), path="pipe", oldText="a", newText="b"), 5)
    assert (cwd / "pipe").is_fifo()


async def test_write_refuses_a_fifo_and_leaves_it(cwd: Path, call: Call) -> None:
    os.mkfifo(cwd / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await asyncio.wait_for(call(WriteTool(str(cwd)), path="pipe", content="x"), 5)
    assert (cwd / "pipe").is_fifo()
    assert sorted(p.name for p in cwd.iterdir()) == ["pipe"]


async def test_abort_after_the_call_started_leaves_the_file_unchanged(cwd: Path, call: Call) -> None:
    """The abort lands while the edit waits for the file (another writer holds it): the edit
    then reads and matches, but must not write."""
    target = cwd / "f.txt"
    target.write_text("keep me\n")
    signal = asyncio.Event()
    async with file_lock(str(target)):
        task = asyncio.create_task(call(EditTool(str(cwd)), signal=signal, path="f.txt",
                                        oldText="keep", newText="lose"))
        await asyncio.sleep(0.05)
        assert not task.done()
        signal.set()
    with pytest.raises(ToolError, match="aborted"):
        await task
    assert target.read_text() == "keep me\n"

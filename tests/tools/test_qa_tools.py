"""QA regressions for the tools, found by using them the way a model does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from baton.tools.grep import GrepTool
from tests.tools.conftest import Call, text_of

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


@needs_rg
async def test_ripgrep_handles_lines_longer_than_the_stream_buffer(cwd: Path, call: Call) -> None:
    # A minified bundle: one 300 KB line. ripgrep's JSON record for it overflowed asyncio's 64 KB
    # line buffer and the tool failed with "Separator is not found, and chunk exceed the limit".
    (cwd / "bundle.min.js").write_text("var a=1;" * 40_000 + "needle();\n" + "short needle\n")
    result = await call(GrepTool(str(cwd), use_ripgrep=True), pattern="needle")
    assert result.details["engine"] == "ripgrep"
    lines = text_of(result).splitlines()
    assert lines[0].startswith("bundle.min.js:1: var a=1;")
    assert len(lines[0]) < 600  # cut to the usual 500 characters
    assert lines[1] == "bundle.min.js:2: short needle"
    assert result.details["matches"] == 2
    assert result.details["linesTruncated"] is True


@needs_rg
async def test_ripgrep_paths_with_colons_and_spaces(cwd: Path, call: Call) -> None:
    (cwd / "dir: odd").mkdir()
    (cwd / "dir: odd" / "a b:1.txt").write_text("x\nneedle 2:3\n")
    ripgrep = text_of(await call(GrepTool(str(cwd), use_ripgrep=True), pattern="needle"))
    python = text_of(await call(GrepTool(str(cwd), use_ripgrep=False), pattern="needle"))
    assert ripgrep == python == "dir: odd/a b:1.txt:2: needle 2:3"

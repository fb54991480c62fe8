"""Diffs for edit details: the line-numbered display diff and the unified patch."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.tools.diff import display_diff, unified_patch

lines = st.lists(st.sampled_from(["a", "b", "c", "d", "", "x y"]), max_size=30)


def text(parts: list[str], trailing: bool) -> str:
    return "\n".join(parts) + ("\n" if trailing and parts else "")


def _number_and_text(line: str) -> tuple[int, str]:
    number, _, body = line[1:].lstrip(" ").partition(" ")
    return int(number), body


@given(lines, lines, st.booleans(), st.booleans())
def test_display_diff_lines_point_at_the_right_lines(old: list[str], new: list[str], t1: bool, t2: bool) -> None:
    before, after = text(old, t1), text(new, t2)
    diff = display_diff(before, after)
    old_lines, new_lines = before.split("\n"), after.split("\n")
    previous_was_gap = False
    for line in diff.diff.split("\n") if diff.diff else []:
        if line.strip() == "...":
            assert not previous_was_gap
            previous_was_gap = True
            continue
        previous_was_gap = False
        number, body = _number_and_text(line)
        assert (new_lines if line.startswith("+") else old_lines)[number - 1] == body
    if diff.first_changed_line is not None:
        assert diff.added or diff.removed


def test_display_diff_of_a_large_file_shows_only_the_change() -> None:
    before = "".join(f"line {i}\n" for i in range(1, 100_001))
    after = before.replace("line 50000\n", "changed\n")
    diff = display_diff(before, after)
    assert diff.first_changed_line == 50000
    assert diff.diff.split("\n")[0] == "        ..."
    assert "- 50000 line 50000\n+ 50000 changed\n" in diff.diff  # width of 100001 lines, as pi
    assert len(diff.diff.split("\n")) == 12


@pytest.mark.skipif(shutil.which("patch") is None, reason="patch(1) is not installed")
@settings(max_examples=60, deadline=None)
@given(lines, lines, st.booleans(), st.booleans())
def test_unified_patch_applies_with_patch(tmp_path_factory: pytest.TempPathFactory, old: list[str],
                                          new: list[str], t1: bool, t2: bool) -> None:
    before, after = text(old, t1), text(new, t2)
    work: Path = tmp_path_factory.mktemp("patch")
    (work / "f").write_text(before)
    patch = unified_patch("f", before, after)
    if patch:
        subprocess.run(["patch", "-s", "f"], input=patch, text=True, cwd=work, check=True, capture_output=True)
    assert (work / "f").read_text() == after


def test_unified_patch_header_and_hunk() -> None:
    assert unified_patch("p.txt", "a\nb\nc\n", "a\nB\nc\n", context_lines=1) == (
        "--- p.txt\n+++ p.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    )
    assert unified_patch("p.txt", "same\n", "same\n") == ""

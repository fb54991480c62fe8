"""The edit tool: exact and forgiving matches, uniqueness, line endings, BOM, diffs, atomicity."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from baton.agent.tool import ToolError
from baton.tools.edit import EditTool
from tests.tools.conftest import Call, text_of


async def edit(cwd: Path, call: Call, content: str | bytes, **args: object) -> str:
    target = cwd / "f.txt"
    if isinstance(content, str):
        target.write_bytes(content.encode("utf-8"))
    else:
        target.write_bytes(content)
    await call(EditTool(str(cwd)), path="f.txt", **args)
    return target.read_bytes().decode("utf-8")


async def test_exact_replacement_and_details(cwd: Path, call: Call) -> None:
    (cwd / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await call(EditTool(str(cwd)), path="f.py", oldText="b = 2", newText="b = 20\nb2 = 21")
    assert text_of(result) == "Successfully replaced 1 block(s) in f.py."
    assert (cwd / "f.py").read_text() == "a = 1\nb = 20\nb2 = 21\nc = 3\n"
    details = result.details
    assert details["firstChangedLine"] == 2
    assert details["diff"] == " 1 a = 1\n-2 b = 2\n+2 b = 20\n+3 b2 = 21\n 3 c = 3"
    assert details["patch"].startswith("--- f.py\n+++ f.py\n@@ -1,3 +1,4 @@\n")
    assert (details["added"], details["removed"], details["fuzzyMatch"]) == (2, 1, False)


async def test_dollar_signs_are_literal(cwd: Path, call: Call) -> None:
    assert await edit(cwd, call, "x = 1\n", oldText="x = 1", newText="x = '$1 $& \\1'") == "x = '$1 $& \\1'\n"


async def test_diff_skips_far_context(cwd: Path, call: Call) -> None:
    lines = [f"line {i}" for i in range(1, 31)]
    (cwd / "f.txt").write_text("\n".join(lines) + "\n")
    result = await call(EditTool(str(cwd)), path="f.txt", oldText="line 15\n", newText="LINE 15\n")
    assert result.details["diff"].split("\n") == [
        "    ...", " 11 line 11", " 12 line 12", " 13 line 13", " 14 line 14",
        "-15 line 15", "+15 LINE 15",
        " 16 line 16", " 17 line 17", " 18 line 18", " 19 line 19", "    ...",
    ]
    assert result.details["firstChangedLine"] == 15


async def test_not_found_shows_the_closest_region(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError) as caught:
        await edit(cwd, call, "def handler(request):\n    return response\n",
                   oldText="def handler(request):\n    return None", newText="x")
    message = str(caught.value)
    assert message.startswith("Could not find the exact text in f.txt. The old text must match exactly")
    assert "Closest match is around line 1:" in message
    assert "  2:     return response" in message


async def test_duplicate_match_is_an_error_naming_the_count(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"Found 3 occurrences of the text in f\.txt\. The text must be unique"):
        await edit(cwd, call, "foo\nbar\nfoo\nbaz\nfoo\n", oldText="foo", newText="qux")
    assert (cwd / "f.txt").read_text() == "foo\nbar\nfoo\nbaz\nfoo\n"


async def test_identical_result_is_an_error(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"No changes made to f\.txt"):
        await edit(cwd, call, "same\n", oldText="same", newText="same")


async def test_missing_file(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await call(EditTool(str(cwd)), path="nope.txt", oldText="a", newText="b")


async def test_empty_old_text_is_refused(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="oldText must not be empty"):
        await edit(cwd, call, "x\n", oldText="", newText="b")


# --- forgiving match (pi's fuzzy cases) ------------------------------------------------------


async def test_fuzzy_trailing_whitespace(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "line one   \nline two  \nline three\n",
                     oldText="line one\nline two\n", newText="replaced\n")
    assert out == "replaced\nline three\n"


async def test_fuzzy_smart_single_quotes(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "console.log(\u2018hello\u2019);\n",
                     oldText="console.log('hello');", newText="console.log('world');")
    assert out == "console.log('world');\n"


async def test_fuzzy_smart_double_quotes(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "const msg = \u201cHello World\u201d;\n",
                     oldText='const msg = "Hello World";', newText='const msg = "Goodbye";')
    assert out == 'const msg = "Goodbye";\n'


async def test_fuzzy_unicode_dashes(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "range: 1\u20135\nbreak\u2014here\nminus \u2212 sign\n",
                     oldText="range: 1-5\nbreak-here\nminus - sign", newText="fixed")
    assert out == "fixed\n"


async def test_fuzzy_special_spaces(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "hello\u00a0world\u202fagain\n", oldText="hello world again", newText="hi")
    assert out == "hi\n"


async def test_fuzzy_nfkc(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "the \ufb01le is \uff28\uff49\n", oldText="the file is Hi", newText="ok")
    assert out == "ok\n"


async def test_exact_match_preferred_over_fuzzy(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "const x = 'exact';\nconst y = \u2018exact\u2019;\n",
                     oldText="const x = 'exact';", newText="const x = 'changed';")
    assert out == "const x = 'changed';\nconst y = \u2018exact\u2019;\n"


async def test_fuzzy_keeps_untouched_lines_byte_for_byte(cwd: Path, call: Call) -> None:
    content = "keep \u201cquotes\u201d   \ntarget \u2018x\u2019  \nkeep\u00a0nbsp   \n"
    out = await edit(cwd, call, content, oldText="target 'x'", newText="target 'y'")
    assert out == "keep \u201cquotes\u201d   \ntarget 'y'\nkeep\u00a0nbsp   \n"


async def test_fuzzy_not_found_still_fails(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Could not find the exact text"):
        await edit(cwd, call, "alpha\nbeta\n", oldText="gamma", newText="x")


async def test_duplicates_counted_after_fuzzy_normalisation(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await edit(cwd, call, "say \u201chi\u201d\nsay \u201chi\u201d  \n", oldText='say "hi"', newText="x")


# --- line endings and BOM ----------------------------------------------------------------------


async def test_crlf_file_matches_lf_old_text_and_stays_crlf(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, b"one\r\ntwo\r\nthree\r\n", oldText="one\ntwo\n", newText="1\n2\n")
    assert out == "1\r\n2\r\nthree\r\n"


async def test_lf_file_stays_lf(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "one\ntwo\n", oldText="one\r\ntwo", newText="a\r\nb")
    assert out == "a\nb\n"


async def test_bom_is_preserved(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "\ufeffhello\r\nworld\r\n", oldText="hello", newText="bye")
    assert out == "\ufeffbye\r\nworld\r\n"


async def test_crlf_and_lf_variants_count_as_duplicates(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await edit(cwd, call, b"hello\r\nworld\r\n---\r\nhello\nworld\n", oldText="hello\nworld\n", newText="x")


async def test_invalid_utf8_bytes_elsewhere_survive(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_bytes(b"latin1: caf\xe9\nchange me\n")
    await call(EditTool(str(cwd)), path="f.txt", oldText="change me", newText="changed")
    assert (cwd / "f.txt").read_bytes() == b"latin1: caf\xe9\nchanged\n"


# --- several edits -----------------------------------------------------------------------------


async def test_edits_list_applied_together(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("a\nb\nc\nd\n")
    result = await call(EditTool(str(cwd)), path="f.txt",
                        edits=[{"oldText": "d", "newText": "D"}, {"oldText": "a\n", "newText": "A\n"}])
    assert (cwd / "f.txt").read_text() == "A\nb\nc\nD\n"
    assert text_of(result) == "Successfully replaced 2 block(s) in f.txt."
    assert result.details["firstChangedLine"] == 1


async def test_edits_are_matched_against_the_original(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "x = 1\ny = 2\n",
                     edits=[{"oldText": "x = 1", "newText": "y = 2"}, {"oldText": "y = 2", "newText": "z = 3"}])
    assert out == "y = 2\nz = 3\n"


async def test_one_failing_edit_applies_none(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"Could not find edits\[1\] in f\.txt"):
        await edit(cwd, call, "a\nb\n", edits=[{"oldText": "a", "newText": "A"}, {"oldText": "zzz", "newText": "Z"}])
    assert (cwd / "f.txt").read_text() == "a\nb\n"


async def test_overlapping_edits_are_refused(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"edits\[0\] and edits\[1\] overlap in f\.txt"):
        await edit(cwd, call, "abcdef\n",
                   edits=[{"oldText": "abcd", "newText": "x"}, {"oldText": "cdef", "newText": "y"}])


async def test_edits_as_a_json_string_and_combined_with_old_text(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, "a\nb\nc\n", edits='[{"oldText": "a", "newText": "A"}]', oldText="c", newText="C")
    assert out == "A\nb\nC\n"


async def test_arguments_need_an_edit(cwd: Path, call: Call) -> None:
    with pytest.raises(ValidationError, match="oldText and newText, or a non-empty edits list"):
        await call(EditTool(str(cwd)), path="f.txt")
    with pytest.raises(ValidationError, match="newText is required"):
        await call(EditTool(str(cwd)), path="f.txt", oldText="a")


# --- the write itself --------------------------------------------------------------------------


async def test_write_is_atomic_and_keeps_the_mode(cwd: Path, call: Call) -> None:
    target = cwd / "run.sh"
    target.write_text("#!/bin/sh\necho old\n")
    os.chmod(target, 0o751)
    inode = target.stat().st_ino
    await call(EditTool(str(cwd)), path="run.sh", oldText="old", newText="new")
    assert target.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert sorted(p.name for p in cwd.iterdir()) == ["run.sh"]  # no temp file left


async def test_edit_through_a_symlink_keeps_the_link(cwd: Path, call: Call) -> None:
    (cwd / "real.txt").write_text("value = 1\n")
    (cwd / "link.txt").symlink_to("real.txt")
    await call(EditTool(str(cwd)), path="link.txt", oldText="1", newText="2")
    assert (cwd / "link.txt").is_symlink()
    assert (cwd / "real.txt").read_text() == "value = 2\n"


async def test_parallel_edits_of_one_file_both_land(cwd: Path, call: Call) -> None:
    import asyncio

    (cwd / "f.txt").write_text("".join(f"v{i} = 0\n" for i in range(20)))
    tool = EditTool(str(cwd))
    await asyncio.gather(*(call(tool, path="f.txt", oldText=f"v{i} = 0", newText=f"v{i} = 1") for i in range(20)))
    assert (cwd / "f.txt").read_text() == "".join(f"v{i} = 1\n" for i in range(20))


async def test_cr_only_file_keeps_cr(cwd: Path, call: Call) -> None:
    out = await edit(cwd, call, b"one\rtwo\rthree\r", oldText="two\nthree", newText="2\n3")
    assert out == "one\r2\r3\r"

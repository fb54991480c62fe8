"""The read tool: pages, notices, limits, images and binary files."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from baton.agent.tool import ToolError
from baton.providers.messages import ImageContent
from baton.tools.read import ReadTool
from tests.tools.conftest import Call, text_of


def numbered(count: int, trailing_newline: bool = False) -> str:
    body = "\n".join(f"Line {i}" for i in range(1, count + 1))
    return body + ("\n" if trailing_newline else "")


async def test_small_file_is_returned_whole(cwd: Path, call: Call) -> None:
    (cwd / "a.txt").write_text("hello\nworld\n")
    result = await call(ReadTool(str(cwd)), path="a.txt")
    assert text_of(result) == "hello\nworld"
    assert result.details["totalLines"] == 2
    assert result.details["truncated"] is False
    assert result.details["nextOffset"] is None


@pytest.mark.parametrize("trailing", [False, True])
async def test_2500_lines_gives_first_2000_and_continue_notice(cwd: Path, call: Call, trailing: bool) -> None:
    (cwd / "big.txt").write_text(numbered(2500, trailing))
    result = await call(ReadTool(str(cwd)), path="big.txt")
    text = text_of(result)
    assert text.startswith("Line 1\nLine 2\n")
    assert "Line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]" in text
    assert "Line 2001" not in text
    assert result.details["startLine"] == 1
    assert result.details["endLine"] == 2000
    assert result.details["totalLines"] == 2500
    assert result.details["truncatedBy"] == "lines"


async def test_offset_continues_to_the_end(cwd: Path, call: Call) -> None:
    (cwd / "big.txt").write_text(numbered(2500))
    result = await call(ReadTool(str(cwd)), path="big.txt", offset=2001)
    text = text_of(result)
    assert text.startswith("Line 2001\n")
    assert text.endswith("Line 2500")
    assert "[" not in text


async def test_limit_notice_counts_remaining_lines(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text(numbered(100))
    result = await call(ReadTool(str(cwd)), path="f.txt", offset=41, limit=10)
    assert text_of(result) == "\n".join(f"Line {i}" for i in range(41, 51)) + (
        "\n\n[50 more lines in file. Use offset=51 to continue.]"
    )
    assert result.details["truncatedBy"] == "limit"
    assert result.details["nextOffset"] == 51


async def test_limit_reaching_the_end_has_no_notice(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text(numbered(10))
    result = await call(ReadTool(str(cwd)), path="f.txt", offset=6, limit=5)
    assert text_of(result) == "Line 6\nLine 7\nLine 8\nLine 9\nLine 10"


async def test_byte_limit_cuts_at_a_line_boundary(cwd: Path, call: Call) -> None:
    line = "x" * 99
    (cwd / "wide.txt").write_text("\n".join(f"{i:04d}{line}" for i in range(1, 1001)))
    result = await call(ReadTool(str(cwd)), path="wide.txt")
    text = text_of(result)
    body, notice = text.split("\n\n")
    lines = body.split("\n")
    assert all(len(ln) == 103 for ln in lines)  # never a partial line
    assert len(body.encode()) <= 50 * 1024
    assert notice == f"[Showing lines 1-{len(lines)} of 1000 (50.0KB limit). Use offset={len(lines) + 1} to continue.]"
    assert result.details["truncatedBy"] == "bytes"


async def test_offset_past_the_end_names_the_line_count(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text(numbered(3, trailing_newline=True))
    with pytest.raises(ToolError, match=r"Offset 4 is beyond end of file \(3 lines total\)"):
        await call(ReadTool(str(cwd)), path="f.txt", offset=4)
    with pytest.raises(ToolError, match=r"\(3 lines total\)"):
        await call(ReadTool(str(cwd)), path="f.txt", offset=50)


async def test_first_line_longer_than_the_limit_points_to_bash(cwd: Path, call: Call) -> None:
    (cwd / "min.js").write_text("a" * 60_000 + "\nsecond\n")
    result = await call(ReadTool(str(cwd)), path="min.js")
    assert text_of(result) == (
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    )
    assert result.details["firstLineExceedsLimit"] is True


async def test_crlf_lines_lose_their_cr(cwd: Path, call: Call) -> None:
    (cwd / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call(ReadTool(str(cwd)), path="w.txt")
    assert text_of(result) == "one\ntwo"


async def test_empty_file(cwd: Path, call: Call) -> None:
    (cwd / "e.txt").write_text("")
    result = await call(ReadTool(str(cwd)), path="e.txt")
    assert text_of(result) == "(empty file)"
    assert result.details["totalLines"] == 0


async def test_paths_relative_at_prefixed_and_home(cwd: Path, call: Call, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    (cwd / "sub").mkdir()
    (cwd / "sub" / "f.txt").write_text("content")
    tool = ReadTool(str(cwd))
    assert text_of(await call(tool, path="sub/f.txt")) == "content"
    assert text_of(await call(tool, path="@sub/f.txt")) == "content"
    assert text_of(await call(tool, path=str(cwd / "sub" / "f.txt"))) == "content"
    monkeypatch.setenv("HOME", str(cwd))
    assert text_of(await call(tool, path="~/sub/f.txt")) == "content"


async def test_missing_file_and_directory(cwd: Path, call: Call) -> None:
    with pytest.raises(ToolError, match=r"File not found: nope\.txt"):
        await call(ReadTool(str(cwd)), path="nope.txt")
    (cwd / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await call(ReadTool(str(cwd)), path="d")


async def test_binary_file_is_refused(cwd: Path, call: Call) -> None:
    (cwd / "blob.bin").write_bytes(b"\x00\x01\x02garbage" * 100)
    with pytest.raises(ToolError, match=r"Cannot read blob\.bin: binary file"):
        await call(ReadTool(str(cwd)), path="blob.bin")
    (cwd / "doc.pdf").write_bytes(b"%PDF-1.7\n\x00\x00binary")
    with pytest.raises(ToolError, match="PDF document"):
        await call(ReadTool(str(cwd)), path="doc.pdf")


def png_bytes(width: int, height: int) -> bytes:
    """A valid (tiny, grey) PNG of the given size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


async def test_image_is_returned_as_image_content(cwd: Path, call: Call) -> None:
    data = png_bytes(3, 2)
    (cwd / "pic.png").write_bytes(data)
    result = await call(ReadTool(str(cwd)), path="pic.png")
    assert [block.type for block in result.content] == ["text", "image"]
    assert text_of(result) == "Read image file [image/png]"
    image = result.content[1]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data) == data
    assert result.details == {"path": "pic.png", "kind": "image", "mimeType": "image/png", "bytes": len(data),
                              "width": 3, "height": 2, "resized": False, "included": True}


async def test_image_detected_by_magic_bytes_not_extension(cwd: Path, call: Call) -> None:
    (cwd / "pic.txt").write_bytes(png_bytes(1, 1))
    (cwd / "fake.png").write_text("just text")
    result = await call(ReadTool(str(cwd)), path="pic.txt")
    assert result.content[1].type == "image"
    assert text_of(await call(ReadTool(str(cwd)), path="fake.png")) == "just text"


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\xff\xd8\xff\xe0" + b"\x00" * 20, "image/jpeg"),
        (b"GIF89a\x05\x00\x07\x00" + b"\x00" * 10, "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 20, "image/webp"),
    ],
)
async def test_other_image_formats(cwd: Path, call: Call, head: bytes, mime: str) -> None:
    (cwd / "img").write_bytes(head)
    result = await call(ReadTool(str(cwd)), path="img")
    image = result.content[1]
    assert isinstance(image, ImageContent) and image.mime_type == mime


async def test_image_for_a_text_only_model_is_a_notice(cwd: Path, call: Call) -> None:
    (cwd / "pic.png").write_bytes(png_bytes(640, 480))
    result = await call(ReadTool(str(cwd), images=False), path="pic.png")
    assert [block.type for block in result.content] == ["text"]
    assert "Read image file [image/png]" in text_of(result)
    assert "640x480" in text_of(result)
    assert "does not support images" in text_of(result)
    assert result.details["included"] is False


async def test_oversized_image_without_pillow_is_refused_clearly(cwd: Path, call: Call,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import baton.tools.images as images

    monkeypatch.setattr(images, "MAX_IMAGE_BYTES", 1000)
    monkeypatch.setattr(images, "_resize_with_pillow", lambda raw, mime: None)
    (cwd / "pic.png").write_bytes(png_bytes(64, 64) + b"\x00" * 2000)
    result = await call(ReadTool(str(cwd)), path="pic.png")
    assert [block.type for block in result.content] == ["text"]
    assert "too large to send" in text_of(result)
    assert "Pillow" in text_of(result)


async def test_large_image_is_resized_with_pillow(cwd: Path, call: Call) -> None:
    pil = pytest.importorskip("PIL.Image")
    image = pil.new("RGB", (4000, 1000), (200, 10, 10))
    image.save(cwd / "wide.png")
    result = await call(ReadTool(str(cwd)), path="wide.png")
    assert result.details["resized"] is True
    assert "Multiply coordinates by 2.00" in text_of(result)


async def test_first_page_of_a_huge_file_estimates_the_total(cwd: Path, call: Call,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import baton.tools.file_pages as pages

    monkeypatch.setattr(pages, "EXACT_COUNT_LIMIT", 1024 * 1024)
    line = "y" * 9 + "\n"
    (cwd / "huge.log").write_text(line * 400_000)  # 4 MB, exactly 400,000 lines
    result = await call(ReadTool(str(cwd)), path="huge.log")
    total = result.details["totalLines"]
    assert result.details["totalLinesEstimated"] is True
    assert 390_000 <= total <= 410_000
    assert text_of(result).endswith(f"[Showing lines 1-2000 of about {total}. Use offset=2001 to continue.]")
    deep = await call(ReadTool(str(cwd)), path="huge.log", offset=399_999)
    assert text_of(deep) == "yyyyyyyyy\nyyyyyyyyy"
    assert deep.details["totalLines"] == 400_000


async def test_limit_must_be_positive(cwd: Path, call: Call) -> None:
    (cwd / "f.txt").write_text("x")
    with pytest.raises(ToolError, match="limit must be at least 1"):
        await call(ReadTool(str(cwd)), path="f.txt", limit=0)


async def test_fifo_is_refused_without_blocking(cwd: Path, call: Call) -> None:
    import os

    os.mkfifo(cwd / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await call(ReadTool(str(cwd)), path="pipe")

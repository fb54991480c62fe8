"""The ``read`` tool: a page of a text file, or an image.

Text: at most 2000 lines / 50 KB per call, complete lines only, with a notice telling the model
how to continue (``[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]``). Images (PNG,
JPEG, GIF, WebP, detected by their magic bytes) come back as image content when the model takes
images, else as a text notice. Other binary files are refused with a clear message.

``details`` (for the UI) — text: ``{path, kind: "text", startLine, endLine, totalLines,
totalLinesEstimated, truncated, truncatedBy, nextOffset, truncation?}`` (``truncatedBy``:
``"lines" | "bytes" | "limit" | None``; ``nextOffset`` is None at the end of the file);
image: ``{path, kind: "image", mimeType, bytes, width, height, resized, included}``.

The file opened is the real path the permission check approved, walked through folder handles
without following a symlink (:mod:`tools.anchored`): a folder swapped for a symlink after the
check cannot make ``read`` return a file the check never saw.
"""

from __future__ import annotations

import asyncio
import io
import os
from typing import BinaryIO

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.bounded_read import NotRegularFileError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.messages import ImageContent, TextContent
from baton.tools.anchored import PathChangedError, anchor, open_existing
from baton.tools.details import ReadDetails
from baton.tools.file_access import FileAccess, is_text_data
from baton.tools.file_pages import OffsetBeyondEnd, Page, read_page
from baton.tools.images import SNIFF_BYTES, detect_image_mime, image_dimensions, prepare_image
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins, target_for
from baton.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

BINARY_SNIFF = 8192
MAX_IMAGE_READ_BYTES = 64 * 1024 * 1024
"""Images larger than this are not even loaded (nothing could shrink them reliably)."""

_KNOWN_BINARY: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document (try `pdftotext FILE -` with bash)"),
    (b"PK\x03\x04", "a ZIP archive (list it with `unzip -l FILE` with bash)"),
    (b"\x1f\x8b", "gzip-compressed (try `zcat FILE | head` with bash)"),
    (b"\x7fELF", "an ELF executable"),
    (b"SQLite format 3\x00", "an SQLite database (query it with `sqlite3` with bash)"),
)


class ReadParams(ToolParams):
    """Arguments of ``read``."""

    path: str = Field(description="Path to the file to read (relative or absolute)")
    offset: int | None = Field(default=None, description="Line number to start reading from (1-indexed)")
    limit: int | None = Field(default=None, description="Maximum number of lines to read")


class ReadTool(AgentTool[ReadParams, JsonObject]):
    """Read a text file page by page, or an image (see the module docstring)."""

    name = "read"
    prompt_summary = "Read file contents"
    details_type = ReadDetails
    label = "read"
    kind = "read"
    path_parameter = PathParameter("path", "existing file")
    read_only = True
    claude_code_name = "Read"
    description = (
        "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are "
        f"sent as attachments. For text files, output is truncated to {DEFAULT_MAX_LINES} lines or "
        f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit for large files. "
        "When you need the full file, continue with offset until complete."
    )
    parameters = ReadParams

    def __init__(self, cwd: str, images: bool = True) -> None:
        self.cwd = cwd
        self.images = images
        self.file_access: FileAccess | None = None
        """Reads text through this backend first (an editor's buffers); see :mod:`tools.file_access`."""
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Read src/app.py (lines 10-60)``, ``Read src/app.py (from line 10)``, ``Read src/app.py``."""
        path = cls.path_of(args)
        if path is None:
            return cls.label
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"Read {path} (lines {offset}-{offset + limit - 1})"
        if isinstance(offset, int):
            return f"Read {path} (from line {offset})"
        return f"Read {path}"

    async def run(
        self, tool_call_id: str, params: ReadParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Read ``params.path`` (see the module docstring)."""
        if signal.is_set():
            raise ToolError("Operation aborted")
        args = params
        if args.limit is not None and args.limit < 1:
            raise ToolError(f"limit must be at least 1 (got {args.limit}).")
        path = target_for(self.pins, self, tool_call_id, args.path, self.cwd)
        try:
            fd, info = _open(path, args.path)
        except ToolError:
            # not on disk: an editor hosting baton may still hold it in an unsaved buffer
            if self.file_access is None or os.path.lexists(path):
                raise
            text = await self.file_access.read_text(path)
            if text is None:
                raise
            data = text.encode("utf-8", "surrogateescape")
            return _text(io.BytesIO(data), len(data), args)
        with os.fdopen(fd, "rb") as handle:
            if self.file_access is not None:
                head = handle.read(SNIFF_BYTES)
                if is_text_data(head):
                    text = await self.file_access.read_text(path)
                    if text is not None:
                        data = text.encode("utf-8", "surrogateescape")
                        return _text(io.BytesIO(data), len(data), args)
                handle.seek(0)
            return self.read_open(handle, info, args)

    def read_open(self, handle: BinaryIO, info: os.stat_result, args: ReadParams) -> AgentToolResult[JsonObject]:
        """Read the open regular file ``handle`` (a page read takes milliseconds)."""
        head = handle.read(SNIFF_BYTES)
        mime = detect_image_mime(head)
        if mime is not None:
            return self._image(handle, head, mime, info.st_size, args.path)
        if b"\x00" in head[:BINARY_SNIFF]:
            raise ToolError(_binary_message(args.path, head, info.st_size))
        handle.seek(0)
        return _text(handle, info.st_size, args)

    def _image(self, handle: BinaryIO, head: bytes, mime: str, size: int, shown: str) -> AgentToolResult[JsonObject]:
        if not self.images:
            dims = image_dimensions(head, mime)
            dim_text = f", {dims[0]}x{dims[1]}" if dims else ""
            text = (
                f"Read image file [{mime}] ({format_size(size)}{dim_text}). The current model does not "
                "support images, so the image was not included."
            )
            details = _image_details(shown, mime, size, dims, resized=False, included=False)
            return AgentToolResult.text(text, details)
        if size > MAX_IMAGE_READ_BYTES:
            dims = image_dimensions(head, mime)
            text = (
                f"Read image file [{mime}] ({format_size(size)}). The image is too large to send; "
                "it was not included."
            )
            return AgentToolResult.text(text, _image_details(shown, mime, size, dims, False, False))
        raw = head + handle.read()
        prepared = prepare_image(raw, mime)
        dims = (
            (prepared.original_width, prepared.original_height)
            if prepared.original_width is not None and prepared.original_height is not None
            else None
        )
        if prepared.data is None:
            text = (
                f"Read image file [{mime}] ({format_size(size)}). The image is {prepared.reason}; "
                "it was not included."
            )
            return AgentToolResult.text(text, _image_details(shown, mime, size, dims, False, False))
        note = f"Read image file [{prepared.mime_type}]"
        dimension_note = prepared.dimension_note()
        if dimension_note:
            note += f"\n{dimension_note}"
        details = _image_details(shown, prepared.mime_type, size, dims, prepared.resized, True)
        content: list[TextContent | ImageContent] = [
            TextContent(text=note),
            ImageContent(data=prepared.data, mime_type=prepared.mime_type),
        ]
        return AgentToolResult(content, details)


def _open(path: str, shown: str) -> tuple[int, os.stat_result]:
    """The checked real path opened through its folder's handle (never a FIFO's blocking open)."""
    try:
        with anchor(path) as place:
            return open_existing(place)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file. Use ls to list it.") from None
    except NotRegularFileError:
        raise ToolError(f"Cannot read {shown}: not a regular file (a device, FIFO or socket).") from None
    except PathChangedError as exc:
        raise ToolError(f"Cannot read {shown}: the path changed after it was checked ({exc.strerror}).") from None
    except NotADirectoryError:
        raise ToolError(f"File not found: {shown} (a parent path is not a directory)") from None
    except PermissionError:
        raise ToolError(f"Permission denied: {shown}") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}") from None


def _image_details(
    path: str, mime: str, size: int, dims: tuple[int, int] | None, resized: bool, included: bool
) -> JsonObject:
    return {
        "path": path,
        "kind": "image",
        "mimeType": mime,
        "bytes": size,
        "width": dims[0] if dims else None,
        "height": dims[1] if dims else None,
        "resized": resized,
        "included": included,
    }


def _binary_message(path: str, head: bytes, size: int) -> str:
    kind = next((label for magic, label in _KNOWN_BINARY if head.startswith(magic)), None)
    what = f"it is {kind}" if kind else "it contains NUL bytes"
    return (
        f"Cannot read {path}: binary file ({format_size(size)}), {what}. The read tool reads text "
        "files and images (png, jpeg, gif, webp); inspect other files with bash (e.g. `file`, "
        "`xxd | head`)."
    )


def _text(handle: BinaryIO, size: int, args: ReadParams) -> AgentToolResult[JsonObject]:
    start = max(1, args.offset or 1)
    try:
        page = read_page(handle, size, start, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, args.limit)
    except OffsetBeyondEnd as exc:
        raise ToolError(
            f"Offset {args.offset} is beyond end of file ({exc.total_lines} lines total)",
            {"path": args.path, "kind": "text", "totalLines": exc.total_lines},
        ) from None
    return AgentToolResult.text(_page_text(page, args.path), _page_details(page, args.path))


def _total(page: Page) -> str:
    return f"about {page.total_lines}" if page.total_estimated else str(page.total_lines)


def _page_text(page: Page, path: str) -> str:
    start = page.start_line
    if page.first_line_bytes is not None:
        return (
            f"[Line {start} is {format_size(page.first_line_bytes)}, exceeds {format_size(DEFAULT_MAX_BYTES)} "
            f"limit. Use bash: sed -n '{start}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
    body = "\n".join(page.lines)
    if not page.lines and page.total_lines == 0:
        return "(empty file)"
    end = start + len(page.lines) - 1
    next_offset = end + 1
    if page.stopped_by == "lines":
        return f"{body}\n\n[Showing lines {start}-{end} of {_total(page)}. Use offset={next_offset} to continue.]"
    if page.stopped_by == "bytes":
        return (
            f"{body}\n\n[Showing lines {start}-{end} of {_total(page)} ({format_size(DEFAULT_MAX_BYTES)} "
            f"limit). Use offset={next_offset} to continue.]"
        )
    if page.stopped_by == "limit":
        remaining = page.total_lines - end
        more = f"About {remaining}" if page.total_estimated else str(remaining)
        return f"{body}\n\n[{more} more lines in file. Use offset={next_offset} to continue.]"
    if not body and page.lines:
        return f"(line {start} is empty)" if start == end else f"(lines {start}-{end} are empty)"
    return body


def _page_details(page: Page, path: str) -> JsonObject:
    end = page.start_line + len(page.lines) - 1
    details: JsonObject = {
        "path": path,
        "kind": "text",
        "startLine": page.start_line,
        "endLine": end,
        "totalLines": page.total_lines,
        "totalLinesEstimated": page.total_estimated,
        "truncated": page.stopped_by is not None,
        "truncatedBy": page.stopped_by,
        "nextOffset": end + 1 if page.stopped_by is not None else None,
    }
    if page.first_line_bytes is not None:
        details["firstLineExceedsLimit"] = True
        details["firstLineBytes"] = page.first_line_bytes
    return details

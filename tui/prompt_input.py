"""Assembling the first prompt: ``@file`` attachments, piped stdin and the prompt words."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.tui.cli_errors import CliError

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent

_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024


def image_mime_type(head: bytes) -> str | None:
    """The image MIME type recognised from a file's first bytes, if it is one we send."""
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_piped_stdin() -> str | None:
    """Piped standard input as text, or ``None`` when stdin is a terminal or absent."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        if stream.isatty():
            return None
        data = stream.read()
    except (OSError, ValueError):
        return None
    return data if data.strip() else None


def build_prompt(
    files: list[str], words: list[str], piped: str | None, *, cwd: Path
) -> tuple[str, list[ImageContent]]:
    """The prompt text and images: attached text files wrapped with their path (pi's
    ``<file name=...>`` form), then piped stdin, then the prompt words."""
    parts: list[str] = []
    images: list[ImageContent] = []
    for name in files:
        path = Path(os.path.expanduser(name))
        if not path.is_absolute():
            path = cwd / path
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CliError(f"cannot read @{name}: {exc.strerror or exc}") from exc
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise CliError(f"@{name} is too large to attach ({len(data)} bytes)")
        mime = image_mime_type(data[:16])
        if mime is not None:
            from baton.providers.messages import ImageContent

            images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
            parts.append(f'<file name="{name}"></file>')
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CliError(f"@{name} is not a text or image file") from exc
        parts.append(f'<file name="{name}">\n{text}\n</file>')
    if piped:
        parts.append(piped.rstrip("\n"))
    if words:
        parts.append(" ".join(words))
    return "\n\n".join(parts), images

"""Assembling the first prompt: ``@file`` attachments, piped stdin and the prompt words."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.tui.attachments import AttachmentError, load_attachment
from baton.tui.cli_errors import CliError

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent

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
    """The prompt text and images: attached files (see :mod:`baton.tui.attachments`), then
    piped stdin, then the prompt words."""
    parts: list[str] = []
    images: list[ImageContent] = []
    for name in files:
        try:
            attachment = load_attachment(name, cwd)
        except AttachmentError as exc:
            raise CliError(str(exc)) from exc
        parts.append(attachment.block)
        if attachment.image is not None:
            images.append(attachment.image)
    if piped:
        parts.append(piped.rstrip("\n"))
    if words:
        parts.append(" ".join(words))
    return "\n\n".join(parts), images

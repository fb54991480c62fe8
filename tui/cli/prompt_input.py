"""Assembling the first prompt: ``@file`` attachments, piped stdin and the prompt words."""

from __future__ import annotations

import os
import select
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.surrogates import has_surrogates, join_surrogates
from baton.tui.cli.attachments import MAX_ATTACHMENT_BYTES, AttachmentError, load_attachment, read_bounded
from baton.tui.cli.errors import CliError

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent

STDIN_GRACE_SECONDS = 0.5
"""With a prompt on the command line, a pipe on stdin is read only if it has data (or its end)
within this time: ``sleep 8 | baton -p hi`` does not wait for ``sleep``."""


def clean_text(text: str) -> str:
    """Command-line or stdin text made valid Unicode: bytes the locale could not decode (kept by
    Python as lone surrogates) are decoded as UTF-8, what is not UTF-8 becomes U+FFFD."""
    if not has_surrogates(text):
        return text
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:
        return join_surrogates(text)
    return join_surrogates(raw.decode("utf-8", "replace"))


def read_piped_stdin(*, have_prompt: bool = False, limit: int = MAX_ATTACHMENT_BYTES) -> str | None:
    """Standard input as text, or ``None`` when there is none to read.

    The rule: a terminal, a device (``< /dev/null``, ``< /dev/zero``) or a closed stdin is never
    read. A regular file is read when it fits ``limit``. A pipe (or socket) is read to its end
    when the prompt comes from stdin alone; with a prompt on the command line, only when data or
    the end of input arrives within :data:`STDIN_GRACE_SECONDS`. More than ``limit`` bytes is a
    :class:`CliError` (nothing beyond ``limit + 1`` bytes is read)."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return None
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        if os.fstat(fd).st_size > limit:
            raise CliError(f"piped input is larger than {limit // (1024 * 1024)} MB; pass a smaller file")
        data = _read_stdin(fd, limit)
    elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        if have_prompt and not _ready(fd, STDIN_GRACE_SECONDS):
            return None
        data = _read_stdin(fd, limit)
    else:
        return None
    text = clean_text(data.decode("utf-8", "replace"))
    return text if text.strip() else None


def _read_stdin(fd: int, limit: int) -> bytes:
    try:
        return read_bounded(fd, limit, "piped input")
    except AttachmentError as exc:
        raise CliError(str(exc)) from exc


def _ready(fd: int, timeout: float) -> bool:
    """True when ``fd`` has data or its end within ``timeout`` seconds."""
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return False
    return bool(readable)


def build_prompt(
    files: list[str], words: list[str], piped: str | None, *, cwd: Path
) -> tuple[str, list[ImageContent]]:
    """The prompt text and images: attached files (see :mod:`baton.tui.cli.attachments`), then
    piped stdin, then the prompt words."""
    parts: list[str] = []
    images: list[ImageContent] = []
    for name in files:
        try:
            attachment = load_attachment(name, cwd, label=clean_text(name))
        except AttachmentError as exc:
            raise CliError(str(exc)) from exc
        parts.append(attachment.block)
        if attachment.image is not None:
            images.append(attachment.image)
    if piped:
        parts.append(piped.rstrip("\n"))
    if words:
        parts.append(clean_text(" ".join(words)))
    return "\n\n".join(parts), images

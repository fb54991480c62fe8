"""Assembling the first prompt: ``@file`` attachments, piped stdin and the prompt words."""

from __future__ import annotations

import base64
import os
import select
import stat
import sys
from pathlib import Path

from baton.providers.messages import ImageContent
from baton.providers.surrogates import has_surrogates, join_surrogates
from baton.tui.cli_errors import CliError

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
        data = _read_bounded(fd, limit, "piped input")
    elif stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        if have_prompt and not _ready(fd, STDIN_GRACE_SECONDS):
            return None
        data = _read_bounded(fd, limit, "piped input")
    else:
        return None
    text = clean_text(data.decode("utf-8", "replace"))
    return text if text.strip() else None


def _ready(fd: int, timeout: float) -> bool:
    """True when ``fd`` has data or its end within ``timeout`` seconds."""
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
    except (OSError, ValueError):
        return False
    return bool(readable)


def _read_bounded(fd: int, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes from ``fd`` to its end; more is a :class:`CliError`."""
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        except InterruptedError:
            continue
        except OSError as exc:
            raise CliError(f"cannot read {what}: {exc.strerror or exc}") from exc
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise CliError(f"{what} is larger than {limit // (1024 * 1024)} MB; pass a smaller file")


def read_attachment(path: Path, name: str, limit: int = MAX_ATTACHMENT_BYTES) -> bytes:
    """The bytes of an ``@file``: a regular file of at most ``limit`` bytes, checked before
    reading (a FIFO or device is refused without being opened for a blocking read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise CliError(f"cannot read @{name}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise CliError(f"cannot attach @{name}: it is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise CliError(f"cannot attach @{name}: not a regular file (a device, FIFO or socket)")
        if info.st_size > limit:
            raise CliError(f"@{name} is too large to attach ({info.st_size} bytes; the limit is {limit})")
        return _read_bounded(fd, limit, f"@{name}")
    finally:
        os.close(fd)


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
        data = read_attachment(path, name)
        name = clean_text(name)
        mime = image_mime_type(data[:16])
        if mime is not None:
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
        parts.append(clean_text(" ".join(words)))
    return "\n\n".join(parts), images

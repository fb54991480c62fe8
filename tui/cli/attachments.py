"""Files attached to a prompt: ``@path`` on the command line and in the editor.

A text file is sent wrapped with its path (pi's ``<file name="...">`` form) before the prompt,
an image as image content (with an empty ``<file>`` marker naming it). Anything else — too large,
binary, unreadable — is refused with a message that says so.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.errors import BatonError
from baton.tools.images import detect_image_mime

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent

MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024

_AT_REFERENCE = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|(\S+))')
_FILE_BLOCK = re.compile(r'<file name="([^"]*)">(?:\n(.*?)\n)?</file>', re.S)


class AttachmentError(BatonError):
    """A file that cannot be attached (the message names it and says why)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One attached file: its name as typed, and its text or image."""

    name: str
    size: int
    text: str | None = None
    image: ImageContent | None = None

    @property
    def block(self) -> str:
        """The ``<file>`` block that goes into the prompt text."""
        if self.text is None:
            return f'<file name="{self.name}"></file>'
        return f'<file name="{self.name}">\n{self.text}\n</file>'


def resolve(name: str, cwd: Path) -> Path:
    """``name`` as a path (``~`` expanded, relative to ``cwd``)."""
    path = Path(os.path.expanduser(name))
    return path if path.is_absolute() else cwd / path


def read_bounded(fd: int, limit: int, what: str) -> bytes:
    """At most ``limit`` bytes from ``fd`` to its end; more is an :class:`AttachmentError` (nothing
    beyond ``limit + 1`` bytes is read)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        except InterruptedError:
            continue
        except OSError as exc:
            raise AttachmentError(f"cannot read {what}: {exc.strerror or exc}") from exc
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise AttachmentError(f"{what} is larger than {limit // (1024 * 1024)} MB; pass a smaller file")


def read_attachment_bytes(path: Path, name: str, limit: int = MAX_ATTACHMENT_BYTES) -> bytes:
    """The bytes of an ``@file``: a regular file of at most ``limit`` bytes, checked before
    reading (a FIFO or device is refused without being opened for a blocking read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise AttachmentError(f"cannot read @{name}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise AttachmentError(f"cannot attach @{name}: it is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise AttachmentError(f"cannot attach @{name}: not a regular file (a device, FIFO or socket)")
        if info.st_size > limit:
            raise AttachmentError(f"@{name} is too large to attach ({info.st_size} bytes; the limit is "
                                  f"{limit // (1024 * 1024)} MB)")
        return read_bounded(fd, limit, f"@{name}")
    finally:
        os.close(fd)


def load_attachment(name: str, cwd: Path, *, label: str | None = None) -> Attachment:
    """Read ``name`` for attaching; raises :class:`AttachmentError` saying what is wrong.
    ``label`` is the name shown in the prompt (default ``name``)."""
    shown = label or name
    data = read_attachment_bytes(resolve(name, cwd), shown)
    mime = detect_image_mime(data[:16])
    if mime is not None:
        from baton.providers.messages import ImageContent

        image = ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime)
        return Attachment(shown, len(data), image=image)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AttachmentError(f"@{shown} is not a text or image file") from exc
    if "\x00" in text:
        raise AttachmentError(f"@{shown} is not a text or image file (it holds NUL bytes)")
    return Attachment(shown, len(data), text=text)


def file_references(text: str, cwd: Path) -> list[str]:
    """The ``@path`` (or ``@"path with spaces"``) references in ``text`` that name existing
    files, in order, each once. Other ``@words`` are plain text."""
    found: list[str] = []
    for match in _AT_REFERENCE.finditer(text):
        name = match.group(1) or match.group(2)
        name = name.rstrip(".,;:!?)") if match.group(2) else name
        if name and name not in found and resolve(name, cwd).is_file():
            found.append(name)
    return found


def attach(text: str, cwd: Path) -> tuple[str, list[ImageContent], list[Attachment]]:
    """The prompt for ``text`` with its ``@file`` references attached: file blocks first, then
    the text as typed. Raises :class:`AttachmentError` for the first file that cannot be sent."""
    attachments = [load_attachment(name, cwd) for name in file_references(text, cwd)]
    if not attachments:
        return text, [], []
    blocks = "\n\n".join(a.block for a in attachments)
    images = [a.image for a in attachments if a.image is not None]
    return f"{blocks}\n\n{text}", images, attachments


def collapse_file_blocks(text: str) -> str:
    """``text`` with each ``<file>`` block shown as one line naming the file (for display)."""

    def line(match: re.Match[str]) -> str:
        body = match.group(2)
        if body is None:
            return f"📎 {match.group(1)}"
        count = len(body.splitlines())  # a last line's newline ends it, it opens none
        return f"📎 {match.group(1)} ({count} line{'s' if count != 1 else ''})"

    return _FILE_BLOCK.sub(line, text)


_FILE_BLOCK_ANY = re.compile(r'<file name="([^"]*)">.*?</file>', re.S)


def prompt_title(text: str) -> str:
    """A prompt as one line for a list (the session picker): each attached file, even one whose
    block was flattened to a line, shows as ``📎 name`` instead of its content."""
    return " ".join(_FILE_BLOCK_ANY.sub(lambda match: f"📎 {match.group(1)}", text).split())


def reference_for(path: Path, cwd: Path) -> str:
    """The ``@`` reference that names ``path`` (relative inside ``cwd``, quoted with spaces)."""
    try:
        name = str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        name = str(path)
    return f'@"{name}"' if any(c.isspace() for c in name) else f"@{name}"


def pasted_image_reference(pasted: str, cwd: Path) -> str | None:
    """When ``pasted`` is the path (or ``file://`` URL) of one image file — what terminals paste
    for a dropped or copied image file — its ``@`` reference; else ``None``."""
    text = pasted.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if text.startswith("file://"):
        from urllib.parse import unquote, urlparse

        text = unquote(urlparse(text).path)
    text = text.replace("\\ ", " ")
    path = resolve(text, cwd)
    try:
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            head = handle.read(16)
    except OSError:
        return None
    return reference_for(path, cwd) if detect_image_mime(head) else None

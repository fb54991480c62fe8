"""Images for the read tool: detection by magic bytes, dimensions, optional resizing.

Supported: PNG, JPEG, GIF, WebP (what the major model APIs accept). Dimensions are parsed from the
file headers without any dependency. Resizing to at most 2000x2000 pixels and
:data:`MAX_IMAGE_BYTES` needs Pillow, which is optional: without it an image is sent as is when it
fits under the byte cap, and refused with a clear notice when it does not.
"""

from __future__ import annotations

import base64
import io
import struct
from dataclasses import dataclass

MAX_IMAGE_BYTES = 4_500_000
"""Raw size cap for an image sent to a model (headroom below Anthropic's 5 MB per image)."""
MAX_DIMENSION = 2000
SNIFF_BYTES = 64 * 1024
"""How much of a file's head :func:`image_dimensions` may need (JPEG headers can be long)."""


def detect_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_dimensions(head: bytes, mime: str) -> tuple[int, int] | None:
    """(width, height) parsed from the header bytes, or None when they cannot be read."""
    try:
        if mime == "image/png" and len(head) >= 24:
            width, height = struct.unpack(">II", head[16:24])
            return width, height
        if mime == "image/gif" and len(head) >= 10:
            width, height = struct.unpack("<HH", head[6:10])
            return width, height
        if mime == "image/webp":
            return _webp_dimensions(head)
        if mime == "image/jpeg":
            return _jpeg_dimensions(head)
    except struct.error:
        return None
    return None


def _webp_dimensions(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = 1 + int.from_bytes(head[24:27], "little")
        height = 1 + int.from_bytes(head[27:30], "little")
        return width, height
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def _jpeg_dimensions(head: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 4 <= len(head):
        if head[pos] != 0xFF:
            return None
        marker = head[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", head[pos + 2 : pos + 4])
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if pos + 9 > len(head):
                return None
            height, width = struct.unpack(">HH", head[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


@dataclass(slots=True)
class PreparedImage:
    """An image ready for a model, or the reason it cannot be sent (``data`` is None then)."""

    data: str | None
    mime_type: str
    original_width: int | None
    original_height: int | None
    width: int | None
    height: int | None
    resized: bool
    original_bytes: int
    bytes: int
    reason: str | None = None

    def dimension_note(self) -> str | None:
        """pi's note telling the model how to map coordinates back after a resize."""
        if not self.resized or not self.width or not self.original_width or not self.original_height:
            return None
        scale = self.original_width / self.width
        return (
            f"[Image: original {self.original_width}x{self.original_height}, displayed at "
            f"{self.width}x{self.height}. Multiply coordinates by {scale:.2f} to map to original image.]"
        )


def prepare_image(raw: bytes, mime: str) -> PreparedImage:
    """Fit ``raw`` within :data:`MAX_DIMENSION` and :data:`MAX_IMAGE_BYTES` (Pillow when present)."""
    dims = image_dimensions(raw[:SNIFF_BYTES], mime)
    width, height = dims if dims else (None, None)
    too_big = len(raw) > MAX_IMAGE_BYTES
    too_large = dims is not None and (dims[0] > MAX_DIMENSION or dims[1] > MAX_DIMENSION)
    if not too_big and not too_large:
        return PreparedImage(base64.b64encode(raw).decode("ascii"), mime, width, height, width, height,
                             False, len(raw), len(raw))
    resized = _resize_with_pillow(raw, mime)
    if resized is not None:
        data, new_mime, (orig_w, orig_h), (new_w, new_h) = resized
        return PreparedImage(base64.b64encode(data).decode("ascii"), new_mime, orig_w, orig_h, new_w, new_h,
                             True, len(raw), len(data))
    if not too_big:
        # Large in pixels but small in bytes: models accept it (they downscale themselves).
        return PreparedImage(base64.b64encode(raw).decode("ascii"), mime, width, height, width, height,
                             False, len(raw), len(raw))
    return PreparedImage(None, mime, width, height, None, None, False, len(raw), 0,
                         reason="too large to send and could not be resized (install Pillow to enable "
                                "resizing)")


def _resize_with_pillow(raw: bytes, mime: str) -> tuple[bytes, str, tuple[int, int], tuple[int, int]] | None:
    """Resize with Pillow, trying PNG and JPEG at falling quality and size; None without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(raw)) as opened:
            opened.load()
            image = opened.convert("RGBA") if opened.mode not in ("RGB", "RGBA", "L") else opened.copy()
    except Exception:
        return None
    original = image.size
    scale = min(1.0, MAX_DIMENSION / max(original))
    for factor in (1.0, 0.75, 0.5, 0.35, 0.25):
        size = (max(1, round(original[0] * scale * factor)), max(1, round(original[1] * scale * factor)))
        candidate = image.resize(size, Image.Resampling.LANCZOS)
        png = io.BytesIO()
        candidate.save(png, format="PNG", optimize=True)
        rgb = candidate.convert("RGB")
        for quality in (80, 70, 55, 40):
            jpeg = io.BytesIO()
            rgb.save(jpeg, format="JPEG", quality=quality)
            data, mime_type = min((png.getvalue(), "image/png"), (jpeg.getvalue(), "image/jpeg"),
                                  key=lambda option: len(option[0]))
            if len(data) <= MAX_IMAGE_BYTES:
                return data, mime_type, original, size
    return None

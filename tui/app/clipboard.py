"""An image from the system clipboard (Ctrl+V), through whichever tool the system has.

Terminals paste text only; an image on the clipboard has to be fetched: ``wl-paste`` (Wayland),
``xclip`` (X11), ``pngpaste`` or ``osascript`` (macOS). The first tool that exists and answers
with image bytes wins.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 5.0
_MAX_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ClipboardImage:
    """Image bytes and the tool that gave them, or why there are none."""

    data: bytes | None
    problem: str | None = None


def _commands() -> list[list[str]]:
    out: list[list[str]] = []
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        out.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        out.append(["xclip", "-selection", "clipboard", "-t", "image/png", "-o"])
    if sys.platform == "darwin":
        if shutil.which("pngpaste"):
            out.append(["pngpaste", "-"])
        if shutil.which("osascript"):
            out.append(["osascript", "-e", "the clipboard as «class PNGf»"])
    return out


def _osascript_bytes(output: bytes) -> bytes | None:
    # osascript prints «data PNGf89504E47...»: the image as hex.
    match = re.search(rb"\xc2\xabdata PNGf([0-9A-Fa-f]+)\xc2\xbb", output)
    return bytes.fromhex(match.group(1).decode("ascii")) if match else None


def read_clipboard_image() -> ClipboardImage:
    """The clipboard's image (PNG bytes), or a problem saying why there is none."""
    commands = _commands()
    if not commands:
        return ClipboardImage(None, "no clipboard tool found: install wl-clipboard (Wayland) or xclip (X11)"
                                    "; on macOS pngpaste")
    for command in commands:
        try:
            done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            continue
        data = _osascript_bytes(done.stdout) if command[0] == "osascript" else done.stdout
        if done.returncode == 0 and data and data.startswith(b"\x89PNG") and len(data) <= _MAX_BYTES:
            return ClipboardImage(data)
    return ClipboardImage(None, "the clipboard holds no image")


def keep_clipboard_image(data: bytes, folder: Path) -> Path:
    """Save a pasted image in ``folder`` (``$BATON_HOME/tmp``) under a fresh name; its path.
    Raises ``OSError`` when it cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"clipboard-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.png"
    path.write_bytes(data)
    return path

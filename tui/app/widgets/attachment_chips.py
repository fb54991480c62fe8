"""The line above the editor naming the files the prompt will attach (``@path`` references)."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from baton.tui.app.render import format_bytes, one_line
from baton.tui.cli.attachments import MAX_ATTACHMENT_BYTES, file_references, resolve

_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


class AttachmentChips(Static):
    """Shows ``📎 name (size)`` for each ``@file`` in the editor; hidden when there is none."""

    DEFAULT_CSS = """
    AttachmentChips { height: auto; margin: 0 2; color: $text-muted; display: none; }
    AttachmentChips.-shown { display: block; }
    """

    def __init__(self, cwd: Path, *, id: str | None = None) -> None:
        super().__init__("", markup=False, id=id)
        self.cwd = cwd
        self.names: list[str] = []

    def update_for(self, text: str) -> None:
        """Recompute the chips for the editor's ``text`` (cheap: a stat per reference)."""
        names = file_references(text, self.cwd) if "@" in text else []
        if names == self.names:
            return
        self.names = names
        self.set_class(bool(names), "-shown")
        chips: list[Content] = []
        for name in names:
            try:
                size = resolve(name, self.cwd).stat().st_size
            except OSError:
                continue
            kind = "image" if name.lower().endswith(_IMAGE_SUFFIXES) else format_bytes(size)
            style = "$text-warning" if size > MAX_ATTACHMENT_BYTES else "$text-accent"
            note = " too large" if size > MAX_ATTACHMENT_BYTES else ""
            chips.append(Content.assemble(("📎 ", style), (one_line(name, 60), "bold"), f" ({kind}{note})"))
        self.update(Content("  ").join(chips))

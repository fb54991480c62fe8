"""The change an edit or write would make, as the tool widget's diff, for the approval panel."""

from __future__ import annotations

import contextlib

from baton.providers.bounded_read import read_regular
from baton.providers.json_types import JsonMapping
from baton.tools.diff import display_diff
from baton.tools.edit_match import Edit, apply_edits, normalize_to_lf, strip_bom

_MAX_PREVIEW_BYTES = 2_000_000


def change_preview(tool: str, args: JsonMapping, real_path: str) -> str | None:
    """The display diff of the change (None when it cannot be worked out)."""
    old = _read(real_path)
    if tool == "write":
        content = args.get("content")
        return display_diff(old or "", content).diff if isinstance(content, str) else None
    if tool != "edit" or old is None:
        return None
    edits = _edits(args)
    if not edits:
        return None
    try:
        applied = apply_edits(normalize_to_lf(strip_bom(old)[1]), edits, real_path)
    except ValueError:
        return None
    return display_diff(applied.base_content, applied.new_content).diff


def _edits(args: JsonMapping) -> list[Edit]:
    out: list[Edit] = []
    items = args.get("edits")
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                old = item.get("oldText", item.get("old_text"))
                new = item.get("newText", item.get("new_text"))
                if isinstance(old, str) and isinstance(new, str):
                    out.append(Edit(old, new))
    old = args.get("oldText", args.get("old_text"))
    new = args.get("newText", args.get("new_text"))
    if isinstance(old, str) and isinstance(new, str):
        out.append(Edit(old, new))
    return out


def _read(path: str) -> str | None:
    """The file's text for the preview (None when absent, too large, a FIFO or device, or a
    symlink at the checked real path now: a question must never wait on a FIFO)."""
    with contextlib.suppress(OSError):
        return read_regular(path, _MAX_PREVIEW_BYTES, follow=False).decode("utf-8", "replace")
    return None

"""The ``edit`` tool: replace exact text in a file, one or several disjoint places at once.

Arguments: ``{path, oldText, newText}`` or ``{path, edits: [{oldText, newText}, ...]}`` (both forms
together are combined; ``edits`` sent as a JSON string is accepted). Matching is exact first, then
forgiving (see :mod:`tools.edit_match`); every ``oldText`` must be unique; all edits apply or none
does. Every byte outside the replaced spans is kept as it was (CRLF, lone CR, a UTF-8 BOM, bytes that
are not valid UTF-8); the new text takes the file's line-ending style. Files holding NUL bytes
(binary) and anything but a regular file are refused. The write is atomic; a hard-linked file is
rewritten in place so every link sees the change (see :mod:`tools.fs_atomic`).

``details``: ``{path, diff, patch, firstChangedLine, edits, added, removed, fuzzyMatch}`` — ``diff``
is the line-numbered display diff the UI renders (see :mod:`tools.diff`), ``patch`` a standard
unified diff.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, ToolError
from baton.tools.details import EditDetails
from baton.tools.diff import display_diff, unified_patch
from baton.tools.edit_match import (
    Edit,
    EditMatchError,
    apply_edits,
    detect_line_ending,
    lf_offset_mapper,
    normalize_to_lf,
    restore_line_endings,
    splice,
    strip_bom,
)
from baton.tools.file_access import FileAccess, is_text_file
from baton.tools.file_lock import file_lock
from baton.tools.fs_atomic import NotRegularFileError, atomic_write
from baton.tools.params import ToolParams
from baton.tools.paths import resolve_existing_path


class EditItem(BaseModel):
    """One replacement inside ``edits``."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    old_text: str = Field(
        alias="oldText",
        description=(
            "Exact text for one targeted replacement. It must be unique in the original file and must "
            "not overlap with any other edits[].oldText in the same call."
        ),
    )
    new_text: str = Field(alias="newText", description="Replacement text for this targeted edit.")


class EditParams(ToolParams):
    """Arguments of ``edit``."""

    path: str = Field(description="Path to the file to edit (relative or absolute)")
    old_text: str | None = Field(
        default=None, alias="oldText", description="Exact text to find and replace (must match exactly)"
    )
    new_text: str | None = Field(default=None, alias="newText", description="New text to replace the old text with")
    edits: list[EditItem] | None = Field(
        default=None,
        description=(
            "Alternative to oldText/newText: one or more targeted replacements. Each edit is matched "
            "against the original file, not incrementally. Do not include overlapping or nested edits; "
            "if two changes touch the same block or nearby lines, merge them into one edit."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_variants(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("edits"), str):
            try:
                parsed = json.loads(data["edits"])
            except ValueError:
                return data
            if isinstance(parsed, list):
                data = {**data, "edits": parsed}
        return data

    @model_validator(mode="after")
    def _need_an_edit(self) -> EditParams:
        has_pair = self.old_text is not None and self.new_text is not None
        if self.old_text is not None and self.new_text is None:
            raise ValueError("newText is required together with oldText")
        if self.new_text is not None and self.old_text is None:
            raise ValueError("oldText is required together with newText")
        if not has_pair and not self.edits:
            raise ValueError("provide oldText and newText, or a non-empty edits list")
        return self

    def all_edits(self) -> list[Edit]:
        """The edits list with the oldText/newText pair appended (pi's order)."""
        edits = [Edit(item.old_text, item.new_text) for item in self.edits or []]
        if self.old_text is not None and self.new_text is not None:
            edits.append(Edit(self.old_text, self.new_text))
        return edits


class EditTool(AgentTool):
    """Replace exact text in one file (see the module docstring)."""

    name: ClassVar[str] = "edit"
    prompt_summary: ClassVar[str] = "Make surgical edits to files (find exact text and replace)"
    details_type: ClassVar[type | None] = EditDetails
    label: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Edit a file by replacing exact text. oldText must match a unique region of the file exactly "
        "(including whitespace). To change several separate places in one file, pass edits: "
        "[{oldText, newText}, ...] instead; each is matched against the original file and they must "
        "not overlap. Use this for precise, surgical edits."
    )
    parameters: ClassVar[type[ToolParams]] = EditParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.file_access: FileAccess | None = None
        """Reads and writes text through this backend first; see :mod:`tools.file_access`."""

    async def run(
        self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult:
        """Apply the edits to ``params.path``."""
        args: EditParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        path = resolve_existing_path(args.path, self.cwd)
        edits = args.all_edits()
        async with file_lock(path):
            raw = await _read_text_first(self.file_access, path, args.path)
            if b"\x00" in raw:
                raise ToolError(
                    f"Cannot edit {args.path}: it contains NUL bytes (a binary file). The edit tool "
                    "changes text files only; use bash for binary files."
                )
            text = raw.decode("utf-8", "surrogateescape")
            bom, content = strip_bom(text)
            ending = detect_line_ending(content)
            normalized = normalize_to_lf(content)
            try:
                applied = apply_edits(normalized, edits, args.path)
            except EditMatchError as exc:
                raise ToolError(str(exc), {"path": args.path}) from None
            if signal.is_set():
                raise ToolError("Operation aborted")
            to_raw = lf_offset_mapper(content)
            spans = [(to_raw(a), to_raw(b), restore_line_endings(new, ending)) for a, b, new in applied.replacements]
            final = bom + splice(content, spans)
            try:
                if self.file_access is None or not await self.file_access.write_text(path, final):
                    atomic_write(path, final.encode("utf-8", "surrogateescape"))
            except NotRegularFileError:
                raise ToolError(f"Cannot edit {args.path}: not a regular file.") from None
            except OSError as exc:
                raise ToolError(f"Could not write {args.path}: {exc.strerror or exc}.") from None
        shown = _displayable
        diff = display_diff(shown(applied.base_content), shown(applied.new_content))
        details = {
            "path": args.path,
            "diff": diff.diff,
            "patch": unified_patch(args.path, shown(applied.base_content), shown(applied.new_content)),
            "firstChangedLine": diff.first_changed_line,
            "edits": len(edits),
            "added": diff.added,
            "removed": diff.removed,
            "fuzzyMatch": applied.used_fuzzy_match,
        }
        return AgentToolResult.text(f"Successfully replaced {len(edits)} block(s) in {args.path}.", details)


async def _read_text_first(access: FileAccess | None, path: str, shown: str) -> bytes:
    if access is not None and is_text_file(path):
        text = await access.read_text(path)
        if text is not None:
            return text.encode("utf-8", "surrogateescape")
    return _read(path, shown)


def _read(path: str, shown: str) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"Cannot edit {shown}: it is a directory.") from None
    except PermissionError:
        raise ToolError(f"Cannot edit {shown}: permission denied.") from None
    except OSError as exc:
        raise ToolError(f"Cannot edit {shown}: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(f"Cannot edit {shown}: it is a directory.")
        if not stat.S_ISREG(mode):
            raise ToolError(f"Cannot edit {shown}: not a regular file (a device, FIFO or socket).")
        try:
            return handle.read()
        except OSError as exc:
            raise ToolError(f"Cannot edit {shown}: {exc.strerror or exc}.") from None


def _displayable(text: str) -> str:
    """Undecodable bytes (kept as surrogates) shown as U+FFFD so details serialise as JSON."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

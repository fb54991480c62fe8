"""The ``edit`` tool: replace exact text in a file, one or several disjoint places at once.

Arguments: ``{path, oldText, newText}`` or ``{path, edits: [{oldText, newText}, ...]}`` (both forms
together are combined; ``edits`` sent as a JSON string is accepted). Matching is exact first, then
forgiving (see :mod:`tools.edit_match`); every ``oldText`` must be unique; all edits apply or none
does. Every byte outside the replaced spans is kept as it was (CRLF, lone CR, a UTF-8 BOM, bytes that
are not valid UTF-8); the new text takes the file's line-ending style. Files holding NUL bytes
(binary) and anything but a regular file are refused. The write is atomic (temp file + rename in
the file's own folder). The file opened is the real path the permission check approved, walked
through folder handles without following a symlink (:mod:`tools.anchored`); a folder swapped for a
symlink meanwhile, or a file changed on disk between the read and the write, stops the edit. A
file with several hard links is replaced, not written through (its other links may lie outside the
workspace); the result says so. An edit that would put ``[redacted]`` where a file holds a key the
model saw as that marker is refused, and an ``oldText`` holding the marker is told why it does not
match (:mod:`tools.hidden_values`).

``details``: ``{path, diff, patch, firstChangedLine, edits, added, removed, fuzzyMatch}`` — ``diff``
is the line-numbered display diff the UI renders (see :mod:`tools.diff`), ``patch`` a standard
unified diff.
"""

from __future__ import annotations

import asyncio
import json
import os

from pydantic import BaseModel, ConfigDict, Field, model_validator

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate, PathParameter, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.tools.anchored import (
    Anchor,
    FileWrite,
    PathChangedError,
    anchor,
    links_note,
    open_existing,
    replace_file,
)
from baton.tools.details import EditDetails
from baton.tools.diff import display_diff, unified_patch
from baton.tools.edit_match import (
    AppliedEdits,
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
from baton.tools.file_access import FileAccess, is_text_data
from baton.tools.file_lock import file_lock
from baton.tools.fs_atomic import NotRegularFileError
from baton.tools.hidden_values import adds_marker_over_hidden_value, hidden_value_miss, refusal
from baton.tools.params import ToolParams
from baton.tools.path_pins import PathPins, target_for


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
    def _accept_variants(cls, data: object) -> object:
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


class EditTool(AgentTool[EditParams, JsonObject]):
    """Replace exact text in one file (see the module docstring)."""

    name = "edit"
    prompt_summary = "Make surgical edits to files (find exact text and replace)"
    details_type = EditDetails
    label = "edit"
    kind = "edit"
    path_parameter = PathParameter("path", "existing file")
    claude_code_name = "Edit"
    prompt_guideline = "Use edit for precise changes (old text must match exactly)"
    description = (
        "Edit a file by replacing exact text. oldText must match a unique region of the file exactly "
        "(including whitespace). To change several separate places in one file, pass edits: "
        "[{oldText, newText}, ...] instead; each is matched against the original file and they must "
        "not overlap. Use this for precise, surgical edits."
    )
    parameters = EditParams

    @classmethod
    def claude_code_call(cls, args: JsonMapping, cwd: str) -> tuple[str, JsonObject]:
        """One replacement is Claude Code's ``Edit`` (``old_string``/``new_string``/``replace_all``),
        several its ``MultiEdit`` (``edits: [{old_string, new_string, replace_all}]``)."""
        _, out = super().claude_code_call(args, cwd)
        pairs = [(args.get("oldText"), args.get("newText"))] if "oldText" in args or "newText" in args else []
        items = args.get("edits")
        if isinstance(items, list):
            pairs += [(e.get("oldText"), e.get("newText")) for e in items if isinstance(e, dict)]
        shaped: list[JsonObject] = [{"old_string": old if isinstance(old, str) else "",
                                     "new_string": new if isinstance(new, str) else "", "replace_all": False}
                                    for old, new in pairs]
        if len(shaped) > 1:
            out["edits"] = list(shaped)
            return "MultiEdit", out
        if shaped:
            out.update(shaped[0])
        return "Edit", out

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.file_access: FileAccess | None = None
        """Reads and writes text through this backend first; see :mod:`tools.file_access`."""
        self.pins: PathPins | None = None
        """The paths the permission check approved (see :mod:`tools.path_pins`)."""

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Edit src/app.py``."""
        path = cls.path_of(args)
        return f"Edit {path}" if path else cls.label

    async def run(
        self, tool_call_id: str, params: EditParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Apply the edits to ``params.path``."""
        args: EditParams = params
        if signal.is_set():
            raise ToolError("Operation aborted")
        path = target_for(self.pins, self, tool_call_id, args.path, self.cwd)
        edits = args.all_edits()
        async with file_lock(path):
            try:
                with anchor(path) as place:
                    applied, outcome = await self._edit(place, args, edits, signal)
            except PathChangedError as exc:
                raise ToolError(
                    f"Cannot edit {args.path}: the path changed after it was checked ({exc.strerror}); "
                    "nothing was written."
                ) from None
            except FileNotFoundError:
                raise ToolError(f"File not found: {args.path}") from None
            except NotADirectoryError:
                raise ToolError(f"Cannot edit {args.path}: a parent path is not a directory.") from None
            except PermissionError:
                raise ToolError(f"Cannot edit {args.path}: permission denied.") from None
        shown = _displayable
        diff = display_diff(shown(applied.base_content), shown(applied.new_content))
        details: JsonObject = {
            "path": args.path,
            "diff": diff.diff,
            "patch": unified_patch(args.path, shown(applied.base_content), shown(applied.new_content)),
            "firstChangedLine": diff.first_changed_line,
            "edits": len(edits),
            "added": diff.added,
            "removed": diff.removed,
            "fuzzyMatch": applied.used_fuzzy_match,
        }
        text = f"Successfully replaced {len(edits)} block(s) in {args.path}."
        if outcome.unlinked_links:
            text += f" {links_note(outcome.unlinked_links)}"
        return AgentToolResult.text(text, details)

    async def _edit(
        self, place: Anchor, args: EditParams, edits: list[Edit], signal: asyncio.Event
    ) -> tuple[AppliedEdits, FileWrite]:
        raw, info = await self._load(place, args.path)
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
            hidden = hidden_value_miss(args.path, normalized, [normalize_to_lf(e.old_text) for e in edits])
            raise ToolError(hidden or str(exc), {"path": args.path}) from None
        if adds_marker_over_hidden_value(applied.base_content, applied.new_content):
            raise ToolError(refusal(args.path), {"path": args.path})
        if signal.is_set():
            raise ToolError("Operation aborted")
        to_raw = lf_offset_mapper(content)
        spans = [(to_raw(a), to_raw(b), restore_line_endings(new, ending)) for a, b, new in applied.replacements]
        final = bom + splice(content, spans)
        try:
            if self.file_access is not None and await self.file_access.write_text(place.path, final):
                return applied, FileWrite(created=False, unlinked_links=0)
            return applied, replace_file(place, final.encode("utf-8", "surrogateescape"), expect=info)
        except NotRegularFileError:
            raise ToolError(f"Cannot edit {args.path}: not a regular file.") from None
        except (PathChangedError, PermissionError):
            raise
        except OSError as exc:
            raise ToolError(f"Could not write {args.path}: {exc.strerror or exc}.") from None

    async def _load(self, place: Anchor, shown: str) -> tuple[bytes, os.stat_result | None]:
        """The file's bytes (the editor's text first, when one hosts baton) and its status on disk."""
        try:
            fd, info = open_existing(place)
        except FileNotFoundError:
            text = await self.file_access.read_text(place.path) if self.file_access is not None else None
            if text is None:
                raise
            return text.encode("utf-8", "surrogateescape"), None
        except IsADirectoryError:
            raise ToolError(f"Cannot edit {shown}: it is a directory.") from None
        except NotRegularFileError:
            raise ToolError(f"Cannot edit {shown}: not a regular file (a device, FIFO or socket).") from None
        with os.fdopen(fd, "rb") as handle:
            try:
                data = handle.read()
            except OSError as exc:
                raise ToolError(f"Cannot edit {shown}: {exc.strerror or exc}.") from None
        if self.file_access is not None and is_text_data(data):
            text = await self.file_access.read_text(place.path)
            if text is not None:
                return text.encode("utf-8", "surrogateescape"), info
        return data, info


def _displayable(text: str) -> str:
    """Undecodable bytes (kept as surrogates) shown as U+FFFD so details serialise as JSON."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

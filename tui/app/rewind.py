"""``/rewind`` (and Esc Esc on an empty editor): pick a prompt, then what to take back.

The first picker lists this session's prompts newest first, each with its time, model and the
files the agent changed after it (``+3 ~5 -1``), plus the states saved before earlier rewinds
(pick one to undo that rewind; its row names the files that rewind changed). Times show seconds:
two rewinds in one minute stay apart. The second asks: code and conversation, conversation only,
code only, or cancel — and lists, before you choose, the files the agent changed since then.
Files changed by hand that a code rewind would overwrite are listed and need a confirmation of
their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from baton.tui.actions.rewind import REWIND, RewindRequest
from baton.tui.app.command_registry import binds
from baton.tui.app.render import one_line
from baton.tui.app.widgets.pickers import ConfirmScreen, ListPicker, PickerItem, picker_label

if TYPE_CHECKING:
    from baton.sessions import CodingSession
    from baton.sessions.checkpoints import Checkpoint
    from baton.sessions.checkpoints.tracker import RestoreMode
    from baton.tui.app.baton_app import BatonApp

CHOICES: tuple[tuple[RestoreMode | Literal["cancel"], str], ...] = (
    ("both", "Code and conversation"),
    ("conversation", "Conversation only"),
    ("code", "Code only"),
    ("cancel", "Cancel"),
)


def checkpoint_label(point: Checkpoint) -> PickerItem[Checkpoint]:
    """A picker row: time, model, ``+a ~m -d`` and the prompt."""
    from baton.sessions.entries import iso_to_ms  # the session model is not loaded before the first paint

    ms = iso_to_ms(point.timestamp)
    when = datetime.fromtimestamp(ms / 1000).strftime("%m-%d %H:%M:%S") if ms else "      ?       "
    model = (point.model or "").rsplit("/", 1)[-1]
    changes = point.changes.summary() or "no file changes"
    text = point.label()
    if point.kind == "rewind" and point.changes:
        text += f" (it changed {_names(point.changes.files, 4)})"
    label = picker_label(
        (when, "$text-muted"), "  ",
        (f"{one_line(model, 24):<24}", "$text-muted"), "  ",
        (f"{changes:<16}", "$text-accent"), " ",
        (one_line(text, 80), "bold" if point.kind == "rewind" else ""),
    )
    return PickerItem(label, point, f"{point.label()} {model}")


def _names(files: list[str], most: int) -> str:
    return ", ".join(files[:most]) + (f" and {len(files) - most} more" if len(files) > most else "")


def changed_since(points: list[Checkpoint], picked: Checkpoint) -> list[str]:
    """The files the agent changed after ``picked`` (``points`` newest first), sorted."""
    files: set[str] = set()
    for point in points:
        if point.kind == "prompt":
            files.update(point.changes.files)
        if point is picked:
            break
    return sorted(files)


def written_outside(session: CodingSession, entry_id: str) -> list[str]:
    """Files the agent's edits and writes after ``entry_id`` on this branch changed outside the
    workspace: checkpoints cover only the workspace, so a code rewind cannot undo them."""
    from baton.providers.messages import AssistantMessage
    from baton.sessions.entries import MessageEntry
    from baton.tools import tool_type

    path = session.store.branch_path()
    start = next((i for i, e in enumerate(path) if e.id == entry_id), len(path))
    workspace = session.cwd.resolve()
    found: list[str] = []
    for entry in path[start:]:
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            continue
        for call in entry.message.tool_calls:
            tool = tool_type(call.name)
            written = tool.path_of(call.arguments) if tool.changes_files() else None
            if written is None:
                continue
            target = (workspace / Path(written).expanduser()).resolve()
            if not target.is_relative_to(workspace) and str(target) not in found:
                found.append(str(target))
    return found


def _choice_detail(files: list[str], outside: list[str]) -> Callable[[str], str | None]:
    def detail(mode: str) -> str | None:
        if mode in ("both", "code"):
            text = (f"Files the agent changed since then: {_names(files, 12)}" if files
                    else "The agent changed no files since then.")
            if outside:
                text += f"\nNot undone (outside the workspace, no checkpoint covers them): {_names(outside, 6)}"
            return text
        if mode == "conversation":
            return "Files stay as they are."
        return None

    return detail


def _skipped_detail(point: Checkpoint) -> str | None:
    if not point.skipped:
        return None
    names = ", ".join(point.skipped[:5]) + (f" and {len(point.skipped) - 5} more" if len(point.skipped) > 5 else "")
    return f"Not in this checkpoint (too large; a code rewind leaves them as they are): {names}"


@binds(REWIND)
async def cmd_rewind(app: BatonApp, args: str) -> None:
    session = app.session
    points = session.checkpoints()
    if not points:
        app.notice("Nothing to rewind to yet.")
        return
    picked = await app.push_screen_wait(ListPicker("Rewind to…", [checkpoint_label(p) for p in points],
                                                   detail=_skipped_detail))
    if picked is None:
        return
    what = "the state before that rewind" if picked.kind == "rewind" else one_line(picked.label(), 60)
    options = [PickerItem(picker_label(text), mode) for mode, text in CHOICES]
    mode = await app.push_screen_wait(ListPicker(f"Rewind to {what}", options, filterable=False,
                                                 hint="↑↓ move · Enter pick · Esc cancel",
                                                 detail=_choice_detail(changed_since(points, picked),
                                                                       written_outside(session, picked.entry_id))))
    from baton.sessions.checkpoints.rpc import RESTORE_MODES

    restore = next((m for m in RESTORE_MODES if m == mode), None)
    if restore is None:  # Cancel, or Esc
        return
    request = RewindRequest(picked.entry_id, restore)
    result = await REWIND.run(session, request)
    if result.needs_confirmation:
        if not await _confirm_hand_edits(app, result.hand_edited):
            app.notice("Rewind cancelled; nothing changed.")
            return
        result = await REWIND.run(session, replace(request, confirm_hand_edits=True))
    if result.text:
        app.editor.set_text(result.text)
    tail = "; the prompt is back in the editor." if result.text else "."
    app.notice(f"Rewound: {result.summary()}{tail}", "success")
    app.refresh_status()


async def _confirm_hand_edits(app: BatonApp, paths: list[str]) -> bool:
    listed = "\n".join(f"  {one_line(p, 100)}" for p in paths[:20])
    more = f"\n  … and {len(paths) - 20} more" if len(paths) > 20 else ""
    confirmed: bool = await app.push_screen_wait(ConfirmScreen(
        "Files changed by hand since then",
        f"The rewind would overwrite or delete these files you changed yourself:\n{listed}{more}\n\n"
        "Rewind anyway? (The current state is saved first: /rewind can undo this.)",
    ))
    return confirmed

"""The session picker (``baton -r``, ``/resume``): this directory's sessions first, Tab for every
project's, fuzzy search over name, first prompt and path, and delete with confirmation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import work
from textual.binding import Binding
from textual.content import Content

from baton.tui.app.render import fit_cells, one_line, short_path
from baton.tui.app.widgets.pickers import ConfirmScreen, ListPicker, PickerItem, picker_label, picker_row_width
from baton.tui.cli.attachments import prompt_title

if TYPE_CHECKING:
    from baton.sessions.listing import SessionInfo

HINT = "↑↓ move · Enter open · Tab this directory / all projects · Ctrl+D delete · Esc cancel · type to filter"


def age(when: datetime, now: datetime | None = None) -> str:
    """``5m``, ``3h``, ``2d``, ``6w`` — how long ago ``when`` was."""
    seconds = max(0.0, ((now or datetime.now(UTC)) - when).total_seconds())
    for unit, size in (("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def session_items(infos: Sequence[SessionInfo], *, show_project: bool, width: int = 110) -> list[PickerItem[Path]]:
    """Picker rows in columns: age, message count, model, title (name or first prompt), and the
    project directory when listing every project."""
    rows = list(infos)
    model_width = min(max((len(i.model or "—") for i in rows), default=1), 32)
    projects = [short_path(info.cwd) for info in rows] if show_project else []
    project_width = min(max((cell_len(p) for p in projects), default=1), 28)
    room = width - 2 - 5 - 2 - 6 - 2 - 2 - (project_width + 2 if show_project else 0)  # model + title
    model_width = max(min(model_width, room - 16), min(model_width, 8))  # a narrow screen cuts the model
    title_width = max(8, room - model_width)
    items = []
    for info in rows:
        first = prompt_title(info.first_message)
        title = info.name or first or "(no messages)"
        parts: list[tuple[str, str] | str] = [
            (f"{age(info.modified):>5}", "$text-muted"), "  ",
            (f"{info.message_count:>4} ✉", "$text-muted"), "  ",
            (fit_cells(info.model or "—", model_width), "$text-accent"), "  ",
            (fit_cells(title, title_width), "bold"),
        ]
        if show_project:
            parts += ["  ", (fit_cells(short_path(info.cwd), project_width), "$text-muted")]
        search = f"{title} {first} {info.cwd} {info.id}"
        items.append(PickerItem(picker_label(*parts), info.path, search))
    return items


class SessionPicker(ListPicker[Path]):
    """Choose a session to open; dismisses with its path (or ``None``)."""

    BINDINGS = [
        Binding("tab", "toggle_scope", "All projects", show=False, priority=True),
        Binding("ctrl+d", "delete", "Delete", show=False, priority=True),
    ]

    def __init__(
        self,
        here: Callable[[], Sequence[SessionInfo]],
        everywhere: Callable[[], Sequence[SessionInfo]],
        *,
        current: Path | None = None,
        width: int | None = None,
    ) -> None:
        self._here = here
        self._everywhere = everywhere
        self._all = False
        self._current = current
        self._width = width
        super().__init__("Resume a session (this directory)", self._items(), hint=HINT, empty=self._empty_text())

    def _empty_text(self) -> str:
        if self._all:
            return "No other session to resume."
        return "No other session in this directory (Tab: every project's)."

    def _infos(self) -> list[SessionInfo]:
        infos = list(self._everywhere() if self._all else self._here())
        return [i for i in infos if i.path != self._current]

    def _items(self) -> list[PickerItem[Path]]:
        return session_items(self._infos(), show_project=self._all, width=self._row_width())

    def rows_for_width(self, width: int) -> list[PickerItem[Path]] | None:
        """The sessions laid out for the new width (None when a width was given)."""
        if self._width:
            return None
        return session_items(self._infos(), show_project=self._all, width=width)

    def _row_width(self) -> int:
        # Rows wider than the box would wrap: fit the terminal when the app is there to ask
        # (``baton -r`` builds the picker without knowing the width).
        if self._width:
            return self._width
        try:
            columns = self.app.size.width
        except Exception:
            return 110
        return picker_row_width(columns) if columns > 0 else 110

    def action_toggle_scope(self) -> None:
        """Tab: this directory's sessions or every project's."""
        self._all = not self._all
        title = "Resume a session (all projects)" if self._all else "Resume a session (this directory)"
        self.empty_text = self._empty_text()
        self.set_items(self._items(), title=title)

    @work(exclusive=True, group="session-delete")
    async def action_delete(self) -> None:
        """Ctrl+D: delete the highlighted session after a confirmation."""
        from baton.sessions.errors import SessionError
        from baton.sessions.session_file import delete_session_file

        path = self.highlighted_value
        if path is None:
            return
        confirmed = await self.app.push_screen_wait(ConfirmScreen(
            "Delete this session?", Content.assemble(("The file ", ""), (str(path), "bold"),
                                                     (" will be removed for good.", "")),
        ))
        if not confirmed:
            return
        try:
            delete_session_file(path)
        except SessionError as exc:
            self.app.notify(one_line(str(exc), 200), severity="error")
            return
        self.set_items(self._items())

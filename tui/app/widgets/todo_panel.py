"""The task list the model keeps with ``todo_write``, pinned above the editor.

It shows the latest list in full while a run goes on and one line (``Tasks 3/5 done · now: …``)
when the run is over. The list arrives in events (a ``todo_write`` result's details) or, for a
resumed session, from its last ``todo_write`` result; the panel keeps no other state.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from baton.tools.todo_write import Todo, summary
from baton.tui.app.render import one_line

MAX_SHOWN = 12
"""Tasks shown in full; the rest are counted."""
MARKS = {"pending": ("☐", "$text-muted"), "in_progress": ("▶", "$text-accent"), "completed": ("☑", "$text-success")}


class TodoPanel(Static):
    """The pinned task list (see the module docstring)."""

    DEFAULT_CSS = """
    TodoPanel { height: auto; max-height: 14; margin: 0 1; padding: 0 1; display: none; }
    TodoPanel.-shown { display: block; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.todos: tuple[Todo, ...] = ()
        self.collapsed = False

    def show_todos(self, todos: Sequence[Todo], *, collapsed: bool | None = None) -> None:
        """Show ``todos`` (an empty list hides the panel); ``collapsed``: one line, or the whole list."""
        self.todos = tuple(todos)
        if collapsed is not None:
            self.collapsed = collapsed
        self._paint()

    def set_collapsed(self, collapsed: bool) -> None:
        """One line (a run is over) or the whole list (a run goes on)."""
        if collapsed != self.collapsed:
            self.collapsed = collapsed
            self._paint()

    def _paint(self) -> None:
        self.set_class(bool(self.todos), "-shown")
        if not self.todos:
            self.update("")
            return
        if self.collapsed:
            self.update(self._one_line())
            return
        rows = [Content.styled(f"Tasks ({summary(self.todos)})", "bold")]
        for todo in self.todos[:MAX_SHOWN]:
            mark, style = MARKS[todo.status]
            text = one_line(todo.shown, 200)
            rows.append(Content.assemble((f"{mark} ", style),
                                         (text, "strike $text-muted" if todo.status == "completed" else style)))
        if len(self.todos) > MAX_SHOWN:
            rows.append(Content.styled(f"… {len(self.todos) - MAX_SHOWN} more", "$text-muted"))
        self.update(Content("\n").join(rows))

    def _one_line(self) -> Content:
        current = next((t for t in self.todos if t.status == "in_progress"), None)
        tail = f" · now: {one_line(current.shown, 80)}" if current is not None else ""
        return Content.assemble(("Tasks ", "bold"), (f"{summary(self.todos)}{tail}", "$text-muted"))

"""Modal pickers: a filterable list (models, sessions, fork points, tree, thinking levels) and a
yes/no confirmation. Labels are built from cleaned text, never markup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from baton.tui.app.files import fuzzy_score
from baton.tui.app.render import safe

T = TypeVar("T")


def picker_row_width(columns: int) -> int:
    """Cells a picker row can use on a screen ``columns`` wide (the box is 94% of the screen, at
    most 150, minus its frame)."""
    return max(min(150, columns * 94 // 100) - 8, 20)


@dataclass(frozen=True, slots=True)
class PickerItem(Generic[T]):
    """One choice: what it shows, what filtering matches against, what it returns."""

    label: Content
    value: T
    search: str = ""


class ListPicker(ModalScreen[T | None], Generic[T]):
    """A filterable list in a box; Enter picks, Esc cancels. ``detail`` renders extra text for the
    highlighted item (the model picker shows the handoff preview there)."""

    DEFAULT_CSS = """
    ListPicker { align: center middle; background: $background 60%; }
    ListPicker > Vertical {
        width: 94%; max-width: 150; height: auto; max-height: 85%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    ListPicker .picker-title { text-style: bold; height: auto; }
    ListPicker Input, ListPicker Input:focus {
        border: none; height: 1; padding: 0 1; margin: 0 0 1 0; background: $boost;
    }
    ListPicker OptionList, ListPicker OptionList:focus {
        height: auto; max-height: 50vh; border: none; padding: 0; background: $surface;
    }
    ListPicker .picker-detail { height: auto; color: $text-warning; margin: 1 0 0 0; }
    ListPicker .picker-hint { height: auto; color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("enter", "pick", "Pick", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
    ]

    def __init__(
        self,
        title: str,
        items: Sequence[PickerItem[T]],
        *,
        initial: int = 0,
        filter_text: str = "",
        detail: Callable[[T], Content | str | None] | None = None,
        hint: str = "↑↓ move · Enter pick · Esc cancel · type to filter",
        filterable: bool = True,
        layout: Callable[[int], Sequence[PickerItem[T]]] | None = None,
        empty: str | None = None,
    ) -> None:
        super().__init__()
        self._layout = layout
        self.empty_text = empty
        """Said in the box when there is nothing to pick (instead of an empty box)."""
        self.title_text = title
        self.items = list(items)
        self._shown: list[PickerItem[T]] = list(self.items)
        self._initial = initial
        self._filter_text = filter_text
        self._detail_fn = detail
        # A list without a filter box cannot be typed into: the default hint must not say so.
        self._hint = hint if filterable else hint.replace(" · type to filter", "")
        self._filterable = filterable
        self._list = OptionList()
        self._detail = Static("", markup=False, classes="picker-detail")
        self._input = Input(value=filter_text, placeholder="filter…")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(self.title_text), markup=False, classes="picker-title")
            if self._filterable:
                yield self._input
            yield self._list
            yield self._detail
            yield Static(Content(self._hint), markup=False, classes="picker-hint")

    def on_mount(self) -> None:
        self._apply_filter(self._filter_text, keep=self._initial if not self._filter_text else 0)
        if self._filterable:
            self._input.focus()
        else:
            self._list.focus()

    @property
    def highlighted_value(self) -> T | None:
        """The value of the highlighted item."""
        index = self._list.highlighted
        if index is None or not (0 <= index < len(self._shown)):
            return None
        return self._shown[index].value

    def set_items(self, items: Sequence[PickerItem[T]], *, title: str | None = None) -> None:
        """Replace the choices (the filter text stays applied)."""
        self.items = list(items)
        if title is not None:
            self.title_text = title
            self.query_one(".picker-title", Static).update(safe(title))
        self._apply_filter(self._input.value if self._filterable else "", keep=0)

    def rows_for_width(self, width: int) -> Sequence[PickerItem[T]] | None:
        """The choices laid out for rows ``width`` cells wide (``layout``), or None when they do
        not depend on the width."""
        return self._layout(width) if self._layout is not None else None

    def on_resize(self, event: events.Resize) -> None:
        """Lay the rows out again for the new width (they would wrap, or leave space unused)."""
        rows = self.rows_for_width(picker_row_width(event.size.width))
        if rows is None:
            return
        value = self.highlighted_value
        self.items = list(rows)
        self._apply_filter(self._input.value if self._filterable else "", keep=0)
        index = next((i for i, item in enumerate(self._shown) if item.value == value), None)
        if index is not None:
            self._list.highlighted = index

    @on(Input.Changed)
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply_filter(event.value, keep=0)

    def _apply_filter(self, text: str, *, keep: int) -> None:
        query = text.strip()
        if query:
            scored = [(fuzzy_score(query, item.search or item.label.plain), i) for i, item in enumerate(self.items)]
            ranked = sorted(((s, i) for s, i in scored if s is not None), key=lambda p: (-p[0], p[1]))
            self._shown = [self.items[i] for _, i in ranked]
        else:
            self._shown = list(self.items)
        self._list.clear_options()
        self._list.add_options([Option(item.label) for item in self._shown])
        if self._shown:
            self._list.highlighted = min(max(keep, 0), len(self._shown) - 1)
        self._update_detail()

    @on(OptionList.OptionHighlighted)
    def _highlight_changed(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._update_detail()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_pick()

    def _update_detail(self) -> None:
        value = self.highlighted_value
        if not self._shown and self.empty_text:
            self._detail.update(safe(self.empty_text if not self.items else "Nothing matches the filter."))
            self._detail.display = True
            return
        if self._detail_fn is None or value is None:
            self._detail.display = False
            return
        detail = self._detail_fn(value)
        if not detail:
            self._detail.display = False
            return
        self._detail.update(detail if isinstance(detail, Content) else safe(detail))
        self._detail.display = True

    def action_move(self, delta: int) -> None:
        """Move the highlight."""
        if not self._shown:
            return
        current = self._list.highlighted or 0
        self._list.highlighted = max(0, min(len(self._shown) - 1, current + delta))

    def action_pick(self) -> None:
        """Return the highlighted value."""
        value = self.highlighted_value
        if value is not None:
            self.dismiss(value)

    def action_cancel(self) -> None:
        """Close without a choice."""
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A question with Enter = yes, Esc = no."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; background: $background 60%; }
    ConfirmScreen > Vertical {
        width: 80%; max-width: 100; height: auto; border: round $warning; background: $surface;
        padding: 0 1;
    }
    ConfirmScreen .confirm-title { text-style: bold; }
    ConfirmScreen .confirm-hint { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("enter,y", "answer(True)", show=False, priority=True),
        Binding("escape,n", "answer(False)", show=False, priority=True),
    ]

    def __init__(self, title: str, body: Content | str, hint: str = "Enter confirm · Esc cancel") -> None:
        super().__init__()
        self._title = title
        self._body = body if isinstance(body, Content) else safe(body)
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe(self._title), markup=False, classes="confirm-title")
            yield Static(self._body, markup=False)
            yield Static(Content(self._hint), markup=False, classes="confirm-hint")

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)

    def on_click(self, event: events.Click) -> None:
        event.stop()


def picker_label(*parts: tuple[str, str] | str) -> Content:
    """A label from untrusted parts: ``("text", "style")`` pairs or plain strings (cleaned)."""
    pieces: list[Content] = []
    for part in parts:
        if isinstance(part, tuple):
            text, style = part
            pieces.append(safe(text, style))
        else:
            pieces.append(safe(part))
    return Content.assemble(*pieces)

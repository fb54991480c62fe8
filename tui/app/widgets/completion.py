"""The completion popup above the editor (``/`` commands, ``@`` files, command arguments)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True, slots=True)
class Completion:
    """One suggestion: ``replacement`` replaces the text from ``start`` to the cursor."""

    replacement: str
    label: str
    description: str = ""


class CompletionList(OptionList, can_focus=False):
    """A small list of suggestions; the editor drives it (it never takes focus)."""

    DEFAULT_CSS = """
    CompletionList {
        display: none; height: auto; max-height: 10; margin: 0 1;
        border: round $primary 50%; background: $surface; padding: 0 1;
    }
    CompletionList.-visible { display: block; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Completion] = []
        self.start = 0

    @property
    def is_open(self) -> bool:
        """Whether suggestions are showing."""
        return self.has_class("-visible")

    def show(self, items: list[Completion], start: int) -> None:
        """Show ``items`` (replacing from column ``start`` of the cursor's line)."""
        self.items = items
        self.start = start
        self.clear_options()
        if not items:
            self.hide()
            return
        options = []
        for item in items:
            label = Content.styled(item.label, "bold")
            if item.description:
                label = Content.assemble(label, ("  " + item.description, "$text-muted"))
            options.append(Option(label))
        self.add_options(options)
        self.highlighted = 0
        self.add_class("-visible")

    def hide(self) -> None:
        """Hide the popup."""
        self.remove_class("-visible")
        self.items = []

    def move(self, delta: int) -> None:
        """Move the highlight by ``delta`` (wrapping)."""
        if not self.items:
            return
        current = self.highlighted or 0
        self.highlighted = (current + delta) % len(self.items)

    @property
    def selected(self) -> Completion | None:
        """The highlighted suggestion."""
        if not self.items or self.highlighted is None:
            return None
        return self.items[self.highlighted]

"""The prompt editor: a multi-line TextArea with history and completion.

Enter sends; Shift+Enter, Ctrl+J or a backslash before Enter insert a newline; Alt+Enter, or Tab
while the agent works (``running``), sends as a follow-up; Up/Down on the first/last line walk the
history; ``/`` and ``@`` open completions (Tab or Enter accepts; Enter on a slash command also runs
it; Esc closes); Ctrl+D on an empty editor asks to quit; Alt+Up asks for the queued messages back.

In terminals without the kitty keyboard protocol (tmux, most Linux terminals) Shift+Enter and
Alt+Enter arrive as a plain Enter, so each has an alternative that every terminal delivers:
Ctrl+J or a backslash then Enter for a newline, Tab (while the agent works) for a follow-up.
Alt+Up arrives there as Escape then Up; the editor waits a moment after Escape so that pair still
means Alt+Up and not "abort".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from baton.tui.app.completer import Completer
from baton.tui.app.widgets.completion import CompletionList

ESCAPE_PAIR_WINDOW = 0.05
"""Seconds to wait after Escape for an Up that would make it Alt+Up."""
MAX_HISTORY = 500


class PromptEditor(TextArea):
    """See the module docstring."""

    DEFAULT_CSS = """
    PromptEditor {
        height: auto; min-height: 1; max-height: 12; border: none; padding: 0 1;
        background: $surface;
    }
    PromptEditor:focus { border: none; }
    """

    class Submitted(Message):
        """The user sent the editor's text (``follow_up``: Alt+Enter)."""

        def __init__(self, text: str, follow_up: bool = False) -> None:
            super().__init__()
            self.text = text
            self.follow_up = follow_up

    class QuitRequested(Message):
        """Ctrl+D on an empty editor."""

    class DequeueRequested(Message):
        """Alt+Up: pull queued messages back into the editor."""

    class EscapePressed(Message):
        """Escape that was not part of Alt+Up and not closing a completion."""

    class ExternalEditorRequested(Message):
        """Ctrl+G: edit the text in $EDITOR."""

    class ScrollRequested(Message):
        """Page Up / Page Down: scroll the transcript."""

        def __init__(self, direction: int) -> None:
            super().__init__()
            self.direction = direction

    def __init__(
        self,
        *,
        completer: Completer | None = None,
        completion: CompletionList | None = None,
        history: list[str] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            "",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            compact=True,
            placeholder="Message baton…  (/ commands · @ files · ! shell)",
            id=id,
        )
        self.completer = completer
        self.completion = completion
        self.prompt_history: list[str] = list(history or [])[-MAX_HISTORY:]
        self._history_index: int | None = None
        self._draft = ""
        self._escape_timer: Timer | None = None
        self._suppress_completion = False
        self.running = False
        """Set by the app while the agent works: Tab then queues a follow-up."""
        self._blink_stop: Timer | None = None
        self._blink_armed_at = 0.0
        self._typed = False

    # The cursor blinks for BLINK_SECONDS after the last key, then stays lit: a blinking cursor
    # repaints twice a second for as long as the app is open, the only work an idle app does.
    # Until the first key it stays lit too, so an app just opened and left alone does nothing.
    BLINK_SECONDS = 10.0

    def on_mount(self) -> None:
        # Focus may come before TextArea makes its blink timer (running when focused): pause it.
        self.call_later(self._restart_blink)

    def _restart_blink(self) -> None:
        if not self._typed:
            self._pause_blink(visible=self.has_focus)
            return
        super()._restart_blink()
        self._arm_blink_stop()

    def _arm_blink_stop(self) -> None:
        if not self.cursor_blink or not self.is_mounted:
            return
        now = time.monotonic()
        if self._blink_stop is not None and now - self._blink_armed_at < 1.0:
            return  # typing fast: re-arm at most once a second
        if self._blink_stop is not None:
            self._blink_stop.stop()
        self._blink_armed_at = now
        self._blink_stop = self.set_timer(self.BLINK_SECONDS, self._stop_blinking, name="editor-blink-stop")

    def _stop_blinking(self) -> None:
        self._blink_stop = None
        self._pause_blink(visible=self.has_focus)

    # -- history ---------------------------------------------------------------------------------

    def remember(self, text: str) -> None:
        """Add a sent text to the history (no consecutive duplicates)."""
        if text.strip() and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
            del self.prompt_history[:-MAX_HISTORY]
        self._history_index = None
        self._draft = ""

    def _history_move(self, delta: int) -> bool:
        if not self.prompt_history:
            return False
        if self._history_index is None:
            if delta > 0:
                return False
            self._draft = self.text
            index = len(self.prompt_history) - 1
        else:
            index = self._history_index + delta
            if index >= len(self.prompt_history):
                self._history_index = None
                self._set_text(self._draft)
                return True
            if index < 0:
                return True
        self._history_index = index
        self._set_text(self.prompt_history[index])
        return True

    def _set_text(self, text: str) -> None:
        self._suppress_completion = True
        self.load_text(text)
        lines = text.split("\n")
        self.move_cursor((len(lines) - 1, len(lines[-1])))

    def set_text(self, text: str) -> None:
        """Replace the editor's text (cursor at the end)."""
        self._set_text(text)
        self._history_index = None

    # -- keys ------------------------------------------------------------------------------------

    async def _on_paste(self, event: events.Paste) -> None:
        self._typed = True
        # A pasted path of an image file (a file dropped on the terminal) attaches the image.
        if self.completer is not None:
            from baton.tui.cli.attachments import pasted_image_reference

            reference = pasted_image_reference(event.text, self.completer.index.cwd)
            if reference is not None:
                event.prevent_default()
                event.stop()
                self.insert(reference + " ")
        # Otherwise TextArea's own handler (Textual runs it after this one) inserts the text.

    async def _on_key(self, event: events.Key) -> None:
        self._typed = True
        key = event.key
        popup = self.completion
        if popup is not None and popup.is_open:
            if key in ("up", "down"):
                popup.move(-1 if key == "up" else 1)
                return self._consume(event)
            if key in ("tab", "enter"):
                completing_command = self.text.startswith("/") and "\n" not in self.text
                self._accept_completion()
                if key == "enter" and completing_command:
                    # Enter on a slash command (or its argument) runs it, as in Claude Code;
                    # Tab only completes.
                    self._submit(follow_up=False)
                return self._consume(event)
            if key == "escape":
                popup.hide()
                return self._consume(event)
        if key == "up" and self._escape_timer is not None:
            self._escape_timer.stop()
            self._escape_timer = None
            self.post_message(self.DequeueRequested())
            return self._consume(event)
        handled = self._handle_key(key)
        if handled:
            return self._consume(event)
        await super()._on_key(event)

    def _handle_key(self, key: str) -> bool:
        """Act on one of the editor's own keys (:data:`_KEYS`); False for any other key, or one
        that means nothing where the cursor is (the text area then handles it)."""
        handler = self._KEYS.get(key)
        return handler is not None and handler(self)

    def _enter(self) -> bool:
        if self._backslash_before_cursor():
            # "\" + Enter: a newline that works in every terminal (as in Claude Code).
            row, column = self.cursor_location
            self.replace("\n", (row, column - 1), (row, column))
        else:
            self._submit(follow_up=False)
        return True

    def _newline(self) -> bool:
        self.insert("\n")
        return True

    def _follow_up(self) -> bool:
        self._submit(follow_up=True)
        return True

    def _history_back(self) -> bool:
        if self.cursor_location[0] != 0:
            return False
        self._history_move(-1)
        return True

    def _history_forward(self) -> bool:
        if self.cursor_location[0] != self.document.line_count - 1:
            return False
        self._history_move(1)
        return True

    def _escape(self) -> bool:
        # Wait a moment: Escape then Up is how many terminals send Alt+Up.
        if self._escape_timer is not None:
            self._escape_timer.stop()
        self._escape_timer = self.set_timer(ESCAPE_PAIR_WINDOW, self._escape_timeout)
        return True

    def _quit(self) -> bool:
        if self.text:
            return False
        self.post_message(self.QuitRequested())
        return True

    def _tab(self) -> bool:
        if self.running and self.text.strip() and not self._completion_applies():
            self._submit(follow_up=True)
        else:
            self._open_completion(force=True)
        return True

    def _post(self, message: Message) -> bool:
        self.post_message(message)
        return True

    _KEYS: ClassVar[dict[str, Callable[[PromptEditor], bool]]] = {
        "enter": _enter,
        "shift+enter": _newline,
        "ctrl+j": _newline,
        "newline": _newline,
        "alt+enter": _follow_up,
        "up": _history_back,
        "down": _history_forward,
        "alt+up": lambda editor: editor._post(editor.DequeueRequested()),
        "escape": _escape,
        "ctrl+d": _quit,
        "ctrl+g": lambda editor: editor._post(editor.ExternalEditorRequested()),
        "tab": _tab,
        "pageup": lambda editor: editor._post(editor.ScrollRequested(-1)),
        "pagedown": lambda editor: editor._post(editor.ScrollRequested(1)),
    }
    """The editor's own keys and what each does."""

    @staticmethod
    def _consume(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    def _escape_timeout(self) -> None:
        self._escape_timer = None
        self.post_message(self.EscapePressed())

    def _backslash_before_cursor(self) -> bool:
        row, column = self.cursor_location
        return column > 0 and self.document[row][column - 1] == "\\" and not self.selected_text

    def _completion_applies(self) -> bool:
        """True when Tab would complete something at the cursor (a command or an ``@`` path)."""
        if self.completer is None:
            return False
        row, column = self.cursor_location
        result = self.completer.complete(self.document[row][:column], first_line=row == 0)
        return result is not None and bool(result[1])

    def _submit(self, *, follow_up: bool) -> None:
        text = self.text
        if not text.strip():
            return
        self.post_message(self.Submitted(text, follow_up))
        # The agent now works: the cursor stays lit until the next key (a blink would repaint the
        # editor beside the streaming transcript twice a second).
        if self._blink_stop is not None:
            self._blink_stop.stop()
        self._stop_blinking()

    # -- completion ------------------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._suppress_completion:
            self._suppress_completion = False
            if self.completion is not None:
                self.completion.hide()
            return
        self._open_completion(force=False)

    def _open_completion(self, *, force: bool) -> None:
        popup, completer = self.completion, self.completer
        if popup is None or completer is None:
            return
        row, column = self.cursor_location
        line = self.document[row][:column]
        result = completer.complete(line, first_line=row == 0)
        if result is None:
            popup.hide()
            return
        start, items = result
        if not items or (not force and len(items) == 1 and items[0].replacement == line[start:]):
            popup.hide()
            return
        popup.show(items, start)

    def refresh_completion(self) -> None:
        """Recompute suggestions (e.g. once the file list has loaded)."""
        if self.completion is not None:
            self._open_completion(force=False)

    def _accept_completion(self) -> None:
        popup = self.completion
        if popup is None:
            return
        choice = popup.selected
        start = popup.start
        popup.hide()
        if choice is None:
            return
        row, column = self.cursor_location
        replacement = choice.replacement
        if not replacement.endswith("/"):
            replacement += " "
        self.replace(replacement, (row, start), (row, column))

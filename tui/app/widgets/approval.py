"""The approval panel: above the editor, one question at a time (parallel calls queue).

Keys: ``y`` allow once, ``a`` allow always (saves the rule shown; ``e`` edits it first, Enter
saves the edited rule), ``n`` deny, ``r`` deny with a reason for the model (typed, then Enter),
Esc deny and stop the turn. It implements the session's
approver: :meth:`ApprovalPanel.ask` returns when the user has answered.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from baton.sessions.permissions.persist import LOCAL_RULES_FILE
from baton.tui.app.render import clean, one_line, safe
from baton.tui.app.widgets.tool_render import render_diff

if TYPE_CHECKING:  # the app paints before the session layer is imported
    from baton.sessions.permissions.approval import AnswerKind, ApprovalAnswer, ApprovalRequest

_MAX_BODY_LINES = 16


_KINDS: dict[str, AnswerKind] = {kind: kind for kind in ("allow_once", "allow_always", "deny", "abort")}


def _answer(kind: str, *, rule: str | None = None, reason: str | None = None) -> ApprovalAnswer:
    """The answer ``kind`` (a key binding's name; anything else denies)."""
    from baton.sessions.permissions.approval import ApprovalAnswer

    return ApprovalAnswer(_KINDS.get(kind, "deny"), rule=rule, reason=reason)


@dataclass
class _Pending:
    request: ApprovalRequest
    answer: asyncio.Future[ApprovalAnswer]


class ApprovalPanel(Vertical, can_focus=True):
    """Asks the user about tool calls (see the module docstring)."""

    DEFAULT_CSS = """
    ApprovalPanel { height: auto; max-height: 24; margin: 0 1; padding: 0 1; display: none;
                    border: round $warning; background: $panel; }
    ApprovalPanel.-open { display: block; }
    ApprovalPanel:focus-within { border: round $warning; }
    ApprovalPanel #approval-title { color: $text-warning; text-style: bold; }
    ApprovalPanel #approval-body { max-height: 18; }
    ApprovalPanel #approval-rule { color: $text-muted; }
    ApprovalPanel #approval-keys { color: $text-muted; }
    ApprovalPanel Input { display: none; height: 3; }
    ApprovalPanel Input.-editing { display: block; }
    """
    BINDINGS = [
        Binding("y", "answer('allow_once')", "Allow once", show=False),
        Binding("a", "answer('allow_always')", "Allow always", show=False),
        Binding("n", "answer('deny')", "Deny", show=False),
        Binding("escape", "answer('abort')", "Deny and stop", show=False),
        Binding("e", "edit_rule", "Edit rule", show=False),
        Binding("r", "deny_with_reason", "Deny with a reason", show=False),
    ]

    class Closed(Message):
        """The last queued question was answered (the app gives the editor its focus back)."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._queue: list[_Pending] = []
        self._rule: str | None = None
        self._typing: str = "rule"
        """What the input holds while shown: the ``rule`` to save, or the ``reason`` for a denial."""

    def compose(self) -> ComposeResult:
        yield Static(id="approval-title")
        yield Static(id="approval-body")
        yield Static(id="approval-rule")
        yield Input(id="approval-rule-input", placeholder="rule, e.g. bash(npm run test:*)")
        yield Static(id="approval-keys")

    @property
    def current(self) -> ApprovalRequest | None:
        """The question shown now."""
        return self._queue[0].request if self._queue else None

    @property
    def pending(self) -> int:
        """How many questions wait (the one shown included)."""
        return len(self._queue)

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The approver: queue ``request``, return the user's answer."""
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        item = _Pending(request, future)
        self._queue.append(item)
        future.add_done_callback(lambda _: self._drop(item))
        if len(self._queue) == 1:
            self._show()
        else:
            self._refresh_keys()
        return await future

    def _drop(self, item: _Pending) -> None:
        """A question answered or withdrawn (the run was aborted): show the next one."""
        was_current = bool(self._queue) and self._queue[0] is item
        if item in self._queue:
            self._queue.remove(item)
        if not self._queue:
            self.remove_class("-open")
            self.post_message(self.Closed())
        elif was_current:
            self._show()

    def _show(self) -> None:
        request = self._queue[0].request
        self._rule = request.proposed_rule
        self.query_one("#approval-title", Static).update(self._title(request))
        self.query_one("#approval-body", Static).update(self._body(request))
        self._refresh_rule()
        editor = self.query_one(Input)
        editor.remove_class("-editing")
        self._refresh_keys()
        self.add_class("-open")
        self.focus()

    def _title(self, request: ApprovalRequest) -> Content:
        if request.kind == "unsandboxed":  # the reason names what it would touch: .git/index.lock, the network
            return Content.assemble(("The sandbox blocked this command: ", "bold $text-warning"),
                                    safe(one_line(request.reason, 200), "$text-warning"),
                                    (". Run it again without the sandbox?", "bold"))
        return Content.assemble(("Allow ", "bold"), safe(one_line(request.summary, 200), "bold $text-accent"),
                                ("?  ", "bold"), safe(one_line(request.reason, 160), "$text-muted"))

    def _body(self, request: ApprovalRequest) -> Content:
        if request.diff:
            lines = request.diff.rstrip("\n").split("\n")
            shown = render_diff("\n".join(lines[:_MAX_BODY_LINES]))
            more = len(lines) - _MAX_BODY_LINES
            return Content.assemble(shown, f"\n… {more} more lines" if more > 0 else "")
        if request.tool_name == "bash":
            command = str(request.args.get("command", ""))
            lines = clean(command).split("\n")
            body = Content.assemble(("$ ", "$text-muted"), safe("\n  ".join(lines[:_MAX_BODY_LINES]), "$text"))
            if request.output:
                tail = clean(request.output).rstrip("\n").split("\n")[-5:]
                body = Content.assemble(body, "\n", safe("\n".join(tail), "$text-error"))
            return body
        args = ", ".join(f"{k}={one_line(str(v), 60)}" for k, v in list(request.args.items())[:6])
        return safe(f"{request.tool_name}({args})", "$text")

    def _refresh_rule(self) -> None:
        text = f"always allow: {self._rule}  (a saves it to {LOCAL_RULES_FILE})" if self._rule \
            else "no rule to save for this call"
        self.query_one("#approval-rule", Static).update(safe(text, "$text-muted"))

    def _refresh_keys(self) -> None:
        keys = "y allow once · a allow always · e edit rule · n deny · r deny with a reason · Esc deny and stop"
        if self._queue and not self._queue[0].request.proposed_rule:
            keys = "y allow once · n deny · r deny with a reason · Esc deny and stop"
        if len(self._queue) > 1:
            keys += f"   ({len(self._queue) - 1} more waiting)"
        self.query_one("#approval-keys", Static).update(Content.styled(keys, "$text-muted"))

    def action_answer(self, kind: str) -> None:
        """Answer the question shown."""
        if not self._queue:
            return
        item = self._queue[0]
        if kind == "allow_always" and not self._rule:
            kind = "allow_once"
        rule = self._rule if kind == "allow_always" else None
        if not item.answer.done():
            item.answer.set_result(_answer(kind, rule=rule))

    def action_edit_rule(self) -> None:
        """Edit the rule "allow always" saves (Enter saves it and allows, Esc goes back)."""
        if not self._queue or not self._rule:
            return
        self._open_input("rule", self._rule)

    def action_deny_with_reason(self) -> None:
        """Type why (the model reads it), Enter denies."""
        if self._queue:
            self._open_input("reason", "")

    def _open_input(self, purpose: str, value: str) -> None:
        self._typing = purpose
        editor = self.query_one(Input)
        reason = purpose == "reason"
        editor.placeholder = "why not? (the model reads this)" if reason else "rule, e.g. bash(npm run test:*)"
        editor.value = value
        editor.add_class("-editing")
        editor.focus()

    @on(Input.Submitted, "#approval-rule-input")
    def _rule_edited(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        editor = self.query_one(Input)
        editor.remove_class("-editing")
        if self._typing == "reason":
            if self._queue and not self._queue[0].answer.done():
                self._queue[0].answer.set_result(_answer("deny", reason=value or None))
            return
        if value:
            self._rule = value
            self._refresh_rule()
            self.action_answer("allow_always")
        else:
            self.focus()

    def on_key(self, event: events.Key) -> None:
        editor = self.query_one(Input)
        if event.key == "escape" and editor.has_focus:
            event.stop()
            event.prevent_default()
            editor.remove_class("-editing")
            self.focus()

"""The ``todo_write`` tool: the model's task list, in Claude Code's shape.

The model sends the whole list each time (``todos``: ``{content, status, activeForm}``, status one
of ``pending``, ``in_progress``, ``completed``); the latest call's list is the list. It changes
nothing but the session's own state, so it runs unasked in every mode, plan mode included.
Front ends read the list from the result's ``details`` (``{todos: [...]}``): the TUI pins it
above the editor, JSON and RPC modes carry it in ``tool_execution_end``, ACP sends it as a
``plan`` update, and a resumed session finds it in its last ``todo_write`` result
(:func:`latest_todos`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import Field

from baton.agent.tool import AgentTool, AgentToolResult, OnUpdate
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.messages import ToolResultMessage
from baton.tools.params import ToolParams

TodoStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[TodoStatus, ...] = ("pending", "in_progress", "completed")
MAX_TODOS = 100
"""More items than anyone can follow; a longer list is refused."""
MAX_TEXT = 500
"""Characters of one item's text."""


class TodoParam(ToolParams):
    """One task."""

    content: str = Field(min_length=1, max_length=MAX_TEXT, description="The task, imperative: 'Run the tests'")
    status: TodoStatus = Field(description="pending, in_progress or completed")
    active_form: str = Field(default="", alias="activeForm", max_length=MAX_TEXT,
                             description="The task while it runs: 'Running the tests'")


class TodoWriteParams(ToolParams):
    """Arguments of ``todo_write``."""

    todos: list[TodoParam] = Field(max_length=MAX_TODOS, description="The whole updated task list")


@dataclass(frozen=True, slots=True)
class Todo:
    """One task as front ends show it."""

    content: str
    status: TodoStatus
    active_form: str = ""

    @property
    def shown(self) -> str:
        """The running form for the task in progress, else the task."""
        return self.active_form if self.status == "in_progress" and self.active_form else self.content

    def to_dict(self) -> JsonObject:
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}


def todos_from_details(details: object) -> list[Todo] | None:
    """The list a ``todo_write`` result's details hold (``None``: not such details). Tolerant: a
    session file may hold anything, so malformed items are skipped."""
    items = details.get("todos") if isinstance(details, dict) else None
    if not isinstance(items, list):
        return None
    todos: list[Todo] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        content, status, active = item.get("content"), item.get("status"), item.get("activeForm", "")
        known = next((s for s in STATUSES if s == status), None)
        if isinstance(content, str) and content and known is not None:
            todos.append(Todo(content[:MAX_TEXT], known, active[:MAX_TEXT] if isinstance(active, str) else ""))
    return todos


def latest_todos(messages: Iterable[object]) -> list[Todo] | None:
    """The list of the last successful ``todo_write`` among ``messages`` (``None``: never called)."""
    found: list[Todo] | None = None
    for message in messages:
        if not isinstance(message, ToolResultMessage) or message.tool_name != TodoWriteTool.name or message.is_error:
            continue
        todos = todos_from_details(message.details)
        if todos is not None:
            found = todos
    return found


def summary(todos: Sequence[Todo]) -> str:
    """``2/5 done``: the list in a few words."""
    done = sum(t.status == "completed" for t in todos)
    return f"{done}/{len(todos)} done"


class TodoWriteTool(AgentTool[TodoWriteParams, JsonObject]):
    """Replace the session's task list (see the module docstring)."""

    name = "todo_write"
    label = "Tasks"
    kind = "think"
    read_only = True
    claude_code_name = "TodoWrite"
    prompt_summary = "Keep a task list the user sees (whole list each time; one task in_progress)"
    prompt_guideline = ("For work of three steps or more, keep a task list with todo_write: mark a task "
                        "in_progress before starting it and completed as soon as it is done")
    description = (
        "Create and update the task list for the current work; the user sees it live. Send the whole "
        "list every time. Each task: content (imperative, 'Run the tests'), activeForm (present "
        "continuous, 'Running the tests') and status: pending, in_progress (exactly one while working) "
        "or completed (only when fully done). Use it for multi-step work, not for a single trivial step."
    )
    parameters = TodoWriteParams

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """``Tasks (2/5 done)``."""
        todos = todos_from_details(args)
        return f"Tasks ({summary(todos)})" if todos else cls.label

    async def run(
        self, tool_call_id: str, params: TodoWriteParams, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult[JsonObject]:
        """Take the new list; the result repeats it for the model in one line per task."""
        todos = [Todo(t.content, t.status, t.active_form) for t in params.todos]
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        lines = [f"{marks[t.status]} {t.content}" for t in todos]
        text = "Task list updated:\n" + "\n".join(lines) if lines else "Task list cleared."
        return AgentToolResult.text(text, {"todos": [t.to_dict() for t in todos]})

"""The tool interface: what the model reads (``content``) and what the UI renders (``details``)."""

from __future__ import annotations

import asyncio
import json
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from baton.providers.errors import ToolError as ToolError  # defined with the error tree, imported from here
from baton.providers.messages import ImageContent, TextContent, Tool


@dataclass(slots=True)
class AgentToolResult:
    """A tool's outcome. ``content`` goes to the model; ``details`` only to the UI and session.

    ``is_error`` marks a failure the model should see as such (a tool may also raise
    :class:`ToolError`, which the loop turns into an error result)."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: Any = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: Any = None, *, is_error: bool = False) -> AgentToolResult:
        """A result holding one text block."""
        return cls([TextContent(text=text)], details, is_error)


OnUpdate = Callable[[AgentToolResult], None]
"""Streaming progress from a running tool (becomes ``tool_execution_update`` events)."""


class AgentTool(ABC):
    """A tool the agent can run. Subclasses set the class attributes and implement
    :meth:`run` with validated arguments (an instance of ``parameters``).

    ``execute`` accepts raw JSON arguments (a dict), validates them against ``parameters`` (with
    pydantic's lax coercion, e.g. ``"5"`` -> ``5``) and then calls ``run``. ``signal`` is set when
    the run is aborted: a tool must stop promptly (kill its subprocesses) and raise or return.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[type[BaseModel]]
    prompt_summary: ClassVar[str] = ""
    """One line for the system prompt's tool list (empty: the description's first line)."""
    details_type: ClassVar[type | None] = None
    """The typed view the UI reads this tool's ``details`` through (``tools/details.py``), if any."""

    def schema(self) -> Tool:
        """The :class:`Tool` sent to the model (JSON schema derived from ``parameters``)."""
        return Tool(name=self.name, description=self.description, parameters=parameters_schema(self.parameters))

    async def execute(
        self,
        tool_call_id: str,
        args: dict[str, Any] | BaseModel,
        signal: asyncio.Event | None = None,
        on_update: OnUpdate | None = None,
    ) -> AgentToolResult:
        """Validate ``args`` (raises pydantic's ``ValidationError``) and run the tool."""
        params = args if isinstance(args, self.parameters) else self.parameters.model_validate(args)
        return await self.run(tool_call_id, params, signal or asyncio.Event(), on_update or _ignore)

    @abstractmethod
    async def run(
        self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: OnUpdate
    ) -> AgentToolResult:
        """Do the work. Raise :class:`ToolError` (or any exception) to fail."""


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a parameters model as tools send it (camelCase names, no titles): a
    fresh dict on every call, generated once per model class (pydantic's generation is slow and
    every request sends every tool)."""
    text = _SCHEMAS.get(model)
    if text is None:
        schema = model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        try:
            text = json.dumps(schema)
        except (TypeError, ValueError):  # a value JSON cannot hold: send it as built, uncached
            return schema
        _SCHEMAS[model] = text
    result: dict[str, Any] = json.loads(text)
    return result


def _ignore(_: AgentToolResult) -> None:
    return None

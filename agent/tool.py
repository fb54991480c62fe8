"""The tool interface: what the model reads (``content``), what the UI renders (``details``), and
what the rest of baton knows about a tool without running it (its traits).

A tool is a class, generic over its parameters model and its details: ``AgentTool[Params,
Details]``, so ``run`` receives validated, typed parameters. Its traits are class attributes —
``kind``, ``path_parameter``, ``url_parameter``, ``read_only``, ``claude_code_name`` and the ``title`` of a call —
and every part of baton that treats tools differently reads them there (the permission policy,
checkpoints, hooks, compaction, the system prompt, the editor protocol) instead of keeping a
table of tool names.
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Generic, Literal, TypeAlias, TypeVar

from pydantic import BaseModel

from baton.providers.errors import ToolError as ToolError  # defined with the error tree, imported from here
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.messages import ImageContent, TextContent, Tool

ToolKind: TypeAlias = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""What a tool does, in the words of the Agent Client Protocol (an editor picks its icon by it):
``read`` reads files, ``search`` reads what lies below a folder, ``edit`` changes files,
``execute`` runs commands, ``fetch`` reaches the network, ``other`` anything else."""

PathTarget: TypeAlias = Literal["file", "existing file", "folder"]

TITLE_LIMIT = 120
"""Characters of a call's title (longer ones end in ``…``)."""

P = TypeVar("P", bound=BaseModel)
D = TypeVar("D")


@dataclass(frozen=True, slots=True)
class PathParameter:
    """The argument naming the file or folder a tool opens.

    The permission check resolves that argument once to a real path and judges it; the tool then
    opens exactly that path (``tools/path_pins.py``). ``target`` says what the argument names:
    a ``file`` (that may not exist yet: a new one is created), an ``existing file`` (other
    spellings of its name are tried, as a file manager may have written it) or a ``folder`` (the
    working directory when the argument is left out; search tools also take one file)."""

    name: str = "path"
    target: PathTarget = "file"

    @property
    def must_exist(self) -> bool:
        """Whether the argument names a file that must already exist."""
        return self.target == "existing file"


@dataclass(slots=True)
class AgentToolResult(Generic[D]):
    """A tool's outcome. ``content`` goes to the model; ``details`` only to the UI and session.

    ``is_error`` marks a failure the model should see as such (a tool may also raise
    :class:`ToolError`, which the loop turns into an error result)."""

    content: list[TextContent | ImageContent] = field(default_factory=list)
    details: D | None = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: D | None = None, *, is_error: bool = False) -> AgentToolResult[D]:
        """A result holding one text block."""
        return cls([TextContent(text=text)], details, is_error)


OnUpdate = Callable[[AgentToolResult], None]
"""Streaming progress from a running tool (becomes ``tool_execution_update`` events)."""


class AgentTool(ABC, Generic[P, D]):
    """A tool the agent can run. Subclasses set the class attributes and implement :meth:`run`
    with validated arguments (an instance of ``parameters``).

    ``execute`` accepts raw JSON arguments (an object), validates them against ``parameters`` (with
    pydantic's lax coercion, e.g. ``"5"`` -> ``5``) and then calls ``run``. ``signal`` is set when
    the run is aborted: a tool must stop promptly (kill its subprocesses) and raise or return.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]
    parameters: type[P]
    prompt_summary: ClassVar[str] = ""
    """One line for the system prompt's tool list (empty: the description's first line)."""
    prompt_guideline: ClassVar[str] = ""
    """A line for the system prompt's guidelines when the tool is enabled (empty: none)."""
    details_type: ClassVar[type | None] = None
    """The typed view the UI reads this tool's ``details`` through (``tools/details.py``), if any."""

    # ---- traits: what baton knows about the tool without running it
    kind: ClassVar[ToolKind] = "other"
    """What the tool does (see :data:`ToolKind`); editors show it, the permission policy lets
    ``search`` tools ask about hidden places below their folder."""
    path_parameter: ClassVar[PathParameter | None] = None
    """The argument naming the file or folder the tool opens, if it opens one the model names."""
    read_only: ClassVar[bool] = False
    """The tool changes nothing (no file, no process, nothing outside). Checkpoints are taken
    before any other tool runs; a read-only tool with a path reads inside the workspace unasked,
    one that is not read-only changes files there."""
    delegates: ClassVar[bool] = False
    """The call only starts other calls that meet the same checks one by one (``task``: a
    subagent's tool calls pass the session's permission policy, hooks and checkpoints), so the
    permission policy lets the call itself start unasked; rules naming it still apply."""
    consults_configured_model: ClassVar[bool] = False
    """The call only sends text to a model the user configured (``ask_model``: the advisor role)
    and touches no file, command or other address, so it runs unasked in ``ask`` and ``auto``
    mode; rules naming it still apply."""
    url_parameter: ClassVar[str | None] = None
    """The argument naming the URL a tool fetches, if it fetches one the model names: the
    permission policy judges such a call by the URL's host (``web_fetch(domain:example.com)``)."""
    session_only: ClassVar[bool] = False
    """The tool only reaches what this session itself started (``bash_output``, ``kill_shell`` on
    its background commands): nothing the permission policy would ask about, so it runs unasked
    in every mode (deny and ask rules still apply)."""
    claude_code_name: ClassVar[str | None] = None
    """Claude Code's name for the same tool (``Bash``, ``Read``...), which hooks written for Claude
    Code match and read; ``None``: the tool's own name."""

    @classmethod
    def claude_code_call(cls, args: JsonMapping, cwd: str) -> tuple[str, JsonObject]:
        """The call as Claude Code's hooks receive it: its tool name and ``tool_input`` with
        Claude Code's field names (``file_path`` absolute); the call's own arguments stay beside
        them. A tool whose arguments differ from Claude Code's maps them (``edit``, ``bash``)."""
        out: JsonObject = dict(args)
        path = cls.path_of(args)
        if path is not None and "file_path" not in out:
            out["file_path"] = _absolute(path, cwd)
        return cls.claude_code_name or cls.name, out

    @classmethod
    def changes_files(cls) -> bool:
        """Whether the tool changes the file its path argument names (``edit``, ``write``)."""
        return cls.path_parameter is not None and not cls.read_only

    @classmethod
    def path_of(cls, args: JsonMapping) -> str | None:
        """The call's path argument as the model wrote it (``None``: no path tool, or missing)."""
        value = args.get(cls.path_parameter.name) if cls.path_parameter is not None else None
        return value if isinstance(value, str) and value else None

    @classmethod
    def title(cls, args: JsonMapping) -> str:
        """A one-line human title of a call with ``args``, as an editor lists it: the tool's
        label, then its path argument when it has one (``Read src/app.py (lines 10-60)`` for a
        tool that says more)."""
        path = cls.path_of(args)
        return f"{cls.label} {path}" if path else cls.label

    def schema_description(self) -> str:
        """The description the model is sent (default: :attr:`description`; a tool whose text
        depends on the session, such as the agents ``task`` offers, says it here)."""
        return self.description

    def schema(self) -> Tool:
        """The :class:`Tool` sent to the model (JSON schema derived from ``parameters``).

        Built on every request for every tool, so built as it is when its parts are what
        validation would pass through unchanged (two strings and the fresh schema dict)."""
        name, description = self.name, self.schema_description()
        parameters = parameters_schema(self.parameters)
        if type(name) is str and type(description) is str:
            return Tool.model_construct(name=name, description=description, parameters=parameters)
        return Tool(name=name, description=description, parameters=parameters)

    async def execute(
        self,
        tool_call_id: str,
        args: JsonMapping | BaseModel,
        signal: asyncio.Event | None = None,
        on_update: OnUpdate | None = None,
    ) -> AgentToolResult[D]:
        """Validate ``args`` (raises pydantic's ``ValidationError``) and run the tool."""
        params = args if isinstance(args, self.parameters) else self.parameters.model_validate(args)
        return await self.run(tool_call_id, params, signal or asyncio.Event(), on_update or _ignore)

    @abstractmethod
    async def run(self, tool_call_id: str, params: P, signal: asyncio.Event, on_update: OnUpdate) -> AgentToolResult[D]:
        """Do the work. Raise :class:`ToolError` (or any exception) to fail."""


def short_title(text: str) -> str:
    """``text``'s first line for a title (`` …`` when more lines follow), cut at :data:`TITLE_LIMIT`."""
    lines = text.strip().splitlines()
    line = " ".join(lines[:1]) + (" …" if len(lines) > 1 else "")
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def _absolute(path: str, cwd: str) -> str:
    """A path argument made absolute as the tools read it (a leading ``@`` dropped, ``~`` expanded)."""
    cleaned = path.strip().removeprefix("@")
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(cleaned) if cleaned.startswith("~") else cleaned))


def parameters_schema(model: type[BaseModel]) -> JsonObject:
    """The JSON schema of a parameters model as tools send it (camelCase names, no titles): a
    fresh dict on every call, generated once per model class (pydantic's generation is slow and
    every request sends every tool)."""
    text = _SCHEMAS.get(model)
    if text is None:
        schema: JsonObject = model.model_json_schema(by_alias=True)
        schema.pop("title", None)
        properties = schema.get("properties")
        for prop in properties.values() if isinstance(properties, dict) else ():
            if isinstance(prop, dict):
                prop.pop("title", None)
        try:
            text = json.dumps(schema)
        except (TypeError, ValueError):  # a value JSON cannot hold: send it as built, uncached
            return schema
        _SCHEMAS[model] = text
    result: JsonValue = json.loads(text)
    assert isinstance(result, dict)  # it was dumped from one
    return result


def _ignore(_: AgentToolResult) -> None:
    return None

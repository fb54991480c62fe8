"""How a tool call looks in an editor: ACP's kind, title, locations and content for a call.

Everything here comes from the called tool's traits (``baton.tools.tool_type``: the registered
class, or a stand-in for a name baton does not know): ``kind`` picks the editor's icon and
treatment (read / edit / execute / search / fetch / other), the tool's ``title`` names the call,
its path parameter gives the ``locations`` (absolute paths, 1-based lines where known) so the
editor can follow along. A successful call of a tool that changes files is sent as the
protocol's ``diff`` content, a command's output as a fenced console block.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from baton.agent.tool import AgentTool, AgentToolResult
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.tools import tool_type

# A terminal block of more than this is cut at the front (the end of the output matters most).
_TERMINAL_LIMIT = 64 * 1024


def tool_kind(name: str) -> str:
    """ACP's tool kind for tool ``name`` (MCP and unknown tools: ``fetch`` for web fetchers, else ``other``)."""
    return tool_type(name).kind


def tool_title(name: str, args: JsonMapping, cwd: str) -> str:
    """A one-line human title: ``Read src/app.py (lines 10-60)``, ``npm test``, ``grep TODO``."""
    return tool_type(name).title(args)


def _abs(path: str | None, cwd: str) -> str | None:
    if not path:
        return None
    path = path.removeprefix("@")
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _location_line(tool: type[AgentTool], args: JsonMapping, details: JsonValue) -> int | None:
    """The line a call is at: a read's ``offset``, the first line an edit changed, a new file's first."""
    offset = args.get("offset")
    if tool.read_only and isinstance(offset, int):
        return offset
    changed = details.get("firstChangedLine") if isinstance(details, dict) else None
    if isinstance(changed, int):
        return changed
    parameter = tool.path_parameter
    return 1 if tool.changes_files() and parameter is not None and parameter.target == "file" else None


def tool_locations(name: str, args: JsonMapping, cwd: str, details: JsonValue = None) -> list[JsonObject]:
    """The files the call touches, with a line where one is known (a folder tool without a path
    argument works in ``cwd``)."""
    tool = tool_type(name)
    parameter = tool.path_parameter
    if parameter is None:
        return []
    path = _abs(tool.path_of(args), cwd)
    if path is None:
        return [{"path": cwd}] if parameter.target == "folder" else []
    location: JsonObject = {"path": path}
    line = _location_line(tool, args, details)
    if line is not None and line >= 0:
        location["line"] = line
    return [location]


def terminal_text(command: str, output: str, exit_code: JsonValue = None) -> str:
    """Console-style block: the command, its output, and the exit code when it failed."""
    if len(output) > _TERMINAL_LIMIT:
        output = "…" + output[-_TERMINAL_LIMIT:]
    fence = "```"
    while fence in output:
        fence += "`"
    body = output.rstrip("\n")
    tail = f"\n[exit code {exit_code}]" if isinstance(exit_code, int) and exit_code != 0 else ""
    return f"{fence}console\n$ {command}\n{body}{tail}\n{fence}"


def _text_of(result: AgentToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def text_content(text: str) -> JsonObject:
    """A ``content`` item holding text."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def _replacements(args: JsonMapping) -> list[tuple[str, str]]:
    """An edit call's ``(oldText, newText)`` pairs: its ``edits`` list and a single pair."""
    items = args.get("edits")
    pairs: list[tuple[str, str]] = []
    for item in [*(items if isinstance(items, list) else []), args]:
        if isinstance(item, Mapping):
            old, new = item.get("oldText"), item.get("newText")
            if isinstance(old, str) and isinstance(new, str):
                pairs.append((old, new))
    return pairs


def diff_contents(name: str, args: JsonMapping, cwd: str, old_text: str | None) -> list[JsonObject]:
    """ACP ``diff`` items for a call that changes a file: the whole file for one that writes its
    ``content``, one per replacement for one that edits it."""
    tool = tool_type(name)
    path = _abs(tool.path_of(args), cwd) if tool.changes_files() else None
    if path is None:
        return []
    content = args.get("content")
    if isinstance(content, str):
        return [{"type": "diff", "path": path, "oldText": old_text, "newText": content}]
    return [{"type": "diff", "path": path, "oldText": old, "newText": new} for old, new in _replacements(args)]


def command_of(name: str, args: JsonMapping) -> str | None:
    """The shell command a call of an ``execute`` tool runs (``None``: not such a call)."""
    command = args.get("command")
    return command if tool_type(name).kind == "execute" and isinstance(command, str) else None


def result_content(
    name: str, args: JsonMapping, cwd: str, result: AgentToolResult, is_error: bool, old_text: str | None = None
) -> list[JsonObject]:
    """What a finished call shows: a diff for a successful change to a file, console output for a
    command, else the text the model read (errors included)."""
    text = _text_of(result)
    if not is_error:
        diffs = diff_contents(name, args, cwd, old_text)
        if diffs:
            return diffs
    command = command_of(name, args)
    if command is not None:
        details = result.details
        exit_code = details.get("exitCode") if isinstance(details, dict) else None
        return [text_content(terminal_text(command, text, exit_code))]
    return [text_content(text)] if text else []


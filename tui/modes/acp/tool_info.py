"""How a tool call looks in an editor: ACP's kind, title, locations and content for baton's tools.

``kind`` picks the editor's icon and treatment (read / edit / execute / search / fetch / other);
``locations`` let it follow along (absolute paths, 1-based lines where known); edit and write
results are sent as the protocol's ``diff`` content, bash output as a fenced console block.
"""

from __future__ import annotations

import os
from typing import Any

_KINDS = {
    "read": "read",
    "ls": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
}
_TITLE_LIMIT = 120
# A terminal block of more than this is cut at the front (the end of the output matters most).
_TERMINAL_LIMIT = 64 * 1024


def tool_kind(name: str) -> str:
    """ACP's tool kind for tool ``name`` (MCP and unknown tools: ``fetch`` for web fetchers, else ``other``)."""
    kind = _KINDS.get(name)
    if kind is not None:
        return kind
    lowered = name.lower()
    if "fetch" in lowered or "web" in lowered or "http" in lowered:
        return "fetch"
    return "other"


def _abs(path: Any, cwd: str) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    path = path.removeprefix("@")
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _short(text: str) -> str:
    line = " ".join(text.strip().splitlines()[:1]) if text.strip() else ""
    if len(text.strip().splitlines()) > 1:
        line += " …"
    return line if len(line) <= _TITLE_LIMIT else line[: _TITLE_LIMIT - 1] + "…"


def tool_title(name: str, args: dict[str, Any], cwd: str) -> str:
    """A one-line human title: ``Read src/app.py (lines 10-60)``, ``npm test``, ``grep TODO``."""
    path = args.get("path")
    shown = path if isinstance(path, str) and path else None
    if name == "read" and shown:
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int) and isinstance(limit, int):
            return f"Read {shown} (lines {offset}-{offset + limit - 1})"
        if isinstance(offset, int):
            return f"Read {shown} (from line {offset})"
        return f"Read {shown}"
    if name == "edit" and shown:
        return f"Edit {shown}"
    if name == "write" and shown:
        return f"Write {shown}"
    if name == "bash" and isinstance(args.get("command"), str):
        return _short(args["command"]) or "bash"
    if name in ("grep", "find") and isinstance(args.get("pattern"), str):
        where = f" in {shown}" if shown else ""
        return _short(f"{name} {args['pattern']}{where}")
    if name == "ls":
        return f"List {shown or '.'}"
    if name.startswith("mcp__") and name.count("__") >= 2:
        _, server, tool = name.split("__", 2)
        return f"{server} › {tool}"
    return name


def tool_locations(name: str, args: dict[str, Any], cwd: str, details: Any = None) -> list[dict[str, Any]]:
    """The files the call touches, with a line where one is known."""
    path = _abs(args.get("path"), cwd)
    if path is None:
        return [{"path": cwd}] if name in ("grep", "find", "ls") else []
    location: dict[str, Any] = {"path": path}
    line = None
    if name == "read" and isinstance(args.get("offset"), int):
        line = args["offset"]
    elif isinstance(details, dict) and isinstance(details.get("firstChangedLine"), int):
        line = details["firstChangedLine"]
    elif name == "write":
        line = 1
    if line is not None and line >= 0:
        location["line"] = line
    return [location]


def terminal_text(command: str, output: str, exit_code: Any = None) -> str:
    """Console-style block: the command, its output, and the exit code when it failed."""
    if len(output) > _TERMINAL_LIMIT:
        output = "…" + output[-_TERMINAL_LIMIT:]
    fence = "```"
    while fence in output:
        fence += "`"
    body = output.rstrip("\n")
    tail = f"\n[exit code {exit_code}]" if isinstance(exit_code, int) and exit_code != 0 else ""
    return f"{fence}console\n$ {command}\n{body}{tail}\n{fence}"


def _text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []) or [])


def text_content(text: str) -> dict[str, Any]:
    """A ``content`` item holding text."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def diff_contents(name: str, args: dict[str, Any], cwd: str, old_text: str | None) -> list[dict[str, Any]]:
    """ACP ``diff`` items for an edit (one per replacement) or a write (the whole file)."""
    path = _abs(args.get("path"), cwd)
    if path is None:
        return []
    if name == "write" and isinstance(args.get("content"), str):
        return [{"type": "diff", "path": path, "oldText": old_text, "newText": args["content"]}]
    pairs: list[tuple[str, str]] = []
    for item in args.get("edits") or []:
        if isinstance(item, dict) and isinstance(item.get("oldText"), str) and isinstance(item.get("newText"), str):
            pairs.append((item["oldText"], item["newText"]))
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        pairs.append((args["oldText"], args["newText"]))
    return [{"type": "diff", "path": path, "oldText": old, "newText": new} for old, new in pairs]


def result_content(
    name: str, args: dict[str, Any], cwd: str, result: Any, is_error: bool, old_text: str | None = None
) -> list[dict[str, Any]]:
    """What a finished call shows: a diff for a successful edit/write, console output for bash,
    else the text the model read (errors included)."""
    text = _text_of(result)
    if not is_error and name in ("edit", "write"):
        diffs = diff_contents(name, args, cwd, old_text)
        if diffs:
            return diffs
    if name == "bash" and isinstance(args.get("command"), str):
        details = getattr(result, "details", None)
        exit_code = details.get("exitCode") if isinstance(details, dict) else None
        return [text_content(terminal_text(args["command"], text, exit_code))]
    return [text_content(text)] if text else []

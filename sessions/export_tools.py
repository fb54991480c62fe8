"""Tool calls and results on the export page, as a reader wants them: an edit as a diff, a bash run
as a terminal block, a written file highlighted, other arguments as JSON; long results folded
behind an expander (``<details>``: no script). Arguments come from a model, so each is checked for
the shape its renderer needs, and anything else is shown as JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from baton.providers.json_types import JsonValue
from baton.providers.messages import ImageContent, TextContent, ToolCall, ToolResultMessage
from baton.sessions.export_markup import clean, code_html, esc
from baton.tools.diff import unified_patch

FOLD_LINES = 24
"""Lines of a long tool result shown before the expander."""
FOLD_CHARS = 3000
"""Characters of a long tool result shown before the expander."""


def folded(text: str, css: str, language: str = "", filename: str = "") -> str:
    """``text`` in a ``<pre class=css>``; past :data:`FOLD_LINES` lines or :data:`FOLD_CHARS`
    characters, the rest in a closed ``<details>`` under it."""
    text = clean(text)
    head_end = 0
    for _ in range(FOLD_LINES):
        newline = text.find("\n", head_end)
        if newline < 0:
            head_end = len(text)
            break
        head_end = newline + 1
    head_end = min(head_end, FOLD_CHARS)
    head, rest = text[:head_end], text[head_end:]
    out = f'<pre class="{css}">{code_html(head, language, filename)}</pre>'
    if rest:
        lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
        summary = f"show {lines} more line{'s' if lines != 1 else ''} ({len(rest):,} characters)"
        out += f'<details class="more"><summary>{summary}</summary><pre class="{css}">'
        out += f"{code_html(rest, language, filename)}</pre></details>"
    return out


def json_text(value: JsonValue | Mapping[str, JsonValue]) -> str:
    """``value`` as indented JSON (``str`` of it if it does not serialise)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _edits(arguments: Mapping[str, JsonValue]) -> list[tuple[str, str]] | None:
    """The (old, new) pairs of an edit call in the edit tool's order, or None if malformed."""
    items = arguments.get("edits")
    if isinstance(items, str):
        try:
            items = json.loads(items)
        except ValueError:
            return None
    pairs: list[tuple[str, str]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            return None
        old, new = item.get("oldText"), item.get("newText")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        pairs.append((old, new))
    old, new = arguments.get("oldText"), arguments.get("newText")
    if isinstance(old, str) and isinstance(new, str):
        pairs.append((old, new))
    return pairs or None


def diff_html(path: str, old: str, new: str) -> str:
    """A unified diff of one replacement, one ``<div>`` a line, classed by kind."""
    rows = []
    for line in unified_patch(path, clean(old), clean(new), 3).splitlines():
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")
        if line.startswith(("--- ", "+++ ")):
            continue  # the path is in the call's heading
        rows.append(f'<div class="{kind}">{esc(line)}</div>')
    return f'<div class="diff">{"".join(rows)}</div>'


def terminal_command(command: str) -> str:
    """A shell command as a terminal's prompt line."""
    return f'<pre class="term"><span class="prompt">$ </span>{esc(command)}</pre>'


def _heading(name: str, detail: str = "") -> str:
    extra = f' <span class="path">{esc(detail)}</span>' if detail else ""
    return f'<div class="call-head"><span class="tool-name">{esc(name)}</span>{extra}</div>'


Arguments = Mapping[str, JsonValue]


def _edit_call(args: Arguments, path: str) -> str | None:
    pairs = _edits(args) if path else None
    if pairs is None:
        return None
    return _heading("edit", path) + "".join(diff_html(path, old, new) for old, new in pairs)


def _bash_call(args: Arguments, path: str) -> str | None:
    command = args.get("command")
    return _heading("bash") + terminal_command(command) if isinstance(command, str) else None


def _write_call(args: Arguments, path: str) -> str | None:
    content = args.get("content")
    if not path or not isinstance(content, str):
        return None
    return _heading("write", path) + folded(content, "code hl", filename=path)


def _read_call(args: Arguments, path: str) -> str | None:
    if not path or not set(args) <= {"path", "offset", "limit"}:
        return None
    return _heading("read", path + "".join(f" {key} {args[key]}" for key in ("offset", "limit") if key in args))


_CALLS: dict[str, Callable[[Arguments, str], str | None]] = {
    "edit": _edit_call, "bash": _bash_call, "write": _write_call, "read": _read_call,
}


def tool_call_html(call: ToolCall) -> str:
    """One tool call as a block of the assistant's turn: the built-in tools' arguments shown as
    what they do, any other call (or a malformed one) as its arguments' JSON."""
    path = call.arguments.get("path")
    render = _CALLS.get(call.name)
    shown = render(call.arguments, path if isinstance(path, str) else "") if render is not None else None
    if shown is None:
        shown = _heading(call.name) + f'<pre class="code hl">{code_html(json_text(call.arguments), "json")}</pre>'
    return f'<div class="call">{shown}</div>'


def tool_result_html(message: ToolResultMessage, call: ToolCall | None, images: str) -> str:
    """The inside of a tool result's section: its text folded (a bash run's as a terminal, a read
    file's highlighted by its name), then its ``images`` (already rendered)."""
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    has_images = any(isinstance(b, ImageContent) for b in message.content)
    if not text and has_images:
        return images
    if message.tool_name == "bash" and not message.is_error:
        return folded(text, "term") + images
    path = call.arguments.get("path") if call is not None and call.name == "read" else None
    if isinstance(path, str) and not message.is_error:
        return folded(text, "code hl", filename=path) + images
    return folded(text, "plain") + images

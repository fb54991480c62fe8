"""How each tool call looks: a one-line header, a body while its arguments stream, its result.

Pure functions from (tool name, arguments, result) to :class:`Content`, so they are easy to test
and cheap to call at every flush. All model- and tool-supplied strings go through
:func:`tui.app.render.clean` and are never parsed as markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content

from baton.providers.json_types import JsonMapping, JsonValue
from baton.tools import details_type_for, mcp_title, tool_type
from baton.tools.details import (
    BashDetails,
    EditDetails,
    ModelCallDetails,
    ReadDetails,
    WriteDetails,
    parse_details,
)
from baton.tui.app.render import clean, format_bytes, format_duration, one_line, short_path
from baton.tui.app.widgets.model_call import consulting, usage_facts, waiting_status

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent, TextContent

ResultContent = str | Sequence["TextContent | ImageContent"] | None
"""What a tool result (or a user message) holds: text, or text and image blocks."""

PREVIEW_LINES = 8
"""Lines of tool output shown before a tool widget collapses (Ctrl+O shows all)."""

_MAX_RENDER_LINES = 2000
_MAX_LINE_CHARS = 500


@dataclass(slots=True)
class Rendered:
    """A rendered body: what shows collapsed, what shows expanded, and how many lines were hidden."""

    preview: Content
    full: Content
    hidden: int
    tail: bool = False
    """True when the preview is the end of the output (the hidden lines come before it)."""
    hint: str | None = None
    """What the collapsed box says about the hidden lines, when "… N more lines" would mislead."""
    markdown: str | None = None
    """Text drawn as Markdown below the preview (a model's answer), collapsed by rendered lines."""


def _arg(args: JsonMapping, *names: str) -> JsonValue:
    for name in names:
        value = args.get(name)
        if value is not None:
            return value
    return None


def _text_arg(args: JsonMapping, *names: str) -> str:
    value = _arg(args, *names)
    return value if isinstance(value, str) else ("" if value is None else str(value))


def header(name: str, args: JsonMapping, cwd: Path | None = None) -> Content:
    """``bash $ ls -la`` / ``read src/app.py:10-49`` / ``write notes.md (1.2 kB)`` ..."""
    label = Content.styled(clean(mcp_label(name)) or "tool", "bold")
    summary = summarize_args(name, args, cwd)
    if not summary:
        return label
    return Content.assemble(label, " ", summary)


def mcp_label(name: str) -> str:
    """``mcp__github__create_issue`` shown as ``github › create_issue`` (other names as they are)."""
    return mcp_title(name) or name


Summary = Callable[[JsonMapping, str], Content]
"""How one tool's header summarises its arguments, given them and its shown path."""


def _bash_summary(args: JsonMapping, shown_path: str) -> Content:
    command = _text_arg(args, "command")
    lines = clean(command).strip().split("\n")
    extra = f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return Content.assemble(("$ ", "$text-muted"), one_line(command, 200), (extra, "$text-muted"))


def _read_summary(args: JsonMapping, shown_path: str) -> Content:
    offset, limit = _arg(args, "offset"), _arg(args, "limit")
    where = ""
    if isinstance(offset, int) or isinstance(limit, int):
        start = offset if isinstance(offset, int) else 1
        where = f":{start}-{start + limit - 1}" if isinstance(limit, int) else f":{start}-"
    return Content.assemble((shown_path, "$accent"), (where, "$text-muted"))


def _write_summary(args: JsonMapping, shown_path: str) -> Content:
    content = _text_arg(args, "content")
    size = f"  ({format_bytes(len(content.encode('utf-8', 'replace')))})" if "content" in args else ""
    return Content.assemble((shown_path, "$accent"), (size, "$text-muted"))


def _edit_summary(args: JsonMapping, shown_path: str) -> Content:
    edits = args.get("edits")
    count = f"  ({len(edits)} edits)" if isinstance(edits, list) and len(edits) > 1 else ""
    return Content.assemble((shown_path, "$accent"), (count, "$text-muted"))


def _search_summary(args: JsonMapping, shown_path: str) -> Content:
    pattern = _text_arg(args, "pattern")
    where = f" in {shown_path}" if shown_path else ""
    glob = _text_arg(args, "glob")
    glob_text = f" ({clean(glob)})" if glob else ""
    return Content.assemble((one_line(pattern, 120), "$accent"), (where + glob_text, "$text-muted"))


def _ls_summary(args: JsonMapping, shown_path: str) -> Content:
    return Content.styled(shown_path or ".", "$accent")


def _task_summary(args: JsonMapping, shown_path: str) -> Content:
    """``(scout) look for the loader``: the agent, then the task's short description."""
    agent = _text_arg(args, "agent", "subagent_type") or "general"
    return Content.assemble((f"({one_line(agent, 40)}) ", "$text-muted"),
                            (one_line(_text_arg(args, "description"), 120), "$accent"))


def _ask_summary(args: JsonMapping, shown_path: str) -> Content:
    """The question put to the advisor, collapsed to one line."""
    return Content.styled(one_line(" ".join(clean(_text_arg(args, "question")).split()), 160), "$accent")


_SUMMARIES: dict[str, Summary] = {
    "bash": _bash_summary,
    "read": _read_summary,
    "write": _write_summary,
    "edit": _edit_summary,
    "grep": _search_summary,
    "find": _search_summary,
    "ls": _ls_summary,
    "task": _task_summary,
    "ask_model": _ask_summary,
}
"""Headers drawn for the built-in tools; any other tool gets :func:`_default_summary`."""


def _compact(args: JsonMapping) -> Content:
    if not args:
        return Content("")
    try:
        compact = json.dumps(dict(args), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        compact = str(args)
    return Content.styled(one_line(compact, 160), "$text-muted")


def _default_summary(name: str, args: JsonMapping, cwd: Path | None) -> Content:
    """Any other tool: its path argument first when its traits name one, then the rest as JSON."""
    tool = tool_type(name)
    path = tool.path_of(args)
    if path is None or tool.path_parameter is None:
        return _compact(args)
    rest = _compact({key: value for key, value in args.items() if key != tool.path_parameter.name})
    shown = Content.styled(short_path(clean(path), cwd), "$accent")
    return Content.assemble(shown, " ", rest) if rest else shown


def summarize_args(name: str, args: JsonMapping, cwd: Path | None = None) -> Content:
    """The argument summary for a tool header (plain, cleaned text with a little styling)."""
    summary = _SUMMARIES.get(name)
    if summary is None:
        return _default_summary(name, args, cwd)
    path = _text_arg(args, "path", "file_path", "filePath")
    return summary(args, short_path(clean(path), cwd) if path else "")


WRITE_PREVIEW_LINES = 12
"""Lines of a file being written shown while the call streams (its growing end)."""


def _write_preview(args: JsonMapping) -> Content | None:
    """The end of the content a ``write`` call is streaming, syntax-highlighted by its path."""
    content = _text_arg(args, "content")
    if not content:
        return None
    lines = clean(content).split("\n")
    hidden = max(0, len(lines) - WRITE_PREVIEW_LINES)
    tail = "\n".join(line[:_MAX_LINE_CHARS] for line in lines[hidden:])
    from textual.highlight import highlight

    path = _text_arg(args, "path", "file_path")
    try:
        body = highlight(tail, path=path or None)
    except Exception:  # an odd path or lexer failure: plain text still shows the file
        body = Content(tail)
    if not hidden:
        return body
    return Content.assemble(Content.styled(f"… {hidden} lines above", "$text-muted"), "\n", body)


def args_body(name: str, args: JsonMapping) -> Content | None:
    """What to show while a call's arguments stream in: the end of a file being written, an
    edit's diff forming (by the tool's details view), else nothing."""
    view = details_type_for(name)
    if view is WriteDetails:
        return _write_preview(args)
    if view is not EditDetails:
        return None
    return _edit_preview(args)


def _edit_preview(args: JsonMapping) -> Content | None:
    edits = args.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, Mapping):
                pairs.append((_text_arg(edit, "oldText", "old_text"), _text_arg(edit, "newText", "new_text")))
    else:
        old, new = _text_arg(args, "oldText", "old_text"), _text_arg(args, "newText", "new_text")
        if old or new:
            pairs.append((old, new))
    if not pairs:
        return None
    parts: list[Content] = []
    for index, (old, new) in enumerate(pairs):
        if index:
            parts.append(Content.styled("  ⋯", "$text-muted"))
        parts.extend(Content.styled(f"- {line}", "$text-error") for line in _lines(old))
        parts.extend(Content.styled(f"+ {line}", "$text-success") for line in _lines(new))
    return Content("\n").join(parts)


def _lines(text: str) -> list[str]:
    if not text:
        return []
    lines = clean(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line[:_MAX_LINE_CHARS] for line in lines[:_MAX_RENDER_LINES]]


# ---------------------------------------------------------------------------------------------
# Results


def result_text(content: ResultContent) -> str:
    """The text blocks of a tool result's content joined (images noted as ``[image]``)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if block.type == "text":
            parts.append(block.text)
        elif block.type == "image":
            parts.append(f"[image: {block.mime_type}]")
    return "\n".join(parts)


def running_status(name: str, details: object, elapsed: float) -> Content:
    """The clock of a running call with no output yet: ``running… 1.2s``, or for a call that
    waits on a model (its details name it) ``consulting openai/gpt-5.1 … 3.0s``."""
    model = parse_details(ModelCallDetails, details).model if details_type_for(name) is ModelCallDetails else None
    return waiting_status(consulting(model), elapsed)


def result_body(
    name: str,
    args: JsonMapping,
    text: str,
    details: object,
    *,
    is_error: bool,
    running: bool = False,
    duration: float | None = None,
) -> Rendered:
    """The rendered result of a call (or the live output of a running bash), drawn as the
    tool's details view says (a command's facts, a diff, a page of a file), else as text."""
    view = details_type_for(name)
    bash = parse_details(BashDetails, details) if view is BashDetails else None
    # A failed shell command without output still says how it ended ("exit 1 · 4ms", "aborted").
    bash_facts = bash is not None and (bool(text) or duration is not None or bash.has_facts)
    if is_error and not bash_facts:
        return _plain(text or "error", style="$text-error", head=True)
    if view in (EditDetails, WriteDetails):
        return _change(args, text, details, writes=view is WriteDetails)
    if view is ReadDetails:
        return _read(text, parse_details(ReadDetails, details))
    if view is ModelCallDetails:
        facts = usage_facts(parse_details(ModelCallDetails, details), duration)
        return Rendered(facts, facts, 0, markdown=text)
    if bash is not None:
        return _bash(text, bash, is_error=is_error, running=running, duration=duration)
    if not text.strip() and isinstance(details, Mapping) and details:  # e.g. an MCP result: structured only
        try:
            text = json.dumps(details.get("structuredContent", details), indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(details)
    return _plain(text, style="", head=True)


def _change(args: JsonMapping, text: str, details: object, *, writes: bool) -> Rendered:
    """A change to a file: its diff, else (a whole file written) the new lines, else the text."""
    diff = parse_details(EditDetails, details).diff
    if diff is not None and diff.strip():
        return _diff(diff)
    if writes and "content" in args:
        note = _write_note(text, parse_details(WriteDetails, details))
        return _numbered_added(_text_arg(args, "content"), note=note)
    return _plain(text, style="$text-muted", head=True)


def _clip(lines: list[str]) -> list[str]:
    return [line if len(line) <= _MAX_LINE_CHARS else line[:_MAX_LINE_CHARS] + "…" for line in lines]


def _plain(text: str, *, style: str, head: bool) -> Rendered:
    lines = clean(text).rstrip("\n").split("\n") if text else []
    lines = _clip(lines[:_MAX_RENDER_LINES] if head else lines[-_MAX_RENDER_LINES:])
    full = Content.styled("\n".join(lines), style) if style else Content("\n".join(lines))
    if len(lines) <= PREVIEW_LINES:
        return Rendered(full, full, 0)
    shown = lines[:PREVIEW_LINES] if head else lines[-PREVIEW_LINES:]
    preview = Content.styled("\n".join(shown), style) if style else Content("\n".join(shown))
    return Rendered(preview, full, len(lines) - PREVIEW_LINES, tail=not head)


_DIFF_LINE = re.compile(r"^([+\- ])(\s*\d+)?(\s?)(.*)$")


def _diff(diff: str) -> Rendered:
    lines = _clip(clean(diff).rstrip("\n").split("\n")[:_MAX_RENDER_LINES])
    rendered = [_diff_line(line) for line in lines]
    full = Content("\n").join(rendered)
    if len(rendered) <= PREVIEW_LINES * 2:
        return Rendered(full, full, 0)
    return Rendered(Content("\n").join(rendered[: PREVIEW_LINES * 2]), full, len(rendered) - PREVIEW_LINES * 2)


def _diff_line(line: str) -> Content:
    if line.startswith(("+++", "---")):
        return Content.styled(line, "bold $text-muted")
    if line.startswith("@@"):
        return Content.styled(line, "$text-accent")
    match = _DIFF_LINE.match(line)
    if not match:
        return Content.styled(line, "$text-muted")
    sign, number, space, rest = match.groups()
    style = {"+": "$text-success", "-": "$text-error"}.get(sign, "")
    gutter = Content.styled(f"{sign}{number or ''}{space}", f"{style} dim" if style else "$text-muted")
    body = Content.styled(rest, style) if style else Content(rest)
    return Content.assemble(gutter, body)


def _numbered_added(content: str, *, note: str) -> Rendered:
    lines = _lines(content)
    width = len(str(len(lines))) if lines else 1
    rendered = [
        Content.assemble((f"+{index:>{width}} ", "$text-success dim"), (line, "$text-success"))
        for index, line in enumerate(lines, 1)
    ]
    summary = Content.styled(one_line(note, 200), "$text-muted") if note else None
    full = Content("\n").join(([summary] if summary else []) + rendered)
    if len(rendered) <= PREVIEW_LINES:
        return Rendered(full, full, 0)
    preview = Content("\n").join(([summary] if summary else []) + rendered[:PREVIEW_LINES])
    return Rendered(preview, full, len(rendered) - PREVIEW_LINES)


def _write_note(text: str, details: WriteDetails) -> str:
    if details.bytes is None:
        return text
    verb = "created" if details.created else "overwrote"
    count = f"{details.lines} line{'s' if details.lines != 1 else ''}, " if details.lines is not None else ""
    return f"{verb} · {count}{format_bytes(details.bytes)}"


def _read(text: str, details: ReadDetails) -> Rendered:
    lines = clean(text).rstrip("\n").split("\n") if text else []
    notice = lines[-1] if lines and lines[-1].startswith("[") and lines[-1].endswith("]") else ""
    count = len(lines) - (1 if notice else 0)
    start, end, total = details.start_line, details.end_line, details.total_lines
    if start is not None and end is not None:
        of = f" of {total}" if total is not None else ""
        summary = f"lines {start}-{end}{of}" if end >= start else f"empty{of and ' (' + of.strip() + ')'}"
    elif details.kind == "image":
        summary = f"image {clean(details.mime_type or '')} {format_bytes(details.bytes or 0)}"
    else:
        summary = f"{count} line{'s' if count != 1 else ''}" + (f"  {notice}" if notice else "")
    preview = Content.styled(summary, "$text-muted")
    full_lines = _clip(lines[:_MAX_RENDER_LINES])
    full = Content.assemble(preview, "\n", "\n".join(full_lines)) if full_lines else preview
    # Collapsed, the box shows only the summary: none of the lines is "more" than another.
    noun = "line" if count == 1 else "lines"
    return Rendered(preview, full, count, hint=f"(Ctrl+O shows the {count} {noun})")


def _bash(
    text: str, details: BashDetails, *, is_error: bool, running: bool, duration: float | None
) -> Rendered:
    body = _plain(text, style="", head=False)
    facts: list[str] = []
    exit_code = details.exit_code
    if running:
        facts.append("running")
    elif details.timed_out:
        facts.append("timed out")
    elif details.aborted:
        facts.append("aborted")
    elif exit_code is not None:
        facts.append(f"exit {exit_code}")
    elif is_error:
        facts.append("failed")
    if details.duration_ms is not None and not running:
        duration = details.duration_ms / 1000
    if duration is not None:
        facts.append(format_duration(duration))
    if details.full_output_path:
        facts.append(f"full output: {clean(details.full_output_path)}")
    if not facts:
        return body
    bad = is_error or (exit_code is not None and exit_code != 0)
    status = Content.styled(" · ".join(facts), "$text-error" if bad else "$text-muted")
    if not text.strip():
        return Rendered(status, status, 0)
    return Rendered(
        Content.assemble(body.preview, "\n", status), Content.assemble(body.full, "\n", status), body.hidden,
        tail=body.tail,
    )


def render_diff(diff: str) -> Content:
    """A display diff (``tools.diff``) styled as the edit widget shows it, whole."""
    return _diff(diff).full

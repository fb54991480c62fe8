"""A session branch as one self-contained HTML page (``/export``, ``baton --export``).

Model and tool output is untrusted. Every piece of text is escaped (:mod:`sessions.export_markup`);
answers are rendered as Markdown with raw HTML off and no links or remote images. The page carries
no script at all and a Content-Security-Policy that forbids scripts and remote loads, so nothing in a
transcript can run or phone home; its stylesheet is inline, its fonts the reader's own. Images are
embedded only as ``data:`` URIs of known image types whose payload is plain base64.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from baton.agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.sessions.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from baton.sessions.export_markup import esc, highlight_css, markdown_html
from baton.sessions.export_style import STYLE
from baton.sessions.export_tools import folded, terminal_command, tool_call_html, tool_result_html
from baton.sessions.failover import fallback_notes
from baton.sessions.store import SessionStore

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"^[A-Za-z0-9+/\r\n]*={0,2}$")

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _image_html(image: ImageContent) -> str:
    data = image.data
    if image.mime_type not in _IMAGE_TYPES or not _BASE64.match(data):
        return f'<div class="meta">[image omitted: {esc(image.mime_type)}]</div>'
    return f'<img alt="image" src="data:{image.mime_type};base64,{data}">'


def _blocks_html(content: str | Sequence[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return f'<div class="text">{esc(content)}</div>'
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(f'<div class="text">{esc(block.text)}</div>')
        elif isinstance(block, ImageContent):
            parts.append(_image_html(block))
    return "".join(parts)


def _section(css: str, role: str, body: str) -> str:
    return f'<section class="msg {css}"><div class="role">{esc(role)}</div>{body}</section>\n'


def _assistant_html(message: AssistantMessage) -> str:
    parts = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(markdown_html(block.text))
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                thinking = markdown_html(block.thinking)
                parts.append(f'<details class="thinking"><summary>thinking</summary>{thinking}</details>')
        elif isinstance(block, ToolCall):
            parts.append(tool_call_html(block))
    if message.stop_reason in ("error", "aborted"):
        parts.append(f'<div class="error-text">[{esc(message.stop_reason)}] {esc(message.error_message or "")}</div>')
    role = f"assistant · {message.provider}/{message.model}"
    return _section("assistant", role, "".join(parts))


def _tool_result_html(message: ToolResultMessage, calls: dict[str, ToolCall]) -> str:
    css = "tool error" if message.is_error else "tool"
    images = "".join(_image_html(b) for b in message.content if isinstance(b, ImageContent))
    body = tool_result_html(message, calls.get(message.tool_call_id), images)
    return _section(css, f"{message.tool_name} result{' · error' if message.is_error else ''}", body)


def _entry_html(entry: SessionEntry, calls: dict[str, ToolCall], notes: dict[str, str]) -> str:
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return _section("user", "user", _blocks_html(message.content))
        if isinstance(message, AssistantMessage):
            calls.update((b.id, b) for b in message.content if isinstance(b, ToolCall))
            return _assistant_html(message)
        if isinstance(message, ToolResultMessage):
            return _tool_result_html(message, calls)
        if isinstance(message, BashExecutionMessage):
            status = "cancelled" if message.cancelled else f"exit {message.exit_code}"
            body = terminal_command(message.command) + folded(message.output, "term")
            return _section("bash", f"bash · {status}", body)
        if isinstance(message, CustomMessage):
            return _section("note", f"{message.custom_type}", _blocks_html(message.content))
        if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
            return _section("note", message.role, markdown_html(message.summary))
        return ""
    if isinstance(entry, CompactionEntry):
        body = f"<details><summary>summary</summary>{markdown_html(entry.summary)}</details>"
        return _section("note", f"compaction · {entry.tokens_before:,} tokens before", body)
    if isinstance(entry, BranchSummaryEntry):
        return _section("note", "branch summary", markdown_html(entry.summary))
    if isinstance(entry, CustomMessageEntry):
        return _section("note", entry.custom_type, _blocks_html(entry.content))
    if isinstance(entry, ModelChangeEntry):
        why = f" ({esc(notes[entry.id])})" if entry.id in notes else ""
        return f'<div class="meta">model → {esc(entry.provider)}/{esc(entry.model_id)}{why}</div>\n'
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f'<div class="meta">thinking → {esc(entry.thinking_level)}</div>\n'
    return ""


def render_html(store: SessionStore, leaf_id: str | None = None) -> str:
    """The branch root → ``leaf_id`` (default: the current leaf) as one HTML page."""
    title = store.name or f"Session {store.session_id}"
    meta = [
        f"id {store.session_id}",
        f"cwd {store.cwd}",
        f"started {store.header.timestamp}",
    ]
    if store.path is not None:
        meta.append(f"file {store.path.name}")
    calls: dict[str, ToolCall] = {}
    notes = fallback_notes(store.entries)
    body = "".join(_entry_html(e, calls, notes) for e in store.branch_path(leaf_id))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}\n{highlight_css()}\n</style>\n</head>\n<body>\n<main>\n"
        f'<header><h1>{esc(title)}</h1><div class="meta">{" · ".join(esc(m) for m in meta)}</div></header>\n'
        f"{body}</main>\n</body>\n</html>\n"
    )

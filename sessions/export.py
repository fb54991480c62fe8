"""Export a session branch to a self-contained HTML page or to Markdown.

Model and tool output is untrusted. In HTML every piece of text goes through ``html.escape``
after terminal control sequences are stripped; the page carries no script at all and a
Content-Security-Policy that forbids scripts and remote loads, so nothing in a transcript can
run or phone home. Images are embedded only as ``data:`` URIs of known image types whose payload
is plain base64. In Markdown, prose is escaped the same way (renderers pass raw HTML through) and
its ``[`` too, so no link or image can form (a ``javascript:`` link, a remote image that phones
home when the file is viewed); names go in code spans and code in fences, each longer than any
backtick run inside it, so nothing breaks out of them.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from baton.agent.messages import (
    AgentMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from baton.providers.json_types import JsonValue
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.redact import redact
from baton.sessions.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from baton.sessions.store import SessionStore
from baton.tools.sanitize import strip_control_sequences

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"^[A-Za-z0-9+/\r\n]*={0,2}$")

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
body{font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d1f23}
main{max-width:960px;margin:0 auto;padding:24px}
header{border-bottom:1px solid #d8dbe0;margin-bottom:16px}
h1{font-size:20px;margin:0 0 8px}
.meta{color:#5b616b;font-size:12px}
.msg{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:10px 14px;margin:10px 0}
.role{font-size:11px;font-weight:600;text-transform:uppercase;color:#5b616b;margin-bottom:4px}
.user{border-left:4px solid #3b82f6}.assistant{border-left:4px solid #10b981}
.tool{border-left:4px solid #a855f7}.tool.error{border-left-color:#ef4444}
.note{background:#fffbea;border-left:4px solid #f59e0b}.bash{border-left:4px solid #64748b}
.text{white-space:pre-wrap;word-wrap:break-word}
pre{white-space:pre-wrap;word-wrap:break-word;background:#f1f3f5;padding:8px;border-radius:4px;
font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;margin:6px 0}
details summary{cursor:pointer;color:#5b616b}
.thinking{color:#5b616b;font-style:italic}
.error-text{color:#b91c1c}
img{max-width:100%;border:1px solid #e1e4e8;border-radius:4px}
"""


def clean(text: str) -> str:
    """Terminal control sequences removed."""
    return strip_control_sequences(text)


def esc(text: str) -> str:
    """Safe to put in HTML text or a quoted attribute."""
    return html.escape(clean(text), quote=True)


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


def _json(value: JsonValue) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _section(css: str, role: str, body: str) -> str:
    return f'<section class="msg {css}"><div class="role">{esc(role)}</div>{body}</section>\n'


def _assistant_html(message: AssistantMessage) -> str:
    parts = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(f'<div class="text">{esc(block.text)}</div>')
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                thinking = f'<div class="text thinking">{esc(block.thinking)}</div>'
                parts.append(f"<details><summary>thinking</summary>{thinking}</details>")
        elif isinstance(block, ToolCall):
            summary = f"<summary>tool call: {esc(block.name)}</summary>"
            parts.append(f"<details open>{summary}<pre>{esc(_json(block.arguments))}</pre></details>")
    if message.stop_reason in ("error", "aborted"):
        parts.append(f'<div class="error-text">[{esc(message.stop_reason)}] {esc(message.error_message or "")}</div>')
    role = f"assistant · {message.provider}/{message.model}"
    return _section("assistant", role, "".join(parts))


def _entry_html(entry: SessionEntry) -> str:
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return _section("user", "user", _blocks_html(message.content))
        if isinstance(message, AssistantMessage):
            return _assistant_html(message)
        if isinstance(message, ToolResultMessage):
            css = "tool error" if message.is_error else "tool"
            texts = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = "".join(_image_html(b) for b in message.content if isinstance(b, ImageContent))
            body = f"<pre>{esc(texts)}</pre>{images}"
            return _section(css, f"tool result · {message.tool_name}", body)
        if isinstance(message, BashExecutionMessage):
            status = "cancelled" if message.cancelled else f"exit {message.exit_code}"
            body = f"<pre>$ {esc(message.command)}\n{esc(message.output)}</pre>"
            return _section("bash", f"bash · {status}", body)
        if isinstance(message, CustomMessage):
            return _section("note", f"{message.custom_type}", _blocks_html(message.content))
        if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
            return _section("note", message.role, f'<div class="text">{esc(message.summary)}</div>')
        return ""
    if isinstance(entry, CompactionEntry):
        body = f'<details><summary>summary</summary><div class="text">{esc(entry.summary)}</div></details>'
        return _section("note", f"compaction · {entry.tokens_before:,} tokens before", body)
    if isinstance(entry, BranchSummaryEntry):
        return _section("note", "branch summary", f'<div class="text">{esc(entry.summary)}</div>')
    if isinstance(entry, CustomMessageEntry):
        return _section("note", entry.custom_type, _blocks_html(entry.content))
    if isinstance(entry, ModelChangeEntry):
        return f'<div class="meta">model → {esc(entry.provider)}/{esc(entry.model_id)}</div>\n'
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
    body = "".join(_entry_html(e) for e in store.branch_path(leaf_id))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f'<header><h1>{esc(title)}</h1><div class="meta">{" · ".join(esc(m) for m in meta)}</div></header>\n'
        f"{body}</main>\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------------------------
# Markdown


def md_text(text: str) -> str:
    """Prose for Markdown: control sequences stripped, HTML markup neutralised, and ``[``
    escaped so that no link, image or link definition forms."""
    return html.escape(clean(text), quote=False).replace("[", "\\[")


def md_line(text: str) -> str:
    """:func:`md_text` on one line (a heading or a list item cannot be split)."""
    return md_text(" ".join(text.splitlines()))


def code_span(text: str) -> str:
    """``text`` as an inline code span (shown literally) on one line, delimited by more
    backticks than any run inside it."""
    body = " ".join(clean(text).splitlines())
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {body} {ticks}"


def fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    body = clean(text)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def _md_blocks(content: str | Sequence[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return md_text(content)
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(md_text(block.text))
        elif isinstance(block, ImageContent):
            parts.append(f"*\\[image: {md_line(block.mime_type)}]*")
    return "\n\n".join(parts)


def _entry_markdown(entry: SessionEntry) -> str:
    if isinstance(entry, MessageEntry):
        return _message_markdown(entry.message)
    if isinstance(entry, CompactionEntry):
        return f"### Compaction ({entry.tokens_before:,} tokens before)\n\n{md_text(entry.summary)}"
    if isinstance(entry, BranchSummaryEntry):
        return f"### Branch summary\n\n{md_text(entry.summary)}"
    if isinstance(entry, CustomMessageEntry):
        return f"### {md_line(entry.custom_type)}\n\n{_md_blocks(entry.content)}"
    if isinstance(entry, ModelChangeEntry):
        return f"*model → {md_line(entry.provider)}/{md_line(entry.model_id)}*"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return f"*thinking → {md_line(entry.thinking_level)}*"
    return ""


def _message_markdown(message: AgentMessage) -> str:
    if isinstance(message, UserMessage):
        return f"## User\n\n{_md_blocks(message.content)}"
    if isinstance(message, AssistantMessage):
        return _assistant_markdown(message)
    if isinstance(message, ToolResultMessage):
        texts = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
        state = " (error)" if message.is_error else ""
        return f"### Tool result: {code_span(message.tool_name)}{state}\n\n{fence(texts)}"
    if isinstance(message, BashExecutionMessage):
        return f"### Bash: {code_span(message.command)}\n\n{fence(message.output)}"
    if isinstance(message, CustomMessage):
        return f"### {md_line(message.custom_type)}\n\n{_md_blocks(message.content)}"
    if isinstance(message, CompactionSummaryMessage | BranchSummaryMessage):
        return f"### {md_line(message.role)}\n\n{md_text(message.summary)}"
    return ""


def _assistant_markdown(message: AssistantMessage) -> str:
    parts = [f"## Assistant ({md_line(message.provider)}/{md_line(message.model)})"]
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            parts.append(md_text(block.text))
        elif isinstance(block, ThinkingContent) and block.thinking.strip():
            quoted = "\n".join(f"> {line}" for line in md_text(block.thinking).split("\n"))
            parts.append(f"> *thinking*\n{quoted}")
        elif isinstance(block, ToolCall):
            parts.append(f"**Tool call:** {code_span(block.name)}\n\n{fence(_json(block.arguments), 'json')}")
    if message.stop_reason in ("error", "aborted"):
        parts.append(f"*\\[{md_line(message.stop_reason)}] {md_line(message.error_message or '')}*")
    return "\n\n".join(parts)


def render_markdown(store: SessionStore, leaf_id: str | None = None) -> str:
    """The branch root → ``leaf_id`` (default: the current leaf) as Markdown."""
    title = store.name or f"Session {store.session_id}"
    head = [
        f"# {md_line(title)}",
        "",
        f"- id: {code_span(store.session_id)}",
        f"- cwd: {code_span(store.cwd)}",
        f"- started: {md_line(store.header.timestamp)}",
    ]
    parts = ["\n".join(head)]
    parts.extend(p for p in (_entry_markdown(e) for e in store.branch_path(leaf_id)) if p)
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------
# Files


def normalize_format(fmt: str | None, out_path: Path | None = None) -> Literal["html", "markdown"]:
    """``html`` or ``markdown`` from a format name or the output file's extension."""
    name = (fmt or "").lower().strip()
    if not name and out_path is not None:
        name = "markdown" if out_path.suffix.lower() in (".md", ".markdown") else "html"
    if name in ("md", "markdown"):
        return "markdown"
    if name in ("", "html", "htm"):
        return "html"
    raise ValueError(f"Unknown export format {fmt!r}; use 'html' or 'markdown'")


def default_export_path(store: SessionStore, fmt: Literal["html", "markdown"], directory: Path | None = None) -> Path:
    """``baton-session-<file stem or id>.html|.md`` in ``directory`` (default: the cwd)."""
    stem = store.path.stem if store.path is not None else store.session_id
    return (directory or Path.cwd()) / f"baton-session-{stem}.{'md' if fmt == 'markdown' else 'html'}"


def write_export(
    store: SessionStore, out_path: Path | None, fmt: str | None = None, leaf_id: str | None = None
) -> Path:
    """Render and write an export (mode 0600: transcripts may hold secrets) with every configured
    key redacted; returns its path."""
    kind = normalize_format(fmt, out_path)
    target = out_path or default_export_path(store, kind)
    text = render_markdown(store, leaf_id) if kind == "markdown" else render_html(store, leaf_id)
    text = redact(text)  # a file written before keys were redacted, or another tool's, may hold one
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return target


def export_session(
    path_to_session_file: Path | str, out_path: Path | str | None = None, fmt: str | None = None
) -> Path:
    """Export a session file (``baton --export``): its current branch (the last entry's)."""
    store = SessionStore.load(Path(path_to_session_file))
    return write_export(store, Path(out_path) if out_path is not None else None, fmt)


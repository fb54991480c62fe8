"""Export a session branch to Markdown, or to a self-contained HTML page (:mod:`sessions.export_html`),
and write either file.

Model and tool output is untrusted. In Markdown, prose is HTML-escaped (renderers pass raw HTML
through) and its ``[`` too, so no link or image can form (a ``javascript:`` link, a remote image that
phones home when the file is viewed); names go in code spans and code in fences, each longer than any
backtick run inside it, so nothing breaks out of them. Keys are redacted from the finished file.
"""

from __future__ import annotations

import html
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
from baton.sessions.export_html import render_html
from baton.sessions.export_tools import json_text
from baton.sessions.failover import fallback_notes
from baton.sessions.store import SessionStore
from baton.tools.sanitize import strip_control_sequences

__all__ = [
    "default_export_path", "export_session", "normalize_format", "render_html", "render_markdown", "write_export",
]


def clean(text: str) -> str:
    """Terminal control sequences removed."""
    return strip_control_sequences(text)


# ---------------------------------------------------------------------------------------------
# Markdown


_PROSE_ESCAPES = str.maketrans({"\\": "\\\\", "[": "\\[", "`": "\\`", "~": "\\~"})


def md_text(text: str) -> str:
    """Prose for Markdown: control sequences stripped, HTML markup neutralised, ``[`` escaped so
    that no link, image or link definition forms, and backticks and tildes so that no fence or code
    span opens (one opened in prose would end inside a later fence, leaving its raw code outside);
    backslashes first, so that one in the text cannot undo an escape."""
    return html.escape(clean(text), quote=False).translate(_PROSE_ESCAPES)


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


def _entry_markdown(entry: SessionEntry, notes: dict[str, str]) -> str:
    if isinstance(entry, MessageEntry):
        return _message_markdown(entry.message)
    if isinstance(entry, CompactionEntry):
        return f"### Compaction ({entry.tokens_before:,} tokens before)\n\n{md_text(entry.summary)}"
    if isinstance(entry, BranchSummaryEntry):
        return f"### Branch summary\n\n{md_text(entry.summary)}"
    if isinstance(entry, CustomMessageEntry):
        return f"### {md_line(entry.custom_type)}\n\n{_md_blocks(entry.content)}"
    if isinstance(entry, ModelChangeEntry):
        why = f" ({md_line(notes[entry.id])})" if entry.id in notes else ""
        return f"*model → {md_line(entry.provider)}/{md_line(entry.model_id)}{why}*"
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
            parts.append(f"**Tool call:** {code_span(block.name)}\n\n{fence(json_text(block.arguments), 'json')}")
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
    notes = fallback_notes(store.entries)
    parts.extend(p for p in (_entry_markdown(e, notes) for e in store.branch_path(leaf_id)) if p)
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


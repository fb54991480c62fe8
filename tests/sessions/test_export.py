"""Export: self-contained HTML with everything escaped, and Markdown."""

from __future__ import annotations

import base64
import html.parser
import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.agent.messages import BashExecutionMessage
from baton.providers.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.sessions import SessionStore, export_session
from baton.sessions.export import fence

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)><a href="javascript:alert(2)">x</a>'


class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)


def _session(tmp_path: Path) -> Path:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_session_info(f"name {EVIL}")
    png = base64.b64encode(b"png").decode()
    store.append_message(UserMessage(content=[TextContent(text=f"user says {EVIL}"),
                                              ImageContent(data=png, mime_type="image/png"),
                                              ImageContent(data='x" onerror="alert(3)', mime_type="image/png"),
                                              ImageContent(data="PGh0bWw+", mime_type="text/html")]))
    call = ToolCall(id="c1", name=f"tool{EVIL}", arguments={"command": EVIL})
    store.append_message(AssistantMessage(
        api="x", provider="p", model=f"m{EVIL}",
        content=[ThinkingContent(thinking=f"thinking {EVIL}"), TextContent(text=f"answer {EVIL}\x1b[31mred\x1b[0m"),
                 call], stop_reason="toolUse"))
    store.append_message(ToolResultMessage(tool_call_id="c1", tool_name="bash",
                                           content=[TextContent(text=f"out {EVIL} ```` fence")]))
    store.append_message(BashExecutionMessage(command=f"echo {EVIL}", output=f"\x1b]0;title\x07{EVIL}", exit_code=0))
    store.append_model_change("prov", f"model{EVIL}")
    store.close()
    assert store.path is not None
    return store.path


def test_html_export_escapes_everything_and_runs_nothing(tmp_path: Path) -> None:
    path = _session(tmp_path)
    out = export_session(path, tmp_path / "out.html")
    text = out.read_text()
    parser = _Collector()
    parser.feed(text)
    assert "script" not in parser.tags and "a" not in parser.tags
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    assert not any(value and "javascript:" in value for _, value in parser.attrs)
    img_sources = [v for k, v in parser.attrs if k == "src"]
    assert img_sources == ["data:image/png;base64," + base64.b64encode(b"png").decode()]
    assert "[image omitted: text/html]" in text and "[image omitted: image/png]" in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "\x1b" not in text and "\x07" not in text and "answer" in text and "red" in text
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_markdown_export_neutralises_markup_and_fences_code(tmp_path: Path) -> None:
    path = _session(tmp_path)
    out = export_session(path, tmp_path / "out.md")
    text = out.read_text()
    prose = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1$", "", text)  # code fences render literally
    prose = re.sub(r"(`+) .*? \1", "", prose)  # and so do code spans
    assert "<script>" in text and "<script>" not in prose and "&lt;script&gt;" in prose
    assert "\x1b" not in text
    assert "`````\nout <script>" in text, "code fences outgrow the backticks inside"
    assert text.startswith("# name &lt;script&gt;")


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence("a ``` b").startswith("````\n")
    assert fence("plain").startswith("```\n")


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Unknown export format"):
        export_session(_session(tmp_path), tmp_path / "x.pdf", "pdf")


# --------------------------------------------------------------------------------------------
# Everything a session file may hold, hostile (issue 23): the header and every entry kind


HOSTILE = (EVIL + "`<b onmouseover=alert(3)>`[l](javascript:alert(4))![i](http://evil.test/t.png)"
           "\n[ref]: javascript:alert(5)\n\u202etxt.sh\u2066x\u2069")
_SAFE_TAGS = frozenset({"html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2", "h3",
                        "div", "section", "details", "summary", "pre", "img", "p", "code", "em", "strong",
                        "blockquote", "ul", "ol", "li", "hr", "br", "span", "s", "h4", "h5", "h6",
                        "table", "thead", "tbody", "tr", "th", "td"})
_ALIGN = re.compile(r"text-align:(left|right|center)")


class _Unsafe(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, ...]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SAFE_TAGS:
            self.found.append(("tag", tag))
        for name, value in attrs:
            lowered = (value or "").lower()
            remote = tag == "img" and name == "src" and not lowered.startswith("data:image/")
            styled = name == "style" and not _ALIGN.fullmatch(lowered)
            if styled or name.startswith("on") or "javascript:" in lowered or remote or name in ("href", "action"):
                self.found.append((tag, name, value or ""))


def unsafe_markup(rendered_html: str) -> list[tuple[str, ...]]:
    """Tags, handlers and links in rendered HTML that a transcript must never produce."""
    parser = _Unsafe()
    parser.feed(rendered_html)
    return parser.found


def hostile_session_file(directory: Path, text: str = HOSTILE) -> Path:
    """A session file whose every string a reader sees holds ``text``."""
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    def entry(number: int, kind: str, **fields: Any) -> dict[str, Any]:
        parent = f"e{number - 1:07d}" if number > 1 else None
        return {"type": kind, "id": f"e{number:07d}", "parentId": parent, "timestamp": "t" + text, **fields}

    lines = [
        {"type": "session", "version": 3, "id": "id" + text, "timestamp": "2024" + text, "cwd": "/w" + text},
        entry(1, "session_info", name="n" + text),
        entry(2, "message", message={"role": "user", "content": "u" + text, "timestamp": 1}),
        entry(3, "message", message={
            "role": "assistant", "api": "a" + text, "provider": "p" + text, "model": "m" + text, "usage": usage,
            "content": [{"type": "text", "text": "t" + text}, {"type": "thinking", "thinking": "th" + text},
                        {"type": "toolCall", "id": "c1", "name": "n" + text, "arguments": {"k" + text: "v" + text}}],
            "stopReason": "error", "errorMessage": "e" + text, "timestamp": 2}),
        entry(4, "message", message={
            "role": "toolResult", "toolCallId": "c1", "toolName": "tn" + text, "isError": True, "timestamp": 3,
            "content": [{"type": "text", "text": "r" + text}, {"type": "image", "data": "AAAA",
                                                              "mimeType": "image/png" + text}]}),
        entry(5, "message", message={"role": "bashExecution", "command": "c" + text, "output": "o" + text,
                                     "exitCode": 1, "cancelled": False, "truncated": False, "timestamp": 4}),
        entry(6, "model_change", provider="p" + text, modelId="m" + text),
        entry(7, "thinking_level_change", thinkingLevel="high" + text),
        entry(8, "compaction", summary="s" + text, firstKeptEntryId="e0000002", tokensBefore=5),
        entry(9, "branch_summary", fromId="e0000002", summary="b" + text),
        entry(10, "custom_message", customType="ct" + text, content="cm" + text, display=True),
        entry(11, "label", targetId="e0000002", label="l" + text),
        entry(12, "message", message={"role": "custom", "customType": "cu" + text, "display": True, "timestamp": 5,
                                      "content": [{"type": "text", "text": "cx" + text}]}),
    ]
    path = directory / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_markdown_export_of_every_field_renders_no_markup_links_or_remote_images(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    path = hostile_session_file(tmp_path)
    assert SessionStore.load(path).warnings == []
    text = export_session(path, tmp_path / "out.md").read_text()
    assert unsafe_markup(MarkdownIt("commonmark").render(text)) == []
    assert "<U+202E>txt.sh<U+2066>x<U+2069>" in text and "\u202e" not in text


def test_html_export_of_every_field_escapes_it(tmp_path: Path) -> None:
    text = export_session(hostile_session_file(tmp_path), tmp_path / "out.html").read_text()
    assert unsafe_markup(text) == []
    assert "\u202e" not in text and "&lt;U+202E&gt;txt.sh" in text


_PIECES = [*"<>\"'`&=/()[]!:;\n\\ #*_~", "on", "javascript:", "script", "img", "src", "http://x", "\u202e", "\x1b",
           "<script>", "<img src=x onerror=alert(1)>", "![i](http://x/t.png)", "[l](javascript:alert(1))",
           "\n[r]: javascript:alert(1)\n", "``", "\n```\n", "<b onmouseover=alert(1)>"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_exports_never_render_markup_whatever_the_text(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    from markdown_it import MarkdownIt

    directory = tmp_path_factory.mktemp("export")
    path = hostile_session_file(directory, text)
    assert unsafe_markup(export_session(path, directory / "out.html").read_text()) == []
    markdown = export_session(path, directory / "out.md").read_text()
    assert unsafe_markup(MarkdownIt("commonmark").render(markdown)) == []


def test_html_export_redacts_keys_before_markup_could_split_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-proj-Xy7Qw2Er5Ty8Ui1Op4As6Df9"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    store = SessionStore.create(tmp_path, tmp_path)
    code = f"client = make({key}-1)\nprint({key})"
    write = ToolCall(id="w1", name="write", arguments={"path": "a.py", "content": f"token = {key} - 1\n"})
    store.append_message(AssistantMessage(
        api="x", provider="p", model="m", stop_reason="toolUse",
        content=[TextContent(text=f"```python\n{code}\n```\n\nsee *{key}* and `{key}`"), write]))
    store.close()
    assert store.path is not None
    text = export_session(store.path, tmp_path / "out.html").read_text()
    assert '<span class="' in text, "the code is highlighted"
    plain = re.sub(r"<[^>]+>", "", text)
    assert "Xy7Qw2Er5Ty8Ui1Op4As6Df9" not in plain and "Ty8Ui1Op4" not in text
    assert "[redacted]" in text


@pytest.mark.parametrize("text", ["<script>\n```\n~~~", "\\[l](http://evil.test/x) !\\[i](http://evil.test/t.png)"],
                         ids=["fence-in-prose", "escaped-backslash-before-bracket"])
def test_markdown_prose_cannot_open_a_fence_or_undo_an_escape(tmp_path: Path, text: str) -> None:
    """A fence opened in prose would shift every later fence, leaving code (written raw) outside one;
    a backslash in prose before an escaped ``[`` would escape the escape."""
    from markdown_it import MarkdownIt

    markdown = export_session(hostile_session_file(tmp_path, text), tmp_path / "out.md").read_text()
    assert unsafe_markup(MarkdownIt("commonmark").render(markdown)) == []


def test_markdown_prose_cannot_close_a_fence_of_tool_output(tmp_path: Path) -> None:
    """A ``~~~`` fence opened by a user's prose would otherwise end inside a tool result's fence."""
    from markdown_it import MarkdownIt

    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(UserMessage(content="look:\n~~~"))
    store.append_message(ToolResultMessage(tool_call_id="c1", tool_name="bash",
                                           content=[TextContent(text="x\n~~~\n<img src=x onerror=alert(1)>")]))
    store.close()
    assert store.path is not None
    markdown = export_session(store.path, tmp_path / "out.md").read_text()
    assert unsafe_markup(MarkdownIt("commonmark").render(markdown)) == []

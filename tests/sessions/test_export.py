"""Export: self-contained HTML with everything escaped, and Markdown."""

from __future__ import annotations

import base64
import html.parser
import re
import stat
from pathlib import Path

import pytest

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

"""The HTML export opened in a real browser: headless Chromium (Debian's ``chromium``) loads the
exported page, and the tests read the DOM it built and the screenshot it took at a phone's width.

A session with what a reader wants to see (an answer in Markdown with a table and code, thinking,
an edit, a bash run with a long output, a written file, an image) and hostile text in every place a
model or a tool fills (``<script>``, ``onerror=``, ``javascript:`` links, raw HTML, Markdown images
and HTML elements pointing at a local server that records every request).
"""

from __future__ import annotations

import base64
import html.parser
import io
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is absent (apt-get install chromium; .ci/run installs it)"
)

PHONE = (390, 844)

ANSWER = """The answer is **5**.

| file | lines |
|------|------:|
| a.py | 12 |

```python
def five() -> int:
    return 5
```

A wide table and long lines must not widen the page on a phone:

| """ + " | ".join(f"column_{n}" for n in range(12)) + """ |
|""" + "---|" * 12 + """
| """ + " | ".join(f"value_number_{n}" for n in range(12)) + """ |

`""" + "x" * 200 + """` and https://example.invalid/""" + "a" * 200 + """

```
""" + "y" * 300 + """
```
"""


# ---------------------------------------------------------------------------------------------
# A local server that records every request: the page must make none


class _Recorder(BaseHTTPRequestHandler):
    requests: list[str]

    def do_GET(self) -> None:
        self.requests.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """``(base URL, paths requested)`` of a server on 127.0.0.1."""
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"requests": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def hostile(base: str) -> str:
    """Text that would run script, load from ``base`` or link away if it became markup."""
    return (f'<script>document.title="pwned"</script><img src="{base}/raw-img" onerror="alert(1)">'
            f'<link rel="stylesheet" href="{base}/raw-css"><iframe src="{base}/raw-frame"></iframe>'
            f"\n\n![remote]({base}/md-image.png) [click](javascript:alert(2)) <{base}/autolink>"
            f'\n\n<div onmouseover="alert(3)" style="background:url({base}/raw-bg)">x</div>\n')


def build_session(directory: Path, base: str) -> Path:
    """A session file with every kind of block an export shows, hostile text in each."""
    evil = hostile(base)
    png = _png()
    store = SessionStore.create(directory, directory)
    store.append_session_info("browser check")
    store.append_message(UserMessage(content=[TextContent(text=f"what is 2+3? {evil}"),
                                              ImageContent(data=png, mime_type="image/png")]))
    edit = ToolCall(id="e1", name="edit", arguments={"path": "src/a.py", "oldText": "x = 1\n", "newText": "x = 5\n"})
    bash = ToolCall(id="b1", name="bash", arguments={"command": "seq 1 100"})
    write = ToolCall(id="w1", name="write", arguments={"path": "b.py", "content": "import os\nprint(os.sep)\n"})
    odd = ToolCall(id="o1", name=f"odd{evil}", arguments={"k": evil})
    store.append_message(AssistantMessage(
        api="x", provider="p", model="m",
        content=[ThinkingContent(thinking=f"Let me add. {evil}"), TextContent(text=ANSWER + evil),
                 edit, bash, write, odd], stop_reason="toolUse"))
    store.append_message(ToolResultMessage(tool_call_id="e1", tool_name="edit",
                                           content=[TextContent(text="Successfully replaced 1 block(s) in src/a.py.")]))
    output = "\n".join(str(n) for n in range(1, 101)) + "\n" + evil
    store.append_message(ToolResultMessage(tool_call_id="b1", tool_name="bash", content=[TextContent(text=output)]))
    store.append_message(ToolResultMessage(tool_call_id="o1", tool_name=f"odd{evil}", is_error=True,
                                           content=[TextContent(text=evil)]))
    store.append_message(BashExecutionMessage(command=f"echo {evil}", output=evil, exit_code=0))
    store.close()
    assert store.path is not None
    return store.path


def _png() -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


# ---------------------------------------------------------------------------------------------
# Chromium


def chromium(profile: Path, *args: str) -> str:
    """Run headless Chromium at a phone's window size; its stdout. Its whole process group is
    killed afterwards, so no renderer outlives the test."""
    command = [str(CHROMIUM), "--headless=new", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
               "--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}",
               f"--window-size={PHONE[0]},{PHONE[1]}", *args]
    if os.geteuid() == 0:
        command.insert(2, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=180)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    assert process.returncode == 0, stderr[-2000:]
    return stdout


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            yield from child.walk()


_VOID = {"meta", "img", "br", "hr", "link", "input"}


class _Tree(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in _VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element.text += data


def dom(page: Path, profile: Path) -> Element:
    """The DOM Chromium built from ``page``, after it loaded."""
    parser = _Tree()
    parser.feed(chromium(profile, "--dump-dom", page.as_uri()))
    return parser.root


@pytest.fixture
def exported(tmp_path: Path, listener: tuple[str, list[str]]) -> Path:
    base, _ = listener
    return export_session(build_session(tmp_path, base), tmp_path / "page.html")


# ---------------------------------------------------------------------------------------------
# What a reader sees


def test_the_page_renders_markdown_code_diffs_terminals_and_folds(exported: Path, tmp_path: Path) -> None:
    root = dom(exported, tmp_path / "profile")
    elements = list(root.walk())
    assert any(e.tag == "strong" and e.text == "5" for e in elements), "**5** is bold"
    assert "**5**" not in root.text
    tables = [e for e in elements if e.tag == "table"]
    assert tables and [c.text for c in tables[0].walk() if c.tag == "th"] == ["file", "lines"]
    code = [e for e in elements if e.tag == "pre" and "hl" in e.classes() and "def five" in e.text]
    assert code and {"k", "nf"} <= {c for s in code[0].walk() if s.tag == "span" for c in s.classes()}, \
        "the Python block is highlighted (keyword, function name)"
    diffs = [e for e in elements if "diff" in e.classes()]
    assert diffs, "the edit is a diff"
    rows = {(r.attrs["class"], r.text) for r in diffs[0].children}
    assert ("del", "-x = 1") in rows and ("add", "+x = 5") in rows
    assert '"oldText"' not in root.text, "not the edit's JSON arguments"
    terminals = [e for e in elements if e.tag == "pre" and "term" in e.classes()]
    assert any(t.text == "$ seq 1 100" for t in terminals)
    folds = [e for e in elements if e.tag == "details" and "more" in e.classes()]
    assert folds and "100" in folds[0].text and "show" in folds[0].children[0].text
    assert any("term" in p.classes() and p.text.startswith("1\n2\n") for p in terminals), "the output's head shows"
    thinking = [e for e in elements if e.tag == "details" and "thinking" in e.classes()]
    assert thinking and "open" not in thinking[0].attrs and "Let me add." in thinking[0].text
    writes = [e for e in elements if e.tag == "pre" and "import os" in e.text]
    assert writes and any(s.tag == "span" for s in writes[0].walk()), "the written file is highlighted"
    images = [e for e in elements if e.tag == "img"]
    assert [i.attrs["src"][:22] for i in images] == ["data:image/png;base64,"]


def test_hostile_text_stays_text_and_the_page_loads_nothing(
    exported: Path, tmp_path: Path, listener: tuple[str, list[str]]
) -> None:
    base, requests = listener
    root = dom(exported, tmp_path / "profile")
    elements = list(root.walk())
    tags = {e.tag for e in elements}
    assert not tags & {"script", "iframe", "link", "a", "object", "embed", "form", "base"}
    assert not [(e.tag, name) for e in elements for name in e.attrs if name.startswith("on")]
    urls = [value for e in elements for name, value in e.attrs.items() if name in ("src", "href", "action")]
    assert all(url.startswith("data:image/") for url in urls), urls
    assert not [e for e in elements if "background:url" in e.attrs.get("style", "")]
    assert '<script>document.title="pwned"</script>' in root.text, "shown as text"
    assert [e.text for e in elements if e.tag == "title"] == ["browser check"]
    assert requests == [], "the page made no request"
    # The control: the same browser, on a page that does load from the server, is seen doing it.
    control = tmp_path / "control.html"
    control.write_text(f'<!DOCTYPE html><img src="{base}/control.png">', encoding="utf-8")
    dom(control, tmp_path / "profile")
    assert "/control.png" in requests


def test_the_page_fits_a_phone_and_screenshots(exported: Path, tmp_path: Path) -> None:
    from PIL import Image

    # A copy with a measuring script (the export itself has none, and its CSP would block one).
    # Headless Chromium lays out --dump-dom pages at least 500px wide, so the copy pins the page
    # to a phone's width and measures whether anything sticks out of the body.
    page = exported.read_text(encoding="utf-8")
    csp = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]*>', page)
    assert csp is not None
    pin = f"<style>html{{width:{PHONE[0]}px}}</style>"
    measure = ("<script>addEventListener('load',()=>{const b=document.body;"
               "b.dataset.widths=b.scrollWidth+' '+b.clientWidth})</script>")
    page = page.replace(csp.group(0), pin).replace("</body>", measure + "</body>")
    measured = tmp_path / "measured.html"
    measured.write_text(page, encoding="utf-8")
    body = next(e for e in dom(measured, tmp_path / "profile").walk() if e.tag == "body")
    scroll_width, width = (int(n) for n in body.attrs["data-widths"].split())
    assert width == PHONE[0]
    assert scroll_width <= width, "nothing is wider than a phone's screen"

    shot = tmp_path / "phone.png"
    chromium(tmp_path / "profile", f"--screenshot={shot}", exported.as_uri())
    with Image.open(shot) as image:
        assert image.size == PHONE
        low, high = image.convert("L").getextrema()
        assert high - low > 100, "the screenshot shows the page, not a blank window"

"""What a fetched body becomes for the model: HTML as Markdown, JSON and text as they are, images
as images, PDFs and other binary types refused with a clear reason.

HTML goes through ``html-to-markdown`` (a Rust converter: fast, keeps documentation pages whole,
fenced code with languages, absolute links; chosen over markdownify, trafilatura, html2text and
others for quality, speed and robustness on hostile pages). Its conversion releases the GIL, so it
runs in a worker thread and the UI stays responsive; its input is the body cut at the download
limit, which bounds its time and memory.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Literal

from baton.agent.tool import ToolError
from baton.tools.images import detect_image_mime

ContentKind = Literal["html", "text", "json", "image"]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
TEXT_TYPES = frozenset({
    "application/xml", "application/javascript", "application/x-javascript", "application/ecmascript",
    "application/x-sh", "application/x-yaml", "application/yaml", "application/toml", "application/x-ndjson",
    "application/rss+xml", "application/atom+xml", "image/svg+xml",
})
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# Bounded and stopping at the next tag, so a hostile page cannot make these scans quadratic.
_DIV_THEN_PRE = re.compile(r"(<div\b([^<>]{0,2000})>\s{0,200})<pre(?=[\s>])", re.IGNORECASE)
_HIGHLIGHT_CLASS = re.compile(r"\bhighlight(?:-source)?-([A-Za-z0-9_+-]{1,40})")
_DROPPED = ["svg", "footer", "aside", "[role=navigation]", "[role=banner]", "[role=contentinfo]",
            "[role=complementary]", "[aria-hidden=true]"]
_JS_LINK = re.compile(r"\[([^\[\]]{0,2000})\]\(\s{0,20}javascript:(?:[^()\s]|\([^()\s]{0,200}\)){0,2000}\)",
                      re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MediaType:
    """A response's ``Content-Type``: the type in lower case and its charset, if named."""

    type: str
    charset: str | None

    @classmethod
    def parse(cls, header: str | None) -> MediaType:
        """``text/html; charset=UTF-8`` -> ``MediaType("text/html", "utf-8")``."""
        kind, *params = (header or "").split(";")
        charset = None
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'").lower()
        return cls(kind.strip().lower(), charset)


def kind_of(media: MediaType, head: bytes) -> ContentKind:
    """What the body is, by its declared type (checked against its first bytes where that is
    cheap); raises :class:`ToolError` for PDFs and types baton does not read."""
    declared = media.type
    if declared == "application/pdf" or head.startswith(b"%PDF-"):
        raise ToolError("Refused: the URL is a PDF document, which web_fetch does not read. Download it with "
                        "bash (curl) if the sandbox's network is open, or ask the user for the text.")
    if declared in IMAGE_TYPES:
        if detect_image_mime(head) is None:
            raise ToolError(f"Refused: the server said {declared}, but the body is not such an image")
        return "image"
    if declared in HTML_TYPES:
        return "html"
    if declared == "application/json" or declared.endswith("+json"):
        return "json"
    if declared.startswith("text/") or declared in TEXT_TYPES or declared.endswith("+xml"):
        return "text"
    if not declared and b"\0" not in head:
        return "html" if head.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")) else "text"
    raise ToolError(f"Refused: web_fetch reads web pages, JSON, text and images; this URL is "
                    f"{declared or 'binary data without a content type'}.")


def decode(body: bytes, media: MediaType, kind: ContentKind) -> str:
    """The body as text: the declared charset, else an HTML page's ``<meta charset>``, else UTF-8
    (undecodable bytes replaced, never an error)."""
    charset = media.charset
    if charset is None and kind == "html":
        found = _CHARSET.search(body[:4096])
        charset = found.group(1).decode("ascii").lower() if found else None
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def readable_json(text: str) -> str:
    """JSON as it came (pretty-printed when it arrived on one long line, so the model can read it)."""
    if "\n" in text[:2000] or len(text) < 200:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def html_to_markdown(html: str, url: str) -> str:
    """``html`` (a page fetched from ``url``) as Markdown: links made absolute, navigation,
    scripts, forms, inline SVG icons, hidden parts and ``javascript:`` links dropped, code fences
    labelled with their language (also from GitHub's and Sphinx's ``highlight-*`` classes)."""
    from html_to_markdown import ConversionOptions, convert  # 27 ms to import: only when a page comes

    html = _DIV_THEN_PRE.sub(_label_code, html)
    options = ConversionOptions(
        base_url=url,
        extract_metadata=False,
        compact_tables=True,
        inline_data_media="alt_text_only",
        exclude_selectors=_DROPPED,
    )
    result = convert(html, options)
    markdown = _JS_LINK.sub(r"\1", result.content or "")
    if any(str(warning.kind) == "depth_limit_exceeded" for warning in result.warnings):
        markdown += "\n\n[baton: parts of the page nested deeper than 1024 elements were skipped]"
    return markdown


def _label_code(match: re.Match[str]) -> str:
    """``<div class="highlight-python"><pre>`` -> the ``<pre>`` labelled ``language-python``."""
    found = _HIGHLIGHT_CLASS.search(match.group(2))
    if found is None:
        return match.group(0)
    return f'{match.group(1)}<pre class="language-{found.group(1)}"'


async def page_text(body: bytes, media: MediaType, kind: ContentKind, url: str) -> str:
    """The text the model reads for a text-like body (HTML converted in a worker thread)."""
    text = decode(body, media, kind)
    if kind == "html":
        return await asyncio.to_thread(html_to_markdown, text, url)
    if kind == "json":
        return readable_json(text)
    return text

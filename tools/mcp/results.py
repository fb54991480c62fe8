"""MCP tool results as agent tool results.

Text and image content go to the model; resource links and embedded resources become text
naming their URI (embedded text included, binary summarised); audio and unknown blocks become
readable JSON. ``structuredContent`` and ``_meta`` go to the details (for the UI and the session
file), and ``isError`` makes the result an error the model sees as such. A ``structuredContent``
longer than :data:`MAX_STRUCTURED_DETAILS_CHARS` as JSON stays out of the details (they say how
long it was): the text the model reads already carries it (the server's text blocks, or its JSON
cut like any text), and every output that repeats the details would repeat it. Like every value from
outside that becomes part of a message, the details are cut past
:data:`~providers.json_depth.MAX_VALUE_DEPTH` levels (the model still reads the whole structure as
text when the server sent no content). An answer nested too deeply for the SDK to read at all
never gets here: its call fails with the reason (:mod:`tools.mcp.unreadable`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from baton.agent.tool import AgentToolResult
from baton.providers.json_depth import MAX_VALUE_DEPTH, clamp_depth, depth_exceeds
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.messages import ImageContent, TextContent

if TYPE_CHECKING:
    from mcp_types import CallToolResult

MAX_TEXT_CHARS = 200_000
MAX_STRUCTURED_DETAILS_CHARS = 20_000


def to_tool_result(result: CallToolResult | JsonMapping, server: str, tool: str) -> AgentToolResult[JsonObject]:
    """An SDK ``CallToolResult`` (or its dict form) as an :class:`AgentToolResult`."""
    data: JsonMapping = (
        result if isinstance(result, Mapping) else result.model_dump(mode="json", by_alias=True, exclude_none=True)
    )
    blocks = data.get("content")
    content: list[TextContent | ImageContent] = []
    for block in blocks if isinstance(blocks, list) else []:
        converted = _block(block)
        if converted is not None:
            content.append(converted)
    structured = data.get("structuredContent")
    structured_json = json.dumps(structured, ensure_ascii=False) if structured is not None else ""
    if not content and structured is not None:
        content.append(TextContent(text=_cap(json.dumps(structured, indent=2, ensure_ascii=False))))
    if not content:
        content.append(TextContent(text="(no output)"))
    details: JsonObject = {"server": server, "tool": tool}
    if structured is not None and len(structured_json) <= MAX_STRUCTURED_DETAILS_CHARS:
        details["structuredContent"] = structured
    elif structured is not None:
        details["structuredContentOmitted"] = {"chars": len(structured_json), "limit": MAX_STRUCTURED_DETAILS_CHARS}
    meta = data.get("_meta")
    if meta:
        details["meta"] = meta
    if depth_exceeds(details, MAX_VALUE_DEPTH):
        details = clamp_depth(details, MAX_VALUE_DEPTH)
    return AgentToolResult(content, details, bool(data.get("isError")))


def _block(block: JsonValue) -> TextContent | ImageContent | None:
    if not isinstance(block, dict):
        return TextContent(text=str(block))
    kind = block.get("type")
    if kind == "text":
        return TextContent(text=_cap(str(block.get("text", ""))))
    data = block.get("data")
    if kind == "image" and isinstance(data, str):
        return ImageContent(data=data, mime_type=str(block.get("mimeType") or "image/png"))
    if kind == "resource_link":
        parts = [f"[Resource link: {block.get('uri', '')}]"]
        for key in ("name", "title", "description", "mimeType"):
            if block.get(key):
                parts.append(f"{key}: {block[key]}")
        return TextContent(text="\n".join(parts))
    if kind == "resource":
        return TextContent(text=_resource_text(block.get("resource")))
    return TextContent(text=_cap(json.dumps(block, indent=2, ensure_ascii=False)))


def _resource_text(resource: JsonValue) -> str:
    """An embedded resource: its text, or what its binary data is."""
    if not isinstance(resource, dict):
        resource = {}
    uri = resource.get("uri", "")
    text = resource.get("text")
    if isinstance(text, str):
        return f"[Resource: {uri}]\n{_cap(text)}"
    mime = resource.get("mimeType") or "application/octet-stream"
    blob = resource.get("blob")
    size = len(blob if isinstance(blob, str) else "") * 3 // 4
    return f"[Resource: {uri}] ({mime}, about {size} bytes of binary data)"


def _cap(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"\n\n[... {len(text) - MAX_TEXT_CHARS} more characters cut]"

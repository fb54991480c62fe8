"""ACP prompt content blocks → the text and images of a baton prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent


class PromptError(ValueError):
    """A block baton cannot take (audio, a malformed image)."""


def _as_dict(block: Any) -> dict[str, Any]:
    if isinstance(block, dict):
        return block
    dump = getattr(block, "model_dump", None)
    if dump is None:
        raise PromptError(f"unsupported prompt block: {block!r}")
    result: dict[str, Any] = dump(mode="json", by_alias=True, exclude_none=True)
    return result


def uri_path(uri: str) -> str:
    """A ``file://`` URI as a path (other URIs unchanged)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_from_blocks(blocks: list[Any]) -> tuple[str, list[ImageContent]]:
    """Text (embedded files as ``<file>`` sections, links as mentions) and images."""
    from baton.providers.messages import ImageContent

    texts: list[str] = []
    images: list[ImageContent] = []
    for raw in blocks:
        block = _as_dict(raw)
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            if not block.get("data") or not block.get("mimeType"):
                raise PromptError("an image block needs data and mimeType")
            images.append(ImageContent(data=block["data"], mime_type=block["mimeType"]))
        elif kind == "resource":
            resource = block.get("resource") or {}
            path = uri_path(str(resource.get("uri", "")))
            if isinstance(resource.get("text"), str):
                texts.append(f'<file path="{path}">\n{resource["text"]}\n</file>')
            elif str(resource.get("mimeType", "")).startswith("image/") and resource.get("blob"):
                images.append(ImageContent(data=resource["blob"], mime_type=resource["mimeType"]))
            else:
                texts.append(f"(attached binary resource {path})")
        elif kind == "resource_link":
            path = uri_path(str(block.get("uri", "")))
            texts.append(f"@{path}" if path else str(block.get("name", "")))
        elif kind == "audio":
            raise PromptError("audio prompts are not supported")
        else:
            raise PromptError(f"unsupported prompt block type: {kind!r}")
    return "\n".join(t for t in texts if t), images

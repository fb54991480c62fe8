"""MCP prompts as slash commands, and ``@server:uri`` resource mentions in a prompt.

A server's prompt ``review`` on server ``git`` is the command ``/mcp__git__review`` (the name
made like a tool's, :func:`tools.mcp.tool.tool_name`). Its words fill the prompt's arguments in
order, the last argument taking the rest of the line (as Claude Code does); the server's answer
(``prompts/get``) becomes the user message: its text, its images, its embedded resources as text.

``@git:file:///notes.md`` in a prompt (a configured server's name, a colon, a URI) attaches that
resource: the server is asked for it (``resources/read``) and its text follows the prompt, cut
like any MCP text; a binary resource is saved as :mod:`tools.mcp.resources` saves it. At most
:data:`MAX_MENTIONS` mentions are read per prompt. A mention naming no server is left as typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.providers.messages import ImageContent, TextContent
from baton.tools.mcp.results import MAX_TEXT_CHARS
from baton.tools.mcp.tool import tool_name

if TYPE_CHECKING:
    from mcp_types import GetPromptResult, Prompt

    from baton.tools.mcp.connection import McpConnection

MAX_MENTIONS = 10
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):([A-Za-z][A-Za-z0-9+.-]*:[^\s]+)")


class McpPromptError(ValueError):
    """A prompt command could not be expanded (missing argument, server error): the reason."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument a server's prompt takes."""

    name: str
    required: bool
    description: str = ""


@dataclass(frozen=True, slots=True)
class ServerPrompt:
    """A prompt as the server lists it."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...] = ()

    @classmethod
    def from_sdk(cls, prompt: Prompt) -> ServerPrompt:
        """The SDK's ``Prompt``."""
        arguments = tuple(PromptArgument(a.name, bool(a.required), a.description or "")
                          for a in prompt.arguments or [])
        return cls(prompt.name, prompt.description or prompt.title or "", arguments)

    def hint(self) -> str:
        """``<required> [optional]`` for completion."""
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)


def command_name(server: str, prompt: str) -> str:
    """``mcp__<server>__<prompt>`` (as safe and as short as a tool name)."""
    return tool_name(server, prompt)


def split_arguments(prompt: ServerPrompt, text: str) -> dict[str, str]:
    """The words of ``text`` as the prompt's arguments, in order; the last takes the rest.
    Raises :class:`McpPromptError` when a required argument is missing."""
    words = text.split()
    values: dict[str, str] = {}
    for index, argument in enumerate(prompt.arguments):
        if index >= len(words):
            break
        last = index == len(prompt.arguments) - 1
        values[argument.name] = " ".join(words[index:]) if last else words[index]
    missing = [a.name for a in prompt.arguments if a.required and a.name not in values]
    if missing:
        raise McpPromptError(f"missing {', '.join(missing)} (usage: {prompt.hint()})")
    return values


def prompt_content(result: GetPromptResult) -> list[TextContent | ImageContent]:
    """The server's messages as the user message's content (an assistant turn is labelled)."""
    content: list[TextContent | ImageContent] = []
    texts: list[str] = []
    for message in result.messages:
        block = message.content
        label = "" if message.role == "user" else f"[{message.role}] "
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(label + _cap(str(getattr(block, "text", ""))))
        elif kind == "image":
            content.append(ImageContent(data=str(getattr(block, "data", "")),
                                        mime_type=str(getattr(block, "mime_type", None) or "image/png")))
        elif kind == "resource":
            resource = getattr(block, "resource", None)
            text = getattr(resource, "text", None)
            uri = getattr(resource, "uri", "")
            texts.append(label + (f"[Resource: {uri}]\n{_cap(text)}" if isinstance(text, str)
                                  else f"[Resource: {uri}] (binary data, not shown)"))
        elif kind == "resource_link":
            texts.append(label + f"[Resource link: {getattr(block, 'uri', '')}]")
    text = "\n\n".join(t for t in texts if t) or "(the prompt is empty)"
    return [TextContent(text=text), *content]


def mentions(text: str, servers: set[str]) -> list[tuple[str, str]]:
    """``(server, uri)`` of each ``@server:uri`` naming one of ``servers`` (first ones, once each)."""
    found: list[tuple[str, str]] = []
    for match in _MENTION.finditer(text):
        pair = (match.group(1), match.group(2).rstrip(".,;:!?)\"'"))
        if pair[0] in servers and pair not in found:
            found.append(pair)
        if len(found) >= MAX_MENTIONS:
            break
    return found


async def read_mention(connection: McpConnection, uri: str, timeout: float) -> list[TextContent | ImageContent]:
    """One mentioned resource as content to attach (an error says so instead of failing the prompt)."""
    from baton.tools.mcp.connection import McpCallError
    from baton.tools.mcp.resources import describe_contents

    try:
        result = await connection.read_resource(uri, timeout=timeout)
    except McpCallError as exc:
        return [TextContent(text=f"[Resource {connection.name}:{uri} could not be read: {exc}]")]
    content, _ = describe_contents(result, uri)
    return content


def _cap(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"\n\n[... {len(text) - MAX_TEXT_CHARS} more characters cut]"

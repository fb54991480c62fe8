"""Sampling: an MCP server asks the user's model to answer (``sampling/createMessage``).

A server is outside the trust wall, and sampling lets it spend the user's money and talk to the
user's model, so every request is bounded here before the session's :data:`Sampler` sees it:

- the model sees only what the server sent: its messages and system prompt. ``includeContext``
  is ignored, so nothing of the conversation (files read, keys seen) reaches the server;
- the server's text is at most :data:`MAX_SAMPLING_CHARS` (a larger request is refused), its
  ``maxTokens`` is cut to :data:`MAX_SAMPLING_TOKENS`, tools it offers are not used;
- the session asks the user each time (the question names the server), answers with the
  session's model, counts the cost, and refuses past a number of requests per server
  (:mod:`sessions.mcp_sampling`); a mode that cannot ask (print, JSON) refuses with the reason.

A refusal reaches the server as an error with the reason; the server decides what its tool says.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.providers.messages import ImageContent, TextContent

if TYPE_CHECKING:
    from mcp_types import CreateMessageRequestParams, CreateMessageResult, ErrorData

logger = logging.getLogger(__name__)

MAX_SAMPLING_TOKENS = 4096
MAX_SAMPLING_CHARS = 100_000


class SamplingRefused(Exception):
    """The request is not answered; the message says why (the server is told)."""


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """What a server asks, bounded: its system prompt and its messages as one user turn."""

    server: str
    system_prompt: str
    content: tuple[TextContent | ImageContent, ...]
    max_tokens: int

    @property
    def text(self) -> str:
        """The request's text (for the question to the user)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))


@dataclass(frozen=True, slots=True)
class SamplingAnswer:
    """The model's answer and which model gave it (``provider/id``)."""

    text: str
    model: str


Sampler = Callable[[SamplingRequest], Awaitable[SamplingAnswer]]
"""The session's answerer (asks the user, runs the model, counts the cost)."""


def bounded_request(server: str, params: CreateMessageRequestParams) -> SamplingRequest:
    """The server's request within baton's bounds; raises :class:`SamplingRefused` when too large."""
    content: list[TextContent | ImageContent] = []
    size = len(params.system_prompt or "")
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        label = "" if message.role == "user" else f"[{message.role}] "
        for block in blocks:
            kind = getattr(block, "type", "")
            if kind == "text":
                text = label + str(getattr(block, "text", ""))
                size += len(text)
                content.append(TextContent(text=text))
            elif kind == "image":
                data = str(getattr(block, "data", ""))
                size += len(data) // 100  # an image counts, but far less than its base64
                content.append(ImageContent(data=data, mime_type=str(getattr(block, "mime_type", "image/png"))))
            else:
                raise SamplingRefused(f"baton answers text and images only, not {kind or 'this content'}")
    if size > MAX_SAMPLING_CHARS:
        raise SamplingRefused(f"the request is larger than baton answers ({size} > {MAX_SAMPLING_CHARS} characters)")
    if not content:
        raise SamplingRefused("the request holds no message")
    tokens = max(1, min(int(params.max_tokens or MAX_SAMPLING_TOKENS), MAX_SAMPLING_TOKENS))
    return SamplingRequest(server, params.system_prompt or "", tuple(content), tokens)


async def answer(sampler: Sampler | None, server: str,
                 params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
    """The SDK's answer to a ``sampling/createMessage`` from ``server``."""
    from mcp_types import INVALID_REQUEST, CreateMessageResult, ErrorData
    from mcp_types import TextContent as McpText

    try:
        if sampler is None:
            raise SamplingRefused("this baton session does not answer sampling requests")
        reply = await sampler(bounded_request(server, params))
    except SamplingRefused as exc:
        return ErrorData(code=INVALID_REQUEST, message=f"baton refused the sampling request: {exc}")
    except Exception as exc:  # the sampler's own failure: the server hears a reason, baton goes on
        logger.exception("sampling for %s failed", server)
        return ErrorData(code=INVALID_REQUEST, message=f"baton could not answer the sampling request: {exc}")
    return CreateMessageResult(role="assistant", content=McpText(type="text", text=reply.text), model=reply.model,
                               stop_reason="endTurn")

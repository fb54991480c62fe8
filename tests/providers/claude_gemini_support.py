"""Helpers for the anthropic-messages and google-generative-ai adapter tests.

* :func:`decode` runs a response body through an adapter's decoder directly (SSE parsed by
  :class:`providers.sse.SseDecoder`), the unit-level path without HTTP;
* :func:`run_stream` runs it end to end through :func:`providers.stream` against a
  :class:`~tests.replay_server.ReplayServer` over a real socket;
* :func:`handoff_transcript` builds a transcript whose assistant turns come from another API
  (foreign thinking and signatures, tool calls and results, images, an errored turn).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.providers.adapter import MessageBuilder, ProviderError, WireAdapter
from baton.providers.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from baton.providers.messages import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from baton.providers.models import Model, ModelCost
from baton.providers.sse import SseDecoder
from tests.replay_server import ReplayServer, Reply, chunks_txt_to_sse

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
PRICES = ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


def model(api: str, model_id: str, *, base_url: str = "", reasoning: bool = True, **extra: Any) -> Model:
    """A test model with prices (so cost is checked too) and image input."""
    return Model(
        id=model_id, api=api, provider=extra.pop("provider", "test"), base_url=base_url,
        reasoning=reasoning, input=["text", "image"], cost=PRICES, **extra,
    )


def fixture_body(path: Path) -> bytes:
    """A recorded stream's response bytes (``.chunks.txt`` framed as SSE first)."""
    if path.name.endswith(".chunks.txt"):
        return chunks_txt_to_sse(path.read_text())
    return path.read_bytes()


@dataclass
class Decoded:
    """What a decoder made of a body: the message, the events and the error raised, if any."""

    message: AssistantMessage
    events: list[AssistantMessageEvent] = field(default_factory=list)
    error: ProviderError | None = None


def decode(adapter: WireAdapter, target: Model, body: bytes, chunk_size: int | None = None) -> Decoded:
    """Feed ``body`` (split every ``chunk_size`` bytes) through a fresh decoder of ``adapter``."""
    message = AssistantMessage(api=target.api, provider=target.provider, model=target.id)
    out = Decoded(message)
    builder = MessageBuilder(message, out.events.append)
    decoder = adapter.create_decoder(target, builder)
    sse = SseDecoder()
    step = chunk_size or len(body) or 1
    try:
        for start in range(0, len(body), step):
            for event, data in sse.feed(body[start : start + step]):
                decoder.feed(event, data)
        for event, data in sse.close():
            decoder.feed(event, data)
        decoder.finish()
    except ProviderError as exc:
        out.error = exc
    return out


@dataclass
class Streamed:
    """An end-to-end run: the final message, every event, and the requests the server saw."""

    message: AssistantMessage
    events: list[AssistantMessageEvent]
    requests: list[Any]


async def run_stream(
    target: Model, context: Context, replies: list[Reply], **options: Any
) -> Streamed:
    """Stream through :func:`providers.stream` against a replay server playing ``replies``."""
    from baton.providers.dispatch import stream

    with ReplayServer(list(replies)) as server:
        live = target.model_copy(update={"base_url": server.url + _base_path(target)})
        options.setdefault("api_key", "test-key")
        options.setdefault("retry_base_delay", 0.01)
        events: list[AssistantMessageEvent] = []
        async with asyncio.timeout(20):
            async for event in stream(live, context, **options):
                events.append(event)
        final = events[-1]
        assert isinstance(final, DoneEvent | ErrorEvent)
        message = final.message if isinstance(final, DoneEvent) else final.error
        return Streamed(message, events, list(server.requests))


def _base_path(target: Model) -> str:
    return "/v1beta" if target.api == "google-generative-ai" else ""


def assert_well_formed(events: list[AssistantMessageEvent]) -> None:
    """One start, matched block start/end pairs, exactly one terminal event, last."""
    assert events[0].type == "start"
    terminal = [e for e in events if isinstance(e, DoneEvent | ErrorEvent)]
    assert len(terminal) == 1 and events[-1] is terminal[0]
    open_blocks: set[int] = set()
    for event in events[1:-1]:
        kind = event.type
        index = getattr(event, "content_index", None)
        if kind.endswith("_start"):
            assert index not in open_blocks
            open_blocks.add(index)  # type: ignore[arg-type]
        elif kind.endswith("_end"):
            assert index in open_blocks, f"{kind} for a block that is not open"
            open_blocks.discard(index)
        elif kind.endswith("_delta"):
            assert index in open_blocks, f"{kind} for a block that is not open"
    assert not open_blocks, f"blocks never ended: {open_blocks}"


def usage_tuple(usage: Usage) -> tuple[int, int, int, int, int | None]:
    """``(input, output, cacheRead, cacheWrite, totalTokens)``."""
    return (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens)


def expected_cost(usage: Usage) -> float:
    """The cost of ``usage`` at :data:`PRICES`."""
    return (
        usage.input * PRICES.input + usage.output * PRICES.output
        + usage.cache_read * PRICES.cache_read + usage.cache_write * PRICES.cache_write
    ) / 1_000_000


# ---------------------------------------------------------------------------------------------
# Handoff transcripts

SOURCE_APIS: dict[str, tuple[str, str]] = {
    "openai-completions": ("openai", "gpt-4o"),
    "openai-responses": ("openai", "gpt-5"),
    "anthropic-messages": ("anthropic", "claude-sonnet-4-5"),
    "google-generative-ai": ("google", "gemini-2.5-pro"),
}
"""Each API's (provider, model id) for the foreign turns of a handoff transcript."""

_SIGNATURES: dict[str, dict[str, Any]] = {
    "openai-completions": {"thinking": "reasoning_content", "call_id": "call_Zx81abc"},
    "openai-responses": {
        "thinking": json.dumps({"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB=="}),
        "text": "msg_68a1",
        "call_id": "call_Q1w2e3|fc_0123456789abcdef0123456789abcdef0123456789",
    },
    "anthropic-messages": {"thinking": "EqkECkYIBxgCKkA8AZ4n+/==", "call_id": "toolu_01LtHJmixrs9NcWQkK8hu8hj"},
    "google-generative-ai": {
        "thinking": "CiIB0e2Kb6Syj1a961Ef",
        "text": "EoECCv4BAQw51segR8LG",
        "call_id": "read_7_ab12cd34",
        "thought": "EpwICpkIAXLI2nxlU6gs",
    },
}

TOOLS = [
    Tool(
        name="read",
        description="Read a file",
        parameters={
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    Tool(name="ls", description="List a directory", parameters={"type": "object", "properties": {}}),
]


def handoff_transcript(source_api: str, target: Model | None = None) -> Context:
    """A transcript whose assistant turns came from ``source_api`` (``target`` itself when it is
    given and speaks that API): thinking with signatures, a redacted block, signed text, two tool
    calls with an image result and an error result, an errored turn, then a new user prompt."""
    if target is not None and target.api == source_api:
        provider, model_id = target.provider, target.id
    else:
        provider, model_id = SOURCE_APIS[source_api]
    sig = _SIGNATURES[source_api]
    content: list[Any] = [
        ThinkingContent(thinking="Let me look at the files.", thinking_signature=sig["thinking"]),
        TextContent(text="I'll read it.", text_signature=sig.get("text")),
        ToolCall(id=sig["call_id"], name="read", arguments={"path": "a.png"}, thought_signature=sig.get("thought")),
        ToolCall(id=sig["call_id"] + "2", name="ls", arguments={}),
    ]
    if source_api == "anthropic-messages":
        redacted = ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="EtgBCkYIBxgC", redacted=True)
        content.insert(1, redacted)
    first = AssistantMessage(
        content=content, api=source_api, provider=provider, model=model_id, stop_reason="toolUse"
    )
    image = ImageContent(data=PNG_1PX, mime_type="image/png")
    messages: list[Message] = [
        UserMessage(content=[TextContent(text="What is in this picture?"), image]),
        first,
        ToolResultMessage(
            tool_call_id=sig["call_id"], tool_name="read",
            content=[TextContent(text="Read image file [image/png]"), image],
        ),
        ToolResultMessage(
            tool_call_id=sig["call_id"] + "2", tool_name="ls",
            content=[TextContent(text="ENOENT: no such directory")], is_error=True,
        ),
        AssistantMessage(
            content=[TextContent(text="It is a single pixel.")], api=source_api, provider=provider,
            model=model_id, stop_reason="stop",
        ),
        AssistantMessage(
            content=[TextContent(text="partial")], api=source_api, provider=provider, model=model_id,
            stop_reason="error", error_message="overloaded",
        ),
        UserMessage(content="Thanks! Now list the directory."),
    ]
    return Context(system_prompt="You are a coding agent.", messages=messages, tools=TOOLS)


def prepared(target: Model, context: Context, **options: Any) -> Context:
    """``context`` as the target receives it: :func:`providers.dispatch.prepare_context`."""
    from baton.providers.dispatch import prepare_context
    from baton.providers.options import StreamOptions

    return prepare_context(target, context, StreamOptions(**options))

"""Oversized tool calls and results, cut for each request so that a session can always go on.

A model (or a server) that once produced 10 MB of tool arguments made its session impossible to
continue: every later request carried them again, so every ``--continue`` was refused before it
was sent ("Not sent: ~2.6M tokens"), and compaction could not help, since the culprit was the
most recent turn it keeps. :func:`project_message` gives each request a bounded copy instead:

* a tool call whose arguments hold more than :data:`MAX_TOOL_CALL_CHARS` characters keeps its
  short values; its longest strings are cut to a common length, each with a note saying how
  much was cut (arguments that are large for another reason become one cut JSON string);
* a tool result whose text holds more than :data:`MAX_TOOL_RESULT_CHARS` characters keeps the
  head and the tail of its longest text blocks, with the same note.

The stored transcript never changes (a message that fits is returned as is; a cut one is a new
object). Both limits sit well above what baton's own tools return (at most 50 kB of output), so
only a runaway call or a huge MCP result is ever cut. The token estimates (the footer, the
overflow check, compaction) count what is sent, so they apply the same projection.
"""

from __future__ import annotations

import json
from typing import TypeVar

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.messages import (
    AssistantContentBlock,
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
)

MAX_TOOL_CALL_CHARS = 100_000
"""The most characters of one tool call's arguments sent again with later requests."""
MAX_TOOL_RESULT_CHARS = 100_000
"""The most characters of one tool result's text sent with a request."""

_MIN_KEEP = 1_000
"""No string is cut shorter than this: at most a hundred notes fit in a cut call."""

M = TypeVar("M")
_SCALARS = (int, bool, float)


def cut_note(cut: int) -> str:
    """The note left where ``cut`` characters were taken out."""
    return f"\n[... {cut:,} characters cut here: too large to send with every request ...]\n"


def project_message(message: M) -> M:
    """``message`` as requests carry it: itself when it fits, else a copy with its oversized
    tool-call arguments or tool-result text cut (see the module docstring)."""
    if isinstance(message, AssistantMessage):
        return _project_assistant(message)  # type: ignore[return-value]
    if isinstance(message, ToolResultMessage):
        return project_result(message)  # type: ignore[return-value]
    return message


def project_arguments(arguments: JsonObject) -> JsonObject:
    """Tool-call arguments cut to about :data:`MAX_TOOL_CALL_CHARS` characters (the same dict
    when they fit)."""
    budget = MAX_TOOL_CALL_CHARS  # every request passes here for every call: flat ones first, fast
    for key, value in arguments.items():
        if type(value) is str:
            budget -= len(value) + len(key) + 8
        elif value is None or type(value) in _SCALARS:
            budget -= len(key) + 32
        else:
            break
    else:
        if budget >= 0:
            return arguments
    size, strings = _measure(arguments)
    if size <= MAX_TOOL_CALL_CHARS:
        return arguments
    other = size - sum(strings)
    keep = _common_length(strings, MAX_TOOL_CALL_CHARS - other) if other < MAX_TOOL_CALL_CHARS else None
    if keep is None:  # the bulk is structure, not text: send it as one cut string
        text = json.dumps(arguments, ensure_ascii=False)
        return {"arguments": text[:MAX_TOOL_CALL_CHARS] + cut_note(len(text) - MAX_TOOL_CALL_CHARS)}
    return {key: _cut_strings(value, keep) for key, value in arguments.items()}


def _project_assistant(message: AssistantMessage) -> AssistantMessage:
    content = message.content
    out: list[AssistantContentBlock] | None = None
    for index, block in enumerate(content or ()):
        if type(block) is ToolCall:
            arguments = project_arguments(block.arguments)
            if arguments is not block.arguments:
                if out is None:
                    out = list(content)
                out[index] = block.model_copy(update={"arguments": arguments})
    return message if out is None else message.model_copy(update={"content": out})


def project_result(message: ToolResultMessage) -> ToolResultMessage:
    """A tool result with its text cut to about :data:`MAX_TOOL_RESULT_CHARS` characters (the
    same message when it fits)."""
    content = message.content
    if not content:
        return message
    total = 0
    for block in content:
        if type(block) is TextContent:
            total += len(block.text)
    if total <= MAX_TOOL_RESULT_CHARS:
        return message
    lengths = [len(b.text) if type(b) is TextContent else 0 for b in content]
    keep = _common_length(lengths, MAX_TOOL_RESULT_CHARS)
    if keep is None:  # many text blocks: one text, cut, before the other blocks
        joined = "\n".join(b.text for b in content if type(b) is TextContent)
        rest = [b for b in content if type(b) is not TextContent]
        out: list[TextContent | ImageContent] = [TextContent(text=_cut_middle(joined, MAX_TOOL_RESULT_CHARS)), *rest]
    else:
        out = [
            TextContent(text=_cut_middle(block.text, keep))
            if length > keep and isinstance(block, TextContent)
            else block
            for block, length in zip(content, lengths, strict=True)
        ]
    return message.model_copy(update={"content": out})


def _cut_middle(text: str, keep: int) -> str:
    """``text`` cut to its first three quarters of ``keep`` and its last quarter, with a note."""
    if len(text) <= keep:
        return text
    head = keep * 3 // 4
    tail = keep - head
    return text[:head] + cut_note(len(text) - keep) + (text[-tail:] if tail else "")


def _common_length(lengths: list[int], budget: int) -> int | None:
    """The largest ``keep`` such that ``sum(min(n, keep) for n in lengths) <= budget``: the
    strings longer than it are the ones cut. ``None`` when ``keep`` would fall below
    :data:`_MIN_KEEP` (the bulk is many small pieces, whose notes alone would not fit)."""
    remaining = budget
    count = len(lengths)
    for index, length in enumerate(sorted(lengths)):
        share = remaining // (count - index)
        if length > share:
            return share if share >= _MIN_KEEP else None
        remaining -= length
    return max(lengths, default=0)


def _measure(value: JsonMapping) -> tuple[int, list[int]]:
    """About the JSON length of ``value``, and the lengths of its string values (iterative)."""
    size = 0
    strings: list[int] = []
    stack: list[JsonValue | JsonMapping] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(len(item))
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2
            for key, child in item.items():
                size += len(str(key)) + 4
                stack.append(child)
        elif isinstance(item, list):
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += 6
    return size, strings


def _cut_strings(value: JsonValue, keep: int) -> JsonValue:
    """A copy of ``value`` whose strings longer than ``keep`` are cut to ``keep`` with a note."""
    if isinstance(value, str):
        if len(value) <= keep:
            return value
        return value[:keep] + cut_note(len(value) - keep)
    if isinstance(value, dict):
        return {key: _cut_strings(child, keep) for key, child in value.items()}
    if isinstance(value, list):
        return [_cut_strings(child, keep) for child in value]
    return value

"""The handoff: project a stored transcript into what one target model accepts.

:func:`transform_messages` applies these rules in order (docs/architecture.md, "The handoff transform"):

1. ``content=None`` becomes ``[]``; images become a placeholder text when the target has no
   image input (consecutive images collapse into one placeholder).
2. Assistant blocks: thinking is replayed only to the model that wrote it (other models get it
   as plain text, or nothing with ``thinking_handoff="drop"``; redacted thinking is dropped; empty
   thinking without a signature is dropped); text from another model loses its signature;
   tool calls from another model lose ``thoughtSignature`` and get ids the target accepts, and
   every later tool result follows the new id.
3. Assistant turns that ended in ``error`` or ``aborted`` are dropped (with any results to their
   calls).
4. Before the next user or assistant message, and at the end of the transcript (as pi-ai does),
   every tool call still without a result gets a synthetic ``No result provided`` error result,
   stamped with its turn's timestamp so the output is deterministic.

Tool results that answer no call of the turn before them (their call was dropped in rule 3, or
was already answered) are dropped too: every provider rejects them. Oversized tool-call
arguments and tool results are cut for the request (:mod:`providers.projection`), so no single
runaway call makes every later request too large to send.

The stored transcript is never changed: messages that need no change are returned as the same
objects (complete messages are treated as immutable), changed ones are new objects.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TypeAlias, TypeVar

from pydantic import BaseModel

from baton.providers.messages import (
    AssistantContentBlock,
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from baton.providers.models import Model
from baton.providers.options import ThinkingHandoff
from baton.providers.projection import project_arguments, project_result

AnyMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
_M = TypeVar("_M", bound=BaseModel)

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
"""Replaces a run of images in a user message when the target has no image input (pi's text)."""
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
"""Replaces a run of images in a tool result when the target has no image input (pi's text)."""
NO_RESULT_TEXT = "No result provided"
"""The text of the synthetic error result given to a tool call that never got one."""


@dataclass(slots=True)
class TransformReport:
    """What the target model loses in one :func:`transform_messages` call (counts are added to,
    so pass a fresh report). The sessions layer shows :meth:`summary` before a model switch."""

    thinking_as_text: int = 0
    """Thinking blocks from other models sent as plain text."""
    thinking_dropped: int = 0
    """Non-empty thinking blocks from other models left out (``thinking_handoff="drop"``)."""
    redacted_dropped: int = 0
    """Redacted (encrypted) thinking blocks from other models left out."""
    signatures_dropped: int = 0
    """Thinking, text and thought signatures from other models left out."""
    images_replaced: int = 0
    """Images replaced by a placeholder text (the target has no image input)."""
    tool_ids_rewritten: int = 0
    """Tool calls whose id was changed to fit the target."""
    error_turns_skipped: int = 0
    """Assistant turns that ended in an error, left out."""
    aborted_turns_skipped: int = 0
    """Assistant turns that were aborted, left out."""
    synthetic_results: int = 0
    """``No result provided`` results added for tool calls that never got one."""
    orphan_results_dropped: int = 0
    """Tool results left out because their call was left out (or already answered)."""

    @property
    def is_empty(self) -> bool:
        """True when nothing was lost or added."""
        return not any(getattr(self, f.name) for f in fields(TransformReport))

    def summary(self) -> str:
        """A short human sentence, e.g. ``12 thinking blocks sent as text, 3 signatures dropped,
        1 image replaced``; ``nothing lost`` when empty."""
        parts = [
            _count(self.thinking_as_text, "thinking block", "sent as text"),
            _count(self.thinking_dropped, "thinking block", "dropped"),
            _count(self.redacted_dropped, "redacted thinking block", "dropped"),
            _count(self.signatures_dropped, "signature", "dropped"),
            _count(self.images_replaced, "image", "replaced"),
            _count(self.tool_ids_rewritten, "tool call id", "rewritten"),
            _count(self.error_turns_skipped, "errored turn", "skipped"),
            _count(self.aborted_turns_skipped, "aborted turn", "skipped"),
            _count(self.synthetic_results, "missing tool result", "filled in"),
            _count(self.orphan_results_dropped, "orphaned tool result", "dropped"),
        ]
        text = ", ".join(p for p in parts if p)
        return text or "nothing lost"


def _count(n: int, noun: str, verb: str) -> str:
    if not n:
        return ""
    return f"{n} {noun}{'' if n == 1 else 's'} {verb}"


class _Counts:
    """Mutable counters while transforming (cheaper than touching the dataclass per block)."""

    __slots__ = (
        "aborted",
        "as_text",
        "errored",
        "ids",
        "images",
        "orphans",
        "redacted",
        "signatures",
        "synthetic",
        "thinking_dropped",
    )

    def __init__(self) -> None:
        self.as_text = self.thinking_dropped = self.redacted = self.signatures = 0
        self.images = self.ids = self.errored = self.aborted = self.synthetic = self.orphans = 0

    def add_to(self, report: TransformReport) -> None:
        report.thinking_as_text += self.as_text
        report.thinking_dropped += self.thinking_dropped
        report.redacted_dropped += self.redacted
        report.signatures_dropped += self.signatures
        report.images_replaced += self.images
        report.tool_ids_rewritten += self.ids
        report.error_turns_skipped += self.errored
        report.aborted_turns_skipped += self.aborted
        report.synthetic_results += self.synthetic
        report.orphan_results_dropped += self.orphans


def transform_messages(
    messages: Sequence[AnyMessage],
    model: Model,
    normalize_tool_call_id: Callable[[str], str] | None = None,
    *,
    thinking_handoff: ThinkingHandoff = "text",
    report: TransformReport | None = None,
) -> list[AnyMessage]:
    """The transcript as ``model`` will receive it (docs/architecture.md, "The handoff transform").

    ``normalize_tool_call_id`` maps ids of calls made by other models to ids the target accepts
    (see :func:`providers.dispatch.id_normalizer_for`); ``thinking_handoff`` chooses what
    thinking from other models becomes (``"text"``: plain text, pi's behaviour; ``"drop"``:
    nothing). ``report``, when given, receives counts of what the target loses.

    Pure and deterministic; linear in the transcript; never mutates its input and never raises
    on a valid transcript.
    """
    # Making thousands of objects would set off the cyclic collector several times, each time
    # walking the whole heap (the transcript included); nothing made here can form a cycle.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        counts = _Counts()
        result = _transform(messages, model, normalize_tool_call_id, thinking_handoff == "drop", counts)
    finally:
        if collecting:
            gc.enable()
    if report is not None:
        counts.add_to(report)
    return result


def _transform(
    messages: Sequence[AnyMessage],
    model: Model,
    normalize: Callable[[str], str] | None,
    drop_thinking: bool,
    counts: _Counts,
) -> list[AnyMessage]:
    images_ok = "image" in model.input
    id_map: dict[str, str] = {}
    result: list[AnyMessage] = []
    append = result.append
    # The calls of the last assistant turn still waiting for a result (answered ones are popped).
    pending: dict[str, ToolCall] = {}
    pending_time = 0

    for message in messages:
        if isinstance(message, ToolResultMessage):
            projected = _tool_result(message, id_map, pending, images_ok, counts)
            if projected is not None:
                append(projected)
            continue
        if pending:
            _flush(pending, pending_time, append, counts)
            pending = {}
        if isinstance(message, AssistantMessage):
            reply = _assistant(message, model, normalize, drop_thinking, id_map, pending, counts)
            if reply is not None:
                pending_time = reply.timestamp
                append(reply)
        elif isinstance(message, UserMessage):
            append(_user(message, images_ok, counts))
        else:  # not an LLM message; convert_to_llm should have removed it
            append(message)

    if pending:
        _flush(pending, pending_time, append, counts)
    return result


def _tool_result(
    message: ToolResultMessage, id_map: dict[str, str], pending: dict[str, ToolCall], images_ok: bool, counts: _Counts
) -> ToolResultMessage | None:
    """The result as sent (``None``: left out, it answers no call of the last turn, or one that
    was already answered); its call is no longer pending."""
    new_id = answered_call(message, id_map, pending, counts)
    return None if new_id is None else project_tool_result(message, new_id, images_ok, counts)


def answered_call(
    message: ToolResultMessage, id_map: dict[str, str], pending: dict[str, ToolCall], counts: _Counts
) -> str | None:
    """The id (as sent) of the pending call ``message`` answers, which is no longer pending;
    ``None`` (counted as an orphan) when it answers no call of the last turn, or an answered one."""
    call_id = message.tool_call_id
    new_id = id_map.get(call_id, call_id)
    if pending.pop(new_id, None) is None:
        counts.orphans += 1
        return None
    return new_id


def project_tool_result(
    message: ToolResultMessage, new_id: str, images_ok: bool, counts: _Counts
) -> ToolResultMessage:
    """A result that answers a pending call, as sent: cut, images downgraded when the target has
    no image input, and answering ``new_id`` (its call's id as sent)."""
    call_id = message.tool_call_id
    message = project_result(message)
    content: list[TextContent | ImageContent] | None = message.content
    if content is None:
        content = []
        message = _with(message, "content", content)
    if not images_ok:
        downgraded = _downgrade_images(content, TOOL_IMAGE_PLACEHOLDER, counts)
        if downgraded is not None:
            message = _with(message, "content", downgraded)
    if new_id != call_id:
        message = _with(message, "tool_call_id", new_id)
    return message


def _assistant(
    message: AssistantMessage,
    model: Model,
    normalize: Callable[[str], str] | None,
    drop_thinking: bool,
    id_map: dict[str, str],
    pending: dict[str, ToolCall],
    counts: _Counts,
) -> AssistantMessage | None:
    """The reply as sent (``None``: left out, it ended in an error or was aborted); its tool
    calls are added to ``pending``."""
    stop = message.stop_reason
    if stop == "error" or stop == "aborted":
        if stop == "error":
            counts.errored += 1
        else:
            counts.aborted += 1
        return None
    if message.content is None:
        message = _with(message, "content", [])
    if message.model == model.id and message.provider == model.provider and message.api == model.api:
        return _own_assistant(message, pending)
    return _foreign_assistant(message, normalize, drop_thinking, id_map, pending, counts)


def _user(message: UserMessage, images_ok: bool, counts: _Counts) -> UserMessage:
    content = message.content
    if content is None:
        return _with(message, "content", [])
    if not images_ok and isinstance(content, list):
        downgraded = _downgrade_images(content, USER_IMAGE_PLACEHOLDER, counts)
        if downgraded is not None:
            return _with(message, "content", downgraded)
    return message


def _own_assistant(message: AssistantMessage, calls: dict[str, ToolCall]) -> AssistantMessage:
    """A message from the target model itself: everything is replayed except empty thinking
    without a signature, and oversized tool arguments are cut. Its tool calls are added to
    ``calls``."""
    blank = cut = False
    for block in message.content:
        if type(block) is ToolCall:
            calls[block.id] = block
            if project_arguments(block.arguments) is not block.arguments:
                cut = True
        elif type(block) is ThinkingContent and _is_blank_thinking(block):
            blank = True
    if not blank and not cut:
        return message
    content = [
        _cut_call(b) if type(b) is ToolCall else b
        for b in message.content
        if not (type(b) is ThinkingContent and _is_blank_thinking(b))
    ]
    for block in content:
        if type(block) is ToolCall:
            calls[block.id] = block
    return _replace(message, content=content)


def _cut_call(block: ToolCall) -> ToolCall:
    """``block`` with its arguments cut for the request, when they are oversized."""
    arguments = project_arguments(block.arguments)
    return block if arguments is block.arguments else _with(block, "arguments", arguments)


def _is_blank_thinking(block: ThinkingContent) -> bool:
    return not block.redacted and block.thinking_signature is None and not block.thinking.strip()


def _foreign_assistant(
    message: AssistantMessage,
    normalize: Callable[[str], str] | None,
    drop_thinking: bool,
    id_map: dict[str, str],
    calls: dict[str, ToolCall],
    counts: _Counts,
) -> AssistantMessage:
    """A message from another model: thinking becomes text (or nothing), signatures go, tool
    call ids are normalised (and remembered in ``id_map`` for the results). Its tool calls, as
    sent, are added to ``calls``."""
    out: list[AssistantContentBlock] = []
    changed = False
    block: AssistantContentBlock
    for block in message.content:
        if type(block) is ToolCall:
            cut = _cut_call(block)
            if cut is not block:
                block = cut
                changed = True
            old_id = block.id
            new_id = old_id if normalize is None else normalize(old_id)
            if new_id != old_id:
                counts.ids += 1
                id_map[old_id] = new_id
            if block.thought_signature is not None:
                counts.signatures += 1
                block = _replace(block, id=new_id, thought_signature=None)
                changed = True
            elif new_id != old_id:
                block = _with(block, "id", new_id)
                changed = True
            calls[new_id] = block
        elif type(block) is TextContent:
            if block.text_signature is not None or block.__pydantic_extra__:
                if block.text_signature is not None:
                    counts.signatures += 1
                block = _text(block.text)
                changed = True
        elif type(block) is ThinkingContent:
            changed = True
            if block.redacted:
                counts.redacted += 1
                continue
            if block.thinking_signature is not None:
                counts.signatures += 1
            thinking = block.thinking
            if not thinking or thinking.isspace():
                continue
            if drop_thinking:
                counts.thinking_dropped += 1
                continue
            counts.as_text += 1
            block = _text(thinking)
        out.append(block)
    return _with(message, "content", out) if changed else message


def _downgrade_images(
    content: list[TextContent | ImageContent], placeholder: str, counts: _Counts
) -> list[TextContent | ImageContent] | None:
    """``content`` with each run of images replaced by one placeholder text; ``None`` when it
    holds no image."""
    for block in content:
        if type(block) is ImageContent:
            break
    else:
        return None
    out: list[TextContent | ImageContent] = []
    after_placeholder = False
    for block in content:
        if type(block) is ImageContent:
            counts.images += 1
            if not after_placeholder:
                out.append(TextContent(text=placeholder))
                after_placeholder = True
            continue
        out.append(block)
        after_placeholder = type(block) is TextContent and block.text == placeholder
    return out


def _flush(
    unanswered: dict[str, ToolCall],
    timestamp: int,
    append: Callable[[AnyMessage], None],
    counts: _Counts,
) -> None:
    """Synthetic error results for the calls in ``unanswered``, in call order."""
    for call_id, call in unanswered.items():
        counts.synthetic += 1
        append(
            ToolResultMessage(
                tool_call_id=call_id,
                tool_name=call.name,
                content=[TextContent(text=NO_RESULT_TEXT)],
                is_error=True,
                timestamp=timestamp,
            )
        )


# The setters of BaseModel's four slots, called directly: a quarter cheaper than
# object.__setattr__ (which looks the name up on the class first), and the transform builds
# thousands of objects per call. They also bypass pydantic's validating __setattr__.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_new = object.__new__


def _replace(obj: _M, **changes: object) -> _M:
    """A shallow copy of a message or block with ``changes`` (attribute names) applied.

    Equivalent to ``obj.model_copy(update=changes)`` for declared fields, at a quarter of the cost:
    the transform copies thousands of objects per request. The copy shares pydantic's
    bookkeeping (which fields were set, extra keys) with the original; complete messages are
    immutable, so nothing ever changes either. Values set to ``None`` are absent from pi's JSON
    (dumps use ``exclude_none``).
    """
    new = _new(type(obj))
    state = obj.__dict__.copy()
    state.update(changes)
    _set_dict(new, state)
    _set_extra(new, obj.__pydantic_extra__)
    fields_set = obj.__pydantic_fields_set__
    _set_fields_set(new, fields_set if fields_set.issuperset(changes) else fields_set.union(changes))
    _set_private(new, None)
    return new


def _with(obj: _M, name: str, value: object) -> _M:
    """:func:`_replace` for one field (the common case, without building a kwargs dict)."""
    new = _new(type(obj))
    state = obj.__dict__.copy()
    state[name] = value
    _set_dict(new, state)
    _set_extra(new, obj.__pydantic_extra__)
    fields_set = obj.__pydantic_fields_set__
    _set_fields_set(new, fields_set if name in fields_set else fields_set | {name})
    _set_private(new, None)
    return new


def _text(text: str) -> TextContent:
    """``TextContent(text=text)`` without re-validating a string that came from a validated
    block (the same object pydantic would build, at half the cost)."""
    new = _new(TextContent)
    _set_dict(new, {"type": "text", "text": text, "text_signature": None})
    _set_extra(new, {})
    _set_fields_set(new, {"text"})
    _set_private(new, None)
    return new

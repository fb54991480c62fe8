"""A per-message cache of the handoff transform and of each message's encoded wire form.

Every request re-sends the whole transcript, so without a cache each turn projects
(:func:`providers.transform.transform_messages`), converts and JSON-encodes every earlier message
again: the CPU of a turn grows with the transcript. :func:`transform_cached` gives the same
messages as the transform, but takes each message's projection from the previous request when
the message is unchanged, and hands the adapter a :class:`WireSlot` per message in which it keeps
that message's encoded form (bytes, joined into the body; see
:func:`providers.anthropic_messages.build_request`). A request then converts and encodes only the
messages that are new (plus the few whose form depends on their place: the last user turn's
``cache_control`` and the synthetic results at the end).

What makes a cached form safe to reuse:

* the **target**: a cache per (api, provider, model id, image input, id normaliser, thinking
  handoff); an adapter keys its encoded forms by every option that changes them (e.g. the tool-id
  rules of the endpoint), and a tool result's projection by the id it answers as sent;
* the **message**: an entry holds its message (so its ``id()`` cannot be reused) and a snapshot of
  every field value of the message and its blocks, compared at each request. Messages are
  treated as immutable once complete, but an assignment (``stop_reason``, a block's ``text``), a
  block added, removed or replaced, and an in-place change of a tool call's arguments (compared
  against a deep copy) all make the entry miss instead of serving a stale form;
* **lifetime**: entries not used by the last :data:`KEEP_REQUESTS` requests of their target are
  dropped (a compacted or abandoned history), and at most :data:`MAX_TARGETS` targets are kept.
  The encoded bytes are about the size of the text they encode: no second copy of the history
  in a larger form.

Anything that cannot be encoded piecewise (``NaN`` from an old session, which the whole-body
path turns into ``null``) makes the adapter fall back to the uncached path for that request.
"""

from __future__ import annotations

import copy
import json
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from baton.providers.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from baton.providers.models import Model
from baton.providers.transform import (
    AnyMessage,
    _assistant,
    _Counts,
    _flush,
    _user,
    answered_call,
    project_tool_result,
)

MAX_TARGETS = 4
"""Targets (model + projection options) whose entries are kept: the current model, the one
before a switch, a summariser, an advisor."""
KEEP_REQUESTS = 16
"""An entry unused by this many requests of its target is dropped. Not 1: subagents share a
target with the main agent, each with its own transcript."""
MAX_PREFIXES = 4
"""Transcripts remembered per target for resuming (the main agent's, subagents')."""


class WireSlot:
    """One message of a prepared context: the projected message and its encoded forms, by the
    adapter's encoding key (filled by the adapter on first use)."""

    __slots__ = ("forms", "message")

    def __init__(self, message: AnyMessage) -> None:
        self.message = message
        self.forms: dict[object, Any] = {}


class WireMemo:
    """What an adapter may carry from one request to the next of the same transcript: the
    messages ``[:same]`` of this request are the very objects (projected, with the same slots)
    that ``previous`` was filled for; ``current`` is filled for the next request."""

    __slots__ = ("current", "previous", "same")

    def __init__(self, previous: dict[object, Any] | None, same: int, current: dict[object, Any]) -> None:
        self.previous = previous
        self.same = same
        self.current = current


class _Entry:
    __slots__ = ("calls", "message", "projected", "renames", "slot", "stamp", "used", "variant")

    def __init__(self, message: AnyMessage, stamp: tuple[object, ...], used: int) -> None:
        self.message = message
        self.stamp = stamp
        self.used = used
        self.variant: str | None = None
        """For a tool result: the call id it was projected to answer."""
        self.projected: AnyMessage | None = None
        self.slot: WireSlot | None = None
        self.calls: tuple[tuple[str, ToolCall], ...] = ()
        """For an assistant message: its tool calls as sent, by id."""
        self.renames: tuple[tuple[str, str], ...] = ()
        """For an assistant message: tool-call ids it rewrote (old, new)."""

    def set_projected(self, projected: AnyMessage | None) -> None:
        self.projected = projected
        self.slot = None if projected is None else WireSlot(projected)


class _Target:
    __slots__ = ("entries", "prefixes", "requests")

    def __init__(self) -> None:
        self.entries: dict[int, _Entry] = {}
        self.prefixes: list[_Prefix] = []
        """The latest requests' transcripts (one per agent sharing the target), newest first."""
        self.requests = 0

    def remember(self, prefix: _Prefix) -> None:
        self.prefixes.insert(0, prefix)
        del self.prefixes[MAX_PREFIXES:]

    def prune(self, messages: Sequence[AnyMessage], stale: int) -> None:
        """Drop what no request used since ``stale`` (a compacted or abandoned history)."""
        self.prefixes = [prefix for prefix in self.prefixes if prefix.used > stale]
        keep = set(map(id, messages))
        for prefix in self.prefixes:
            keep.update(map(id, prefix.messages))
        for key in [key for key, entry in self.entries.items() if entry.used <= stale and key not in keep]:
            del self.entries[key]


_targets: OrderedDict[tuple[object, ...], _Target] = OrderedDict()
_lock = threading.Lock()


def clear() -> None:
    """Forget every cached entry (tests; a process that wants its memory back)."""
    with _lock:
        _targets.clear()


def cached_entries() -> int:
    """How many messages have an entry, over every target (tests)."""
    return sum(len(target.entries) for target in _targets.values())


def _target(key: tuple[object, ...]) -> _Target:
    target = _targets.get(key)
    if target is None:
        target = _targets[key] = _Target()
        while len(_targets) > MAX_TARGETS:
            _targets.popitem(last=False)
    else:
        _targets.move_to_end(key)
    return target


_get_dict = operator.attrgetter("__dict__")
_get_extra = operator.attrgetter("__pydantic_extra__")
_get_content = operator.attrgetter("content")


def _stamp(message: AnyMessage) -> tuple[object, ...]:
    """The state of ``message`` and of its blocks (their ``__dict__`` and extra keys), to compare
    with ``==`` against a :func:`_snapshot`: field by field, by identity first, so unchanged
    values cost nothing. Built without a Python loop: this runs for every message."""
    content = message.content
    if type(content) is list:
        return (
            message.__dict__,
            message.__pydantic_extra__,
            list(map(_get_dict, content)),
            list(map(_get_extra, content)),
        )
    return (message.__dict__, message.__pydantic_extra__)


def _snapshot(message: AnyMessage) -> tuple[object, ...]:
    """:func:`_stamp` as copies: shallow ones of each ``__dict__`` (an assignment replaces a
    value), deep ones of what can change in place (a tool call's arguments, extra keys)."""
    state = dict(message.__dict__)
    extra = copy.deepcopy(message.__pydantic_extra__)
    content = message.content
    if type(content) is not list:
        return (state, extra)
    blocks: list[dict[str, object]] = []
    for block in content:
        block_state = dict(block.__dict__)
        if type(block) is ToolCall:
            block_state["arguments"] = copy.deepcopy(block_state["arguments"])
        blocks.append(block_state)
    return (state, extra, blocks, copy.deepcopy(list(map(_get_extra, content))))


def _bulk(messages: list[AnyMessage]) -> tuple[list[object], ...]:
    """The :func:`_stamp` of every message, flattened into four lists and built by C-level
    iteration only (a fraction of the cost of a stamp per message)."""
    contents = [content if type(content) is list else () for content in map(_get_content, messages)]
    blocks = list(chain.from_iterable(contents))
    return (
        list(map(_get_dict, messages)),
        list(map(_get_extra, messages)),
        list(map(_get_dict, blocks)),
        list(map(_get_extra, blocks)),
    )


def _add_stamp(check: tuple[list[object], ...], stamp: tuple[object, ...]) -> None:
    """Append one message's snapshot to a flattened check (the shape :func:`_bulk` builds)."""
    check[0].append(stamp[0])
    check[1].append(stamp[1])
    if len(stamp) == 4:
        check[2].extend(stamp[2])  # type: ignore[arg-type]  # the block tuples of _stamp
        check[3].extend(stamp[3])  # type: ignore[arg-type]  # the block extras of _stamp


class _Prefix:
    """A request's transcript as far as the state before its final flush: the next request that
    starts with the same (unchanged) messages resumes from here instead of walking them again."""

    __slots__ = ("check", "id_map", "memo", "messages", "pending", "pending_time", "result", "slots", "used")

    def __init__(
        self,
        messages: list[AnyMessage],
        check: tuple[list[object], ...],
        result: list[AnyMessage],
        slots: list[WireSlot | None],
        id_map: dict[str, str],
        pending: dict[str, ToolCall],
        pending_time: int,
        used: int,
    ) -> None:
        self.messages = messages
        self.check = check
        """The snapshot of every message, flattened (see :func:`_bulk`)."""
        self.result = result
        self.slots = slots
        self.id_map = id_map
        self.pending = pending
        self.pending_time = pending_time
        self.used = used
        self.memo: dict[object, Any] = {}
        """Filled by the adapter of the request that made this prefix (see :class:`WireMemo`)."""


def _resumable(target: _Target, messages: Sequence[AnyMessage]) -> _Prefix | None:
    """The remembered prefix that ``messages`` start with, every message of it unchanged."""
    for prefix in target.prefixes:
        known = prefix.messages
        if len(known) > len(messages) or messages[0] is not known[0]:
            continue
        if all(map(operator.is_, messages, known)):  # stops at the shorter: the prefix
            if _bulk(known) != prefix.check:
                return None  # something changed in place: every message is checked on its own
            return prefix
    return None


def transform_cached(
    messages: Sequence[AnyMessage],
    model: Model,
    normalize: Callable[[str], str] | None,
    drop_thinking: bool,
) -> tuple[list[AnyMessage], list[WireSlot | None], WireMemo]:
    """:func:`providers.transform.transform_messages` (without a report), reusing the projection
    of every unchanged message since an earlier request to the same target. Returns the messages,
    for each its :class:`WireSlot` (``None`` for a synthetic result, made anew each time), and
    the :class:`WireMemo` linking this request to the one it resumed from.

    A request that starts with the previous one's messages, all unchanged (checked at once, see
    :func:`_bulk`), resumes after them; the others look each message up. Normalisers must be
    pure (the built-in ones are)."""
    with _lock:  # requests are built on event loops, but nothing stops two loops in two threads
        return _transform_cached(messages, model, normalize, drop_thinking)


def _transform_cached(
    messages: Sequence[AnyMessage],
    model: Model,
    normalize: Callable[[str], str] | None,
    drop_thinking: bool,
) -> tuple[list[AnyMessage], list[WireSlot | None], WireMemo]:
    images_ok = "image" in model.input
    target = _target((model.api, model.provider, model.id, images_ok, normalize, drop_thinking))
    target.requests += 1
    request = target.requests
    entries = target.entries
    counts = _Counts()  # the report is not asked for here
    prefix = _resumable(target, messages) if messages and target.prefixes else None
    if prefix is not None:
        start = len(prefix.messages)
        result = prefix.result.copy()
        slots = prefix.slots.copy()
        id_map = dict(prefix.id_map)
        pending = dict(prefix.pending)
        pending_time = prefix.pending_time
        check = tuple(part.copy() for part in prefix.check)
        target.prefixes.remove(prefix)
    else:
        start = 0
        result, slots, id_map, pending, pending_time = [], [], {}, {}, 0
        check = ([], [], [], [])
    resumable = True

    for message in messages[start:]:
        if not isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
            result.append(message)  # not an LLM message; convert_to_llm should have removed it
            slots.append(None)
            resumable = False
            continue
        entry = entries.get(id(message))
        if entry is not None and (entry.message is not message or entry.stamp != _stamp(message)):
            entry = None
        if entry is None:
            entry = entries[id(message)] = _Entry(message, _snapshot(message), request)
            fresh = True
        else:
            entry.used = request
            fresh = False
        _add_stamp(check, entry.stamp)
        if isinstance(message, ToolResultMessage):
            new_id = answered_call(message, id_map, pending, counts)
            if new_id is None:
                continue  # answers no call of the last turn (or an answered one): left out
            if fresh or entry.variant != new_id:
                entry.variant = new_id
                entry.set_projected(project_tool_result(message, new_id, images_ok, counts))
            result.append(entry.projected)  # type: ignore[arg-type]  # set just above or before
            slots.append(entry.slot)
            continue
        if pending:
            _flush_into(result, slots, pending, pending_time, counts)
            pending = {}
        if isinstance(message, AssistantMessage):
            if fresh:
                calls: dict[str, ToolCall] = {}
                renames: dict[str, str] = {}
                entry.set_projected(_assistant(message, model, normalize, drop_thinking, renames, calls, counts))
                entry.calls = tuple(calls.items())
                entry.renames = tuple(renames.items())
            if entry.renames:
                id_map.update(entry.renames)
            reply = entry.projected
            if reply is not None:
                pending = dict(entry.calls)
                pending_time = reply.timestamp
                result.append(reply)
                slots.append(entry.slot)
        else:
            if fresh:
                entry.set_projected(_user(message, images_ok, counts))
            result.append(entry.projected)  # type: ignore[arg-type]  # a user message is always kept
            slots.append(entry.slot)
    memo = WireMemo(None, 0, {}) if prefix is None else WireMemo(prefix.memo, len(prefix.result), {})
    if resumable and messages:
        record = _Prefix(list(messages), check, result.copy(), slots.copy(), id_map, pending, pending_time, request)
        memo.current = record.memo
        target.remember(record)
    if pending:
        _flush_into(result, slots, pending, pending_time, counts)
    if request % 4 == 0:
        target.prune(messages, request - KEEP_REQUESTS)
    return result, slots, memo


def _flush_into(
    result: list[AnyMessage], slots: list[WireSlot | None], pending: dict[str, ToolCall], when: int, counts: _Counts
) -> None:
    """The synthetic results of the calls still pending (made anew each time: no slot)."""
    before = len(result)
    _flush(pending, when, result.append, counts)
    slots.extend([None] * (len(result) - before))


# ---------------------------------------------------------------------------------------------
# Encoding

_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def encode(value: object) -> bytes:
    """``value`` as the request body encodes it (compact, UTF-8, lone surrogates replaced);
    raises ``ValueError`` for ``NaN`` and the infinities (the caller falls back)."""
    return _encode_json(value).encode("utf-8", "replace")


def encode_body(body: dict[str, Any], raw: dict[str, bytes]) -> bytes | None:
    """The JSON body with the values of ``raw``'s keys given already encoded: byte for byte what
    encoding the whole body would give. ``None`` when a value cannot be encoded piecewise."""
    parts: list[bytes] = []
    try:
        for key, value in body.items():
            text = raw.get(key)
            parts.append(encode(key) + b":" + (text if text is not None else encode(value)))
    except ValueError:
        return None
    return b"{" + b",".join(parts) + b"}"

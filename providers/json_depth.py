"""JSON nested absurdly deep: refused with a message where it enters, never a RecursionError later.

``json.loads`` raises :class:`RecursionError` (not ``ValueError``) on a document nested some
thousand levels deep, and a shallower one that parses still breaks what comes after it: pydantic
refuses to serialise more than 254 levels ("Maximum serialization depth exceeded"), so one tool
call nested 300 deep once stopped the session file and JSON mode's output. Every place where JSON
from outside enters baton therefore parses it with :func:`loads_bounded` (or checks a value that
arrived already parsed with :func:`depth_exceeds`) and refuses anything deeper than its limit
with :class:`JsonTooDeepError`, a ``ValueError`` like any other invalid JSON:

* :data:`MAX_DEPTH` (64): configuration files, which are never nested more than a few levels;
* :data:`MAX_VALUE_DEPTH` (100): a value that becomes part of a message (tool-call arguments,
  tool details, hook output);
* :data:`MAX_LINE_DEPTH` (200): a line that wraps such a value (an RPC or ACP message, a session
  file line). Both stay well below pydantic's limit, with room for the few levels a message and
  an event add around a value.

:func:`clamp_depth` is the last resort of writers: a copy of a value with whatever lies deeper
than a limit replaced by a short marker (and ``NaN`` by ``null``), so that what cannot be refused
any more can still be written; :func:`clamp_object` does the same to the free-form values inside
a message, entry or event.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

MAX_DEPTH = 64
"""Configuration files (settings.json, models.json)."""
MAX_VALUE_DEPTH = 100
"""A value inside a message: tool-call arguments, tool-result details, hook output."""
MAX_LINE_DEPTH = 200
"""One line of a protocol or a session file (a message wrapped in a few more levels)."""
TOO_DEEP_MARKER = "[nested too deeply]"
"""What :func:`clamp_depth` leaves where it cut a value."""

# Outside a string, a JSON document's structure is its brackets; strings are skipped whole. An
# unterminated string runs to the end (its closing quote is optional), so no start position is
# ever scanned twice: linear on any input.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


class JsonTooDeepError(ValueError):
    """A JSON document or value is nested deeper than the limit where it entered."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested more than {limit} levels deep")
        self.limit = limit


def load_config_json(text: str) -> Any:
    """``json.loads(text)``, raising ``ValueError`` for invalid JSON and for nesting deeper than
    :data:`MAX_DEPTH` levels."""
    return loads_bounded(text, MAX_DEPTH, allow_nan=True)


def loads_bounded(text: str | bytes, limit: int = MAX_LINE_DEPTH, *, allow_nan: bool = False) -> Any:
    """``json.loads(text)`` for JSON from outside: ``ValueError`` for invalid JSON (invalid UTF-8
    included), :class:`JsonTooDeepError` for nesting deeper than ``limit``, and, unless
    ``allow_nan``, for ``NaN``/``Infinity`` (not JSON, and no provider accepts them back)."""
    brackets = text.count("[") + text.count("{") if isinstance(text, str) else text.count(b"[") + text.count(b"{")
    if brackets > limit:  # rare: only then decode (bytes) and scan past strings
        if not isinstance(text, str):
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        if text_depth_exceeds(text, limit):
            raise JsonTooDeepError(limit)
    try:
        if allow_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:  # pragma: no cover - the bracket count catches it first
        raise JsonTooDeepError(limit) from None


def text_depth_exceeds(text: str, limit: int) -> bool:
    """True when the JSON text nests ``[``/``{`` deeper than ``limit`` outside strings.

    Linear and without recursion; text with no more than ``limit`` brackets in all (nearly
    every document) is answered by two counts at C speed."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > limit:
                return True
        elif token == "]" or token == "}":
            depth -= 1
    return False


def depth_exceeds(value: object, limit: int) -> bool:
    """True when a parsed JSON value (dicts and lists) nests deeper than ``limit``; ``{}`` and
    ``[]`` are one level. Iterative, and stops at the first branch that is too deep."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list | tuple))
    return False


def clamp_depth(value: Any, limit: int = MAX_VALUE_DEPTH) -> Any:
    """A JSON-safe copy of ``value``: containers deeper than ``limit`` become
    :data:`TOO_DEEP_MARKER`, keys become strings, and anything JSON cannot hold its ``str``.
    Iterative, so any depth is safe."""
    root: list[Any] = [None]
    stack: list[tuple[Any, int, Any, Any]] = [(value, 1, root, 0)]
    while stack:
        item, depth, parent, slot = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > limit:
                parent[slot] = TOO_DEEP_MARKER
                continue
            if isinstance(item, dict):
                copy: Any = {}
                for key, child in item.items():
                    name = key if isinstance(key, str) else str(key)
                    copy[name] = None
                    stack.append((child, depth + 1, copy, name))
            else:
                copy = [None] * len(item)
                stack.extend((child, depth + 1, copy, i) for i, child in enumerate(item))
            parent[slot] = copy
        elif item is None or isinstance(item, str | bool | int):
            parent[slot] = item
        elif isinstance(item, float):
            parent[slot] = item if item == item and item not in (float("inf"), float("-inf")) else None
        else:
            parent[slot] = str(item)
    return root[0]


def clamp_object(obj: Any, limit: int = MAX_VALUE_DEPTH) -> Any:
    """A copy of a pydantic model or dataclass (a message, a session entry, an event) whose
    free-form values (tool arguments, details, extra keys) went through :func:`clamp_depth`;
    models and dataclasses inside are copied the same way, plain values are clamped."""
    if _is_model(obj):
        update = {name: clamp_object(getattr(obj, name), limit) for name in type(obj).model_fields}
        copy = obj.model_copy(update=update)
        extra = copy.__pydantic_extra__
        if extra:
            copy.__pydantic_extra__ = {key: clamp_depth(value, limit) for key, value in extra.items()}
        return copy
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: clamp_object(getattr(obj, f.name), limit) for f in dataclasses.fields(obj) if f.init}
        try:
            return dataclasses.replace(obj, **changes)
        except (TypeError, ValueError):
            return obj
    if isinstance(obj, list | tuple) and any(_is_structured(item) for item in obj):
        return [clamp_object(item, limit) for item in obj]
    return clamp_depth(obj, limit)


def _is_model(obj: object) -> bool:
    """A pydantic model (pydantic is imported only where models exist: not before the first frame)."""
    if "pydantic" not in sys.modules:
        return False
    from pydantic import BaseModel

    return isinstance(obj, BaseModel)


def _is_structured(obj: object) -> bool:
    return _is_model(obj) or (dataclasses.is_dataclass(obj) and not isinstance(obj, type))


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")

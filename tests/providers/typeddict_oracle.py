"""A strict structural check of JSON-like data against a TypedDict request type (test oracle).

The Anthropic SDK types its request bodies as ``TypedDict`` trees. pydantic could validate them,
but it validates ``Iterable[...]`` fields lazily (items are only checked when iterated) and lets
unknown keys through unless every nested TypedDict is configured; so this walks the type hints
itself: every dict must match one of the TypedDicts the position allows, with no unknown keys,
all required keys present and every value checked recursively.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, NotRequired, Required

from typing_extensions import ReadOnly, is_typeddict

_WRAPPERS = {Required, NotRequired, ReadOnly, typing.Required, typing.NotRequired}


class Mismatch(Exception):
    """``data`` does not fit the type; ``path`` says where."""


def check(data: Any, tp: Any, path: str = "$") -> None:
    """Raise :class:`Mismatch` unless ``data`` fits ``tp`` exactly (no unknown keys)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any or tp is object:
        return
    if origin in _WRAPPERS or origin is typing.Annotated:
        check(data, args[0], path)
        return
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in args:
            try:
                check(data, option, path)
                return
            except Mismatch as exc:
                errors.append(exc)
        deepest = max(errors, key=lambda e: len(str(e).split(":", 1)[0]))
        raise Mismatch(f"{deepest}") from None
    if origin is typing.Literal:
        if data not in args or type(data) is not type(next(a for a in args if a == data)):
            raise Mismatch(f"{path}: {data!r} is not one of {args}")
        return
    if tp is type(None):
        if data is not None:
            raise Mismatch(f"{path}: expected null, got {data!r}")
        return
    if is_typeddict(tp):
        _check_typeddict(data, tp, path)
        return
    if origin in (dict, collections.abc.Mapping) or tp in (dict, typing.Dict):  # noqa: UP006
        if not isinstance(data, dict):
            raise Mismatch(f"{path}: expected an object, got {type(data).__name__}")
        if args:
            for key, value in data.items():
                check(key, args[0], f"{path}.{key}")
                check(value, args[1], f"{path}.{key}")
        return
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) or _is_sequence_not_str(tp):
        if not isinstance(data, list):
            raise Mismatch(f"{path}: expected an array, got {type(data).__name__}")
        item = args[0] if args else Any
        for i, value in enumerate(data):
            check(value, item, f"{path}[{i}]")
        return
    if tp is str:
        if not isinstance(data, str):
            raise Mismatch(f"{path}: expected a string, got {data!r}")
        return
    if tp is bool:
        if not isinstance(data, bool):
            raise Mismatch(f"{path}: expected a boolean, got {data!r}")
        return
    if tp is int:
        if not isinstance(data, int) or isinstance(data, bool):
            raise Mismatch(f"{path}: expected an integer, got {data!r}")
        return
    if tp is float:
        if not isinstance(data, int | float) or isinstance(data, bool):
            raise Mismatch(f"{path}: expected a number, got {data!r}")
        return
    raise Mismatch(f"{path}: the oracle cannot check type {tp!r}")


def _is_sequence_not_str(tp: Any) -> bool:
    origin = typing.get_origin(tp) or tp
    return getattr(origin, "__name__", "") == "SequenceNotStr"


def _check_typeddict(data: Any, tp: Any, path: str) -> None:
    if not isinstance(data, dict):
        raise Mismatch(f"{path}: expected an object ({tp.__name__}), got {type(data).__name__}")
    hints = typing.get_type_hints(tp, include_extras=True)
    unknown = set(data) - set(hints)
    if unknown:
        raise Mismatch(f"{path}: unknown keys {sorted(unknown)} for {tp.__name__}")
    # With postponed annotations ``__required_keys__`` misses ``Required[...]`` markers, so the
    # hints decide: marked Required, or declared required and not marked NotRequired.
    required = {k for k, h in hints.items() if typing.get_origin(h) in (Required, typing.Required)}
    optional = (NotRequired, typing.NotRequired)
    required |= {k for k in tp.__required_keys__ if typing.get_origin(hints[k]) not in optional}
    missing = required - set(data)
    if missing:
        raise Mismatch(f"{path}: missing keys {sorted(missing)} for {tp.__name__}")
    for key, value in data.items():
        check(value, hints[key], f"{path}.{key}")

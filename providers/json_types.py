"""Names for JSON shapes, so a signature says what it takes instead of ``dict[str, Any]``.

``JsonValue`` is any value :func:`json.loads` can return; ``JsonObject`` a JSON object, the shape
of tool arguments, details, session entries, wire payloads and protocol messages. Reading a
``JsonObject`` that came from outside means narrowing each value (``isinstance``) before using
it, which is exactly what untrusted input needs. A function that only reads takes
``JsonMapping`` (covariant: a ``dict[str, str]`` is one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
JsonArray: TypeAlias = "list[JsonValue]"
JsonMapping: TypeAlias = "Mapping[str, JsonValue]"
"""A JSON object only read, never changed."""
JsonSequence: TypeAlias = "Sequence[JsonValue]"
"""A JSON array only read, never changed."""

__all__ = ["JsonArray", "JsonMapping", "JsonObject", "JsonScalar", "JsonSequence", "JsonValue"]

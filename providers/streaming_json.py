"""Streaming JSON (placeholder until the incremental parser lands; replaced by the foundation work)."""

from __future__ import annotations

import json
from typing import Any


def parse_streaming_json(text: str) -> dict[str, Any]:
    """Best-effort parse of a possibly incomplete JSON object; never raises."""
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class StreamingJsonParser:
    """Fed fragment by fragment; returns the best value so far."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def feed(self, fragment: str) -> dict[str, Any]:
        self._parts.append(fragment)
        return parse_streaming_json("".join(self._parts))

    def finish(self) -> dict[str, Any]:
        return parse_streaming_json("".join(self._parts))

"""Config files nested absurdly deep: refused with a message, never a RecursionError.

``json.loads`` raises :class:`RecursionError` (not ``ValueError``) on a document nested some
thousand levels deep, and recursive code walking a slightly shallower one fails the same way.
Configuration is never nested more than a few levels: :func:`load_config_json` refuses anything
deeper than :data:`MAX_DEPTH` with a ``ValueError`` like any other invalid JSON.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


def load_config_json(text: str) -> Any:
    """``json.loads(text)``, raising ``ValueError`` for invalid JSON and for nesting deeper than
    :data:`MAX_DEPTH` levels."""
    if _bracket_depth(text) > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the bracket count catches it first
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep") from None


def _bracket_depth(text: str) -> int:
    """The deepest ``[``/``{`` nesting outside strings (linear; no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest

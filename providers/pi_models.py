"""pi's generated model list (``packages/ai/src/models.generated.ts``) read as data.

The file is a TypeScript object literal (``export const MODELS = {provider: {id: {...} satisfies
Model<...>}}``) written by pi's generator; it is turned into JSON text here (keys quoted, the
``satisfies`` clauses and trailing commas dropped) and parsed, never run.
"""

from __future__ import annotations

import json
import re

from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.models_dev import SourceError

_START = "export const MODELS = "
_SATISFIES = re.compile(r"\s+satisfies\s+Model<[^>]*>")
_BARE_KEY = re.compile(r"(?m)^(\s*)([A-Za-z_$][A-Za-z0-9_$]*):")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def parse(text: str) -> dict[str, JsonObject]:
    """``{provider: {model id: model}}`` from the text of pi's ``models.generated.ts``."""
    start = text.find(_START)
    end = text.rfind("} as const")
    if start < 0 or end < start:
        raise SourceError("not pi's models.generated.ts (no `export const MODELS = {...} as const`)")
    literal = text[start + len(_START): end + 1]
    literal = _SATISFIES.sub("", literal)
    literal = _BARE_KEY.sub(r'\1"\2":', literal)
    literal = _TRAILING_COMMA.sub(r"\1", literal)
    try:
        data: JsonValue = json.loads(literal)
    except json.JSONDecodeError as exc:
        raise SourceError(f"pi's model list: cannot read it as data at line {exc.lineno}: {exc.msg}") from exc
    providers = {name: models for name, models in data.items() if isinstance(models, dict)} if isinstance(
        data, dict) else {}
    if not isinstance(data, dict) or len(providers) != len(data):
        raise SourceError("pi's model list: MODELS must map providers to their models")
    return providers

"""The downloaded catalog overlay: ``$BATON_HOME/catalog-overlay.json``.

``baton --update-models`` stores what it downloaded (already converted to baton's shape) here;
the catalog reads it at the next lookup and puts it between the bundled data and models.json.
The file holds model facts only: a provider's ``api``, ``baseUrl``, headers and key variables
always come from the bundled catalog, so a bad or hostile download can at worst list wrong
prices or limits; it can never send a request (or a key) elsewhere. Every model is validated
again when read (the file is data on disk like any other), and a bad entry is skipped with a
message, never raised.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.paths import baton_home

OVERLAY_FILE = "catalog-overlay.json"
MAX_OVERLAY_BYTES = 8 * 1024 * 1024
"""A larger file is not read (the whole catalog is well under a megabyte)."""

MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
"""What a catalog model id may be: it ends up in URLs, request bodies and on the screen."""
DATE = re.compile(r"\d{4}-\d{2}(-\d{2})?")
COMPAT_KEYS = frozenset({"supportsXhigh", "supportsTemperature", "reasoningEfforts",
                         "requiresReasoningContentOnAssistantMessages", "thinkingFormat",
                         "supportsReasoningEffort", "supportsStore", "supportsDeveloperRole"})
"""The compat flags downloaded catalog data may set (request rules, never where requests go)."""
THINKING_FORMATS = ("openai", "openrouter", "deepseek", "zai", "qwen", "qwen-chat-template")
EFFORT_NAMES = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "default")
"""Reasoning effort values baton understands (models.dev's ``reasoning_options``)."""


_MODEL_KEYS = frozenset({"id", "name", "reasoning", "input", "cost", "contextWindow", "maxTokens", "releaseDate",
                         "knowledge", "compat"})
_COST_KEYS = frozenset({"input", "output", "cacheRead", "cacheWrite"})


def overlay_path() -> Path:
    """``$BATON_HOME/catalog-overlay.json``."""
    return baton_home() / OVERLAY_FILE


def load_overlay(path: Path, providers: set[str]) -> tuple[dict[str, list[JsonObject]], list[str]]:
    """The overlay's valid models per provider (only ``providers``, the built-in ones) and one
    message per problem. A missing file is no problem."""
    try:
        if path.stat().st_size > MAX_OVERLAY_BYTES:
            return {}, [f"{path}: larger than {MAX_OVERLAY_BYTES // (1024 * 1024)} MB; not read"]
        document: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: cannot read: {exc}"]
    except (ValueError, RecursionError) as exc:
        return {}, [f"{path}: not valid JSON ({exc}); run baton --update-models again"]
    entries = document.get("providers") if isinstance(document, dict) else None
    if not isinstance(entries, dict):
        return {}, [f"{path}: no \"providers\" object; run baton --update-models again"]
    out: dict[str, list[JsonObject]] = {}
    errors: list[str] = []
    for name, entry in entries.items():
        if name not in providers:
            continue  # a provider this baton does not ship: nothing to say where it lives
        models = entry.get("models") if isinstance(entry, dict) else None
        if not isinstance(models, list):
            errors.append(f"{path}: providers.{name}.models: must be a list")
            continue
        valid: list[JsonObject] = []
        for index, model in enumerate(models):
            problem = model_problem(model)
            if problem:
                errors.append(f"{path}: providers.{name}.models[{index}]: {problem}")
            elif isinstance(model, dict):
                valid.append(model)
        out[name] = valid
    return out, errors


def model_problem(model: JsonValue) -> str | None:
    """What is wrong with an overlay model entry (``None``: nothing). Only model facts may be
    there: an ``api``, ``baseUrl`` or ``headers`` field is refused."""
    if not isinstance(model, dict):
        return "must be an object"
    model_id = model.get("id")
    if not isinstance(model_id, str) or not MODEL_ID.fullmatch(model_id):
        return "id: not a usable model id"
    extra = model.keys() - _MODEL_KEYS
    if extra:
        return f"fields not allowed here: {', '.join(sorted(extra))}"
    return (_facts_problem(model, model_id) or _cost_problem(model.get("cost", {})) or _dates_problem(model)
            or _compat_problem(model.get("compat", {})))


def _facts_problem(model: JsonObject, model_id: str) -> str | None:
    name = model.get("name", model_id)
    if not isinstance(name, str) or not name.isprintable() or len(name) > 80:
        return "name: must be printable text of at most 80 characters"
    if not isinstance(model.get("reasoning", False), bool):
        return "reasoning: must be true or false"
    if model.get("input", ["text"]) not in (["text"], ["text", "image"]):
        return 'input: must be ["text"] or ["text", "image"]'
    for key in ("contextWindow", "maxTokens"):
        value = model.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 100_000_000:
            return f"{key}: must be a positive number of tokens"
    return None


def _dates_problem(model: JsonObject) -> str | None:
    for key in ("releaseDate", "knowledge"):
        date = model.get(key)
        if key in model and not (isinstance(date, str) and DATE.fullmatch(date)):
            return f"{key}: must be a YYYY-MM(-DD) date"
    return None


def _cost_problem(cost: JsonValue) -> str | None:
    if not isinstance(cost, dict) or cost.keys() - _COST_KEYS:
        return "cost: must hold input/output/cacheRead/cacheWrite prices"
    for key, price in cost.items():
        if isinstance(price, bool) or not isinstance(price, int | float) or not 0 <= price <= 100_000:
            return f"cost.{key}: must be a price in dollars per million tokens"
    return None


def _compat_problem(compat: JsonValue) -> str | None:
    if not isinstance(compat, dict):
        return "compat: must be an object"
    extra = set(compat) - COMPAT_KEYS
    if extra:
        return f"compat: flags not allowed here: {', '.join(sorted(extra))}"
    for key, value in compat.items():
        if key == "thinkingFormat":
            ok = value in THINKING_FORMATS
        elif key == "reasoningEfforts":
            ok = isinstance(value, list) and all(v in EFFORT_NAMES for v in value)
        else:
            ok = isinstance(value, bool)
        if not ok:
            return f"compat.{key}: invalid value"
    return None


def write_overlay(path: Path, providers: dict[str, list[JsonObject]], source: str, fetched: str) -> None:
    """Replace the overlay at once (a reader sees the old file or the new one, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "_comment": "Written by baton --update-models; delete it to go back to the built-in catalog.",
        "source": source,
        "fetched": fetched,
        "providers": {name: {"models": models} for name, models in providers.items()},
    }
    fd, temp = tempfile.mkstemp(prefix=".catalog-overlay.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, separators=(",", ":"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise

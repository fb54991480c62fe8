"""Optional session features (permissions, checkpoints, prompt templates, MCP) as the protocol
modes see them: present when the session offers the method, else a clear "not available" error.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any


class FeatureUnavailable(Exception):
    """The session has no such feature in this build."""


def require(session: Any, attr: str, feature: str) -> Any:
    """``session.<attr>``, or :class:`FeatureUnavailable` naming the missing feature."""
    value = getattr(session, attr, None)
    if value is None:
        raise FeatureUnavailable(f"not available: this baton has no {feature} support ({attr})")
    return value


def jsonable(value: Any) -> Any:
    """A JSON-ready form of a feature's result (``to_json``/``to_dict``, pydantic, dataclass, paths)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    for name in ("to_json", "to_dict"):
        convert = getattr(value, name, None)
        if callable(convert):
            return jsonable(convert())
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)


def prompt_commands(session: Any) -> list[dict[str, Any]]:
    """Prompt templates as pi's ``get_commands`` entries (``[]`` without the feature)."""
    getter = getattr(session, "prompt_commands", None)
    if getter is None:
        return []
    out: list[dict[str, Any]] = []
    for item in getter() or []:
        data = jsonable(item)
        if not isinstance(data, dict) or not data.get("name"):
            continue
        name = str(data["name"]).lstrip("/")
        entry: dict[str, Any] = {"name": name, "source": data.get("source") or (
            "skill" if name.startswith("skill:") else "prompt")}
        for key in ("description", "location", "path"):
            if data.get(key):
                entry[key] = data[key]
        hint = data.get("argumentHint") or data.get("argument_hint")
        if hint:
            entry["argumentHint"] = hint
        if entry["source"] not in ("extension", "prompt", "skill"):
            entry["location"] = entry.get("location", entry["source"])
            entry["source"] = "prompt"
        out.append(entry)
    return out


TRUST_HINT = "trust it in the interactive app, or pass --trust-project"
"""How a mode that cannot ask says the project can be trusted."""


def ignored_project_notice(session: Any, how_to_trust: str = TRUST_HINT) -> dict[str, Any] | None:
    """What of the project is ignored (untrusted settings, hooks, servers; loosenings only the
    user may make) as an ``extension_notice`` event, or ``None`` when nothing is."""
    text = session.extensions.ignored_project_settings(how_to_trust)
    if not text:
        return None
    return {"type": "extension_notice", "source": "trust", "level": "warning", "text": text}

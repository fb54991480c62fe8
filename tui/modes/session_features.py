"""What the protocol modes tell a client about the session beyond its events: the prompt's own
slash commands (templates and skills) and what of the project is ignored until it is trusted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject

if TYPE_CHECKING:
    from baton.sessions import CodingSession


def prompt_commands(session: CodingSession) -> list[JsonObject]:
    """Prompt templates and skills as pi's ``get_commands`` entries (``name``, ``source``:
    ``skill`` or ``prompt``, ``sourceInfo``, ``description`` and ``argumentHint`` when they have
    them). ``sourceInfo`` is pi's: the file, ``source: "auto"`` (discovered, not configured),
    ``scope`` ``project`` or ``user``, ``origin: "top-level"`` and the folder it was found in."""
    out: list[JsonObject] = []
    for command in session.prompt_commands():
        if not command.name:
            continue
        name = command.name.lstrip("/")
        entry: JsonObject = {"name": name, "source": "skill" if name.startswith("skill:") else "prompt"}
        if command.description:
            entry["description"] = command.description
        if command.argument_hint:
            entry["argumentHint"] = command.argument_hint
        info: JsonObject = {"path": str(command.path or ""), "source": "auto", "scope": command.scope,
                            "origin": "top-level"}
        if command.base_dir is not None:
            info["baseDir"] = str(command.base_dir)
        entry["sourceInfo"] = info
        out.append(entry)
    return out


TRUST_HINT = "trust it in the interactive app, or pass --trust-project"
"""How a mode that cannot ask says the project can be trusted."""


def ignored_project_notice(session: CodingSession, how_to_trust: str = TRUST_HINT) -> JsonObject | None:
    """What of the project is ignored (untrusted settings, hooks, servers; loosenings only the
    user may make) as an ``extension_notice`` event, or ``None`` when nothing is."""
    text = session.extensions.ignored_project_settings(how_to_trust)
    if not text:
        return None
    return {"type": "extension_notice", "source": "trust", "level": "warning", "text": text}

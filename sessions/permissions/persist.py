"""Saving an "allow always" rule to the project's ``.baton/settings.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from baton.sessions.settings import project_settings_path


class RuleSaveError(OSError):
    """The rule could not be written (the file is unreadable or not a JSON object)."""


def save_allow_rule(project_dir: Path, rule: str) -> Path:
    """Append ``rule`` to ``permissions.allow`` in the project's settings (creating the file);
    the rest of the file is kept as it was. Returns the file's path."""
    path = project_settings_path(project_dir)
    data: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as exc:
            raise RuleSaveError(f"cannot add the rule to {path}: {exc}") from exc
        if not isinstance(loaded, dict):
            raise RuleSaveError(f"cannot add the rule to {path}: it does not hold a JSON object")
        data = loaded
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise RuleSaveError(f"cannot add the rule to {path}: permissions is not an object")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise RuleSaveError(f"cannot add the rule to {path}: permissions.allow is not a list")
    if rule not in allow:
        allow.append(rule)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path

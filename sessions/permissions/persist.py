"""Saving an "allow always" rule to the project's ``.baton/settings.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from baton.providers.bounded_read import MAX_CONFIG_BYTES
from baton.providers.json_depth import load_config_json
from baton.sessions.settings import project_settings_path
from baton.tools.fs_atomic import atomic_write
from baton.tools.project_files import ProjectFiles


class RuleSaveError(OSError):
    """The rule could not be written (the file is unreadable or not a JSON object)."""


def save_allow_rule(project_dir: Path, rule: str) -> Path:
    """Append ``rule`` to ``permissions.allow`` in the project's settings (creating the file);
    the rest of the file is kept as it was. Returns the file's path."""
    path = project_settings_path(project_dir)
    files = ProjectFiles.for_dir(project_dir)
    refused = files.refusal(path)
    if refused is not None:  # e.g. .baton -> ~/.baton: the rule would land in the user's own settings
        raise RuleSaveError(f"cannot add the rule to {path}: {refused}")
    data: dict[str, Any] = {}
    if os.path.lexists(path):
        try:
            loaded = load_config_json(files.read(path, MAX_CONFIG_BYTES).decode("utf-8") or "{}")
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
    # a fresh temporary name made O_EXCL|O_NOFOLLOW: a planted ``settings.json.tmp`` symlink is
    # never written through
    atomic_write(str(path), (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return path

"""Saving an "allow always" rule to the project's personal ``.baton/settings.local.json`` (kept out
of git through ``.git/info/exclude``, so the shared ``.baton/settings.json`` is never rewritten), and
keeping the project's trust with it (the rule is the user's own answer)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from baton.providers.bounded_read import MAX_CONFIG_BYTES
from baton.providers.json_depth import load_config_json
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.sessions.permissions.git_exclude import exclude_from_git
from baton.sessions.settings import Settings, load_settings, project_local_settings_path
from baton.sessions.trust import SETTINGS_PART, remember_parts
from baton.tools.fs_atomic import atomic_write
from baton.tools.project_files import ProjectFiles

LOCAL_RULES_FILE = ".baton/settings.local.json"
"""Where "allow always" rules go, as the user reads it (relative to the project)."""


class RuleSaveError(OSError):
    """The rule could not be written (the file is unreadable or not a JSON object)."""


def save_allow_rule(project_dir: Path, rule: str) -> Path:
    """Append ``rule`` to ``permissions.allow`` in the project's ``.baton/settings.local.json``
    (creating the file, and listing it in the repository's ``.git/info/exclude``); the rest of the
    file is kept as it was. Returns the file's path."""
    path = project_local_settings_path(project_dir)
    files = ProjectFiles.for_dir(project_dir)
    refused = files.refusal(path)
    if refused is not None:  # e.g. .baton -> ~/.baton: the rule would land in the user's own settings
        raise RuleSaveError(f"cannot add the rule to {path}: {refused}")
    data: JsonObject = {}
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
    exclude_from_git(str(path), str(project_dir))
    return path


def keep_trust_with_rule(project_dir: Path, settings: Settings, rule: str) -> bool:
    """After the user saved ``rule`` to the project's settings: a project they trusted (or one
    with nothing to trust) stays trusted with their own rule added, so the next start does not ask
    about it. Only that rule is taken in: when anything else in the settings changed since they
    were loaded, nothing is remembered (the next start asks). Returns whether it was remembered."""
    if settings.pending_trust is not None:
        return False  # an untrusted project: the rule waits with the rest of its settings
    fresh = load_settings(settings.path, project_dir=project_dir, trust_project=False)
    trust = fresh.project_trust
    if trust is None or _canonical(fresh.held) != _canonical(_with_allow(settings.held, rule)):
        return False
    before = settings.project_trust
    parts = {**(before.parts if before is not None else {}), SETTINGS_PART: trust.parts[SETTINGS_PART]}
    remember_parts(project_dir, parts)
    settings._held = fresh.held
    settings._trust = replace(before if before is not None else trust, parts=parts)
    return True


def _with_allow(held: JsonMapping, rule: str) -> JsonObject:
    out: JsonObject = json.loads(json.dumps(held, default=str))
    permissions = out.setdefault("permissions", {})
    if isinstance(permissions, dict):
        allow = permissions.setdefault("allow", [])
        if isinstance(allow, list) and rule not in allow:
            allow.append(rule)
    return out


def _canonical(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)

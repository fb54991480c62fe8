"""Which of a project's settings apply at once, which wait for the user's trust, and which only
the user's own settings may set.

A cloned repository's ``.baton/settings.json`` is data until the user trusts the project: what
it says may only make baton stricter. Every setting is classified once, in :data:`SETTING_RULES`
(by its snake_case path; camelCase in the file is the same key):

- ``applies``: cannot widen what runs, what is read or what is kept (a theme, retry pacing);
  applies at once.
- ``joins``: a list that can only add protection (deny and ask rules); joined with the user's at once.
- ``tightens``: applies at once when the project's value is at least as strict as the user's
  (checkpoints on, fewer processes, a lower limit); otherwise it waits for trust.
- ``trust``: widens something (allow rules, keys passed into commands, hooks, the model your
  prompts go to): waits for trust.
- ``user_only``: applies at once when stricter, and is ignored otherwise even in a trusted
  project: only the user turns the sandbox off, opens the network or picks ``full``.

A key that is not in the table — a setting added later and not classified yet, a typo, another
tool's key — waits for trust.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeGuard

from pydantic.alias_generators import to_snake

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue

Kind = Literal["applies", "joins", "tightens", "trust", "user_only"]
Stricter = Callable[[JsonValue, object], bool]
"""``(project value, the user's value) -> whether the project's is at least as strict``."""
UserValue = Callable[[tuple[str, ...]], object]


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _at_most(project: JsonValue, user: object) -> bool:
    return _number(project) and _number(user) and project <= user


def _lower_limit(project: JsonValue, user: object) -> bool:
    """A spending limit where the user has none, or a lower one."""
    return _number(project) and (user is None or (_number(user) and project <= user))


def _at_least(project: JsonValue, user: object) -> bool:
    return _number(project) and _number(user) and project >= user


def _keeps_longer(project: JsonValue, user: object) -> bool:
    """``checkpoints.keepDays``: 0 keeps everything."""
    if not (_number(project) and _number(user)) or project < 0:
        return False
    return project == 0 or (user != 0 and project >= user)


def _is(expected: object) -> Stricter:
    return lambda project, user: project is expected


_APPROVAL_STRICTNESS = {"plan": -1, "ask": 0, "auto": 1, "full": 2}
"""A project may choose a mode at least as strict as the user's (``plan`` is the strictest)."""


def _stricter_mode(project: JsonValue, user: object) -> bool:
    mine = _APPROVAL_STRICTNESS.get(user, _APPROVAL_STRICTNESS["auto"]) if isinstance(user, str) \
        else _APPROVAL_STRICTNESS["auto"]
    return isinstance(project, str) and project in _APPROVAL_STRICTNESS and _APPROVAL_STRICTNESS[project] <= mine


def _builtin_notify(project: JsonValue) -> bool:
    """``notify`` (a method, or ``{method, afterSeconds}``) that names no command."""
    from baton.sessions.settings import NOTIFY_METHODS

    method = project.get("method", "auto") if isinstance(project, dict) else project
    return isinstance(method, str) and method in NOTIFY_METHODS


@dataclass(frozen=True, slots=True)
class SettingRule:
    """How one project setting is treated (see the module docstring)."""

    kind: Kind
    stricter: Stricter | None = None
    effect: str = ""
    """What the setting would do, for the trust question (``trust`` and ``tightens``)."""


APPLIES = SettingRule("applies")
JOINS = SettingRule("joins")

SETTING_RULES: dict[str, SettingRule] = {
    "$schema": APPLIES,
    "theme": APPLIES,
    "display": APPLIES,
    "thinking_handoff": APPLIES,
    "default_thinking_level": APPLIES,
    "favorite_models": APPLIES,
    "compaction.enabled": APPLIES,
    "compaction.reserve_tokens": APPLIES,
    "compaction.keep_recent_tokens": APPLIES,
    "compaction.model": SettingRule("trust", effect="your conversation is summarised by this model"),
    "retry.enabled": APPLIES,
    "retry.max_retries": APPLIES,
    "retry.base_delay_ms": APPLIES,
    "retry.max_delay_ms": APPLIES,
    "retry.idle_timeout_ms": APPLIES,
    "retry.request_timeout_ms": APPLIES,
    "default_model": SettingRule("trust", effect="your prompts go to this model"),
    "fallback_models": SettingRule("trust", effect="a failing turn and your conversation go on to these models"),
    "fallback.return_after": APPLIES,
    "budget.session_usd": SettingRule("tightens", _lower_limit, "lets the session spend more"),
    "permissions.allow": SettingRule("trust", effect="these calls run without asking"),
    "permissions.deny": JOINS,
    "permissions.ask": JOINS,
    "bash.pass_env": SettingRule("trust", effect="commands get these variables although they look like keys"),
    "hooks": SettingRule("trust", effect="commands run on your machine, outside the sandbox"),
    "checkpoints.enabled": SettingRule("tightens", _is(True), "turns checkpoints (rewind) off"),
    "checkpoints.max_file_bytes": SettingRule("tightens", _at_least, "leaves files over this size out of rewind"),
    "checkpoints.keep_days": SettingRule("tightens", _keeps_longer, "prunes snapshots sooner"),
    "tools.max_processes": SettingRule("tightens", _at_most, "lets more commands run at once"),
    "tools.max_background": SettingRule("tightens", _at_most, "lets more background commands run at once"),
    "mcp.tool_timeout_ms": SettingRule("tightens", _at_most, "lets MCP calls run longer"),
    "mcp.startup_timeout_ms": SettingRule("tightens", _at_most, "makes prompts wait longer for MCP servers"),
    "models.default": SettingRule("trust", effect="subagents and titles go to this model"),
    "models.fast": SettingRule("trust", effect="subagents go to this model"),
    "models.smart": SettingRule("trust", effect="subagents go to this model"),
    "models.advisor": SettingRule("trust", effect="your conversation is sent to this model for advice"),
    "subagents.max_parallel": SettingRule("tightens", _at_most, "lets more subagents run at once"),
    "subagents.max_depth": SettingRule("tightens", _at_most, "lets subagents start subagents"),
    "approval": SettingRule("user_only", _stricter_mode),
    "sandbox.enabled": SettingRule("user_only", _is(True)),
    "sandbox.network": SettingRule("user_only", _is(False)),
    "sandbox.hidden_paths": JOINS,
    "models_update_url": SettingRule("user_only", lambda project, user: False),
    # A notify command runs on the user's machine: a project may pick a built-in way, never a command.
    "notify": SettingRule("user_only", lambda project, user: _builtin_notify(project)),
}
_SECTIONS = frozenset(key.split(".", 1)[0] for key in SETTING_RULES if "." in key)
UNKNOWN = SettingRule("trust", effect="a setting baton does not classify")


@dataclass(slots=True)
class ProjectSplit:
    """A project's settings object cut in three (each part keeps the file's own key spelling)."""

    applied: JsonObject = field(default_factory=dict)
    """Applies at once (merged over the user's settings)."""
    held: JsonObject = field(default_factory=dict)
    """Waits for the user's trust."""
    refused: list[str] = field(default_factory=list)
    """``approval: "full"``-like values ignored whatever the trust (one short text each)."""


def rule_for(path: tuple[str, ...]) -> SettingRule:
    """The rule of a setting path (snake_case parts); unknown paths need trust."""
    return SETTING_RULES.get(".".join(path), UNKNOWN)


def split_project_settings(project: JsonMapping, user_value: UserValue) -> ProjectSplit:
    """Cut ``project`` (a ``.baton/settings.json`` object) by :data:`SETTING_RULES`;
    ``user_value(path)`` gives the user's own value of a setting path (defaults included)."""
    out = ProjectSplit()
    for key, value in project.items():
        name = _snake(key)
        if name in _SECTIONS and isinstance(value, dict) and name not in SETTING_RULES:
            for sub, sub_value in value.items():
                path = (name, _snake(sub))
                _place(out, (key, sub), path, sub_value, rule_for(path), user_value)
        else:
            _place(out, (key,), (name,), value, rule_for((name,)), user_value)
    return out


def _place(out: ProjectSplit, keys: tuple[str, ...], path: tuple[str, ...], value: JsonValue, rule: SettingRule,
           user_value: UserValue) -> None:
    if rule.kind in ("applies", "joins"):
        _put(out.applied, keys, value)
        return
    stricter = rule.stricter is not None and rule.stricter(value, user_value(path))
    if stricter:
        _put(out.applied, keys, value)
    elif rule.kind == "user_only":
        out.refused.append(f"{'.'.join(keys)}: {_short(value)}")
    else:
        _put(out.held, keys, value)


def _put(target: JsonObject, keys: tuple[str, ...], value: JsonValue) -> None:
    for key in keys[:-1]:
        node = target.setdefault(key, {})
        if not isinstance(node, dict):
            node = target[key] = {}
        target = node
    target[keys[-1]] = value


def _snake(key: str) -> str:
    return key if key.startswith("$") else to_snake(key)


def describe_held(held: JsonMapping) -> list[str]:
    """One line per waiting setting, hooks aside (they are listed as the commands they run):
    ``permissions.allow: bash, write(/**) (these calls run without asking)``."""
    lines: list[str] = []
    for key, value in held.items():
        name = _snake(key)
        if key == "hooks" and isinstance(value, dict) and value:
            continue
        if name in _SECTIONS and isinstance(value, dict) and name not in SETTING_RULES:
            for sub, sub_value in value.items():
                lines.append(_line(f"{key}.{sub}", sub_value, rule_for((name, _snake(sub)))))
        else:
            lines.append(_line(key, value, rule_for((name,))))
    return lines


def _line(shown: str, value: JsonValue, rule: SettingRule) -> str:
    effect = f" ({rule.effect})" if rule.effect else ""
    return f"{shown}: {_short(value)}{effect}"


def _short(value: JsonValue, limit: int = 160) -> str:
    """A value as one short line: lists joined with commas, other values as JSON (the file is
    untrusted: no control sequences reach a terminal)."""
    import json

    strings = [v for v in value if isinstance(v, str)] if isinstance(value, list) else None
    if isinstance(value, list) and strings is not None and len(strings) == len(value):
        text = ", ".join(strings) or "[]"
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return one_line(text, limit)


def one_line(text: str, limit: int = 160) -> str:
    """``text`` from a project file as one printable line of at most ``limit`` characters."""
    from baton.tools.sanitize import strip_control_sequences

    text = " ".join(strip_control_sequences(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

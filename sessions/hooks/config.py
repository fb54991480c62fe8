"""The ``hooks`` settings section, Claude Code's shape::

    {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}

``matcher`` is a regular expression over the tool name (empty or ``*``: every tool); baton's tool
names match both as they are (``bash``) and under Claude Code's names (``Bash``, each tool's
``claude_code_name``), so existing hooks work unchanged. ``Notification`` hooks match the
notification's type (``permission_prompt``), other events ignore the matcher. Bad entries are reported (one line each)
and skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from baton.providers.json_types import JsonValue
from baton.tools.file_pins import FilePin

HookEvent = Literal["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "PreCompact",
                    "Notification", "SessionEnd", "SubagentStop"]
EVENTS: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "PreCompact",
                                 "Notification", "SessionEnd", "SubagentStop")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class CommandHook:
    """One command to run for an event."""

    event: HookEvent
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT_S
    source: str = "global"
    """``global`` or ``project`` (project hooks need the user's trust)."""
    pins: tuple[FilePin, ...] = ()
    """A project hook: the workspace files its command runs, as the user trusted them; it does
    not run while one of them differs (the model may have rewritten it)."""

    def matches(self, *names: str) -> bool:
        """Whether this hook applies to the tool called by any of ``names`` (baton's name and
        Claude Code's); always for events without a tool (no names)."""
        if not names or self.matcher in ("", "*"):
            return True
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in names
        return any(pattern.fullmatch(n) for n in names)


def parse_hooks(data: JsonValue, source: str, problems: list[str]) -> list[CommandHook]:
    """The command hooks in a ``hooks`` settings value; problems appended, one line each."""
    if data is None:
        return []
    if not isinstance(data, dict):
        problems.append(f"{source} hooks: must be an object of event names; ignored")
        return []
    out: list[CommandHook] = []
    for name, groups in data.items():
        event = next((e for e in EVENTS if e == name), None)
        if event is None:
            problems.append(f"{source} hooks: unknown event '{name}' ignored (known: {', '.join(EVENTS)})")
            continue
        if not isinstance(groups, list):
            problems.append(f"{source} hooks.{event}: must be a list; ignored")
            continue
        for index, group in enumerate(groups):
            out += _parse_group(event, group, f"{source} hooks.{event}[{index}]", source, problems)
    return out


def _parse_group(event: HookEvent, group: JsonValue, where: str, source: str, problems: list[str]) -> list[CommandHook]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(group, dict) or not isinstance(hooks, list):
        problems.append(f"{where}: needs a 'hooks' list; ignored")
        return []
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        problems.append(f"{where}: 'matcher' must be a string; ignored")
        return []
    out: list[CommandHook] = []
    for index, hook in enumerate(hooks):
        spot = f"{where}.hooks[{index}]"
        if not isinstance(hook, dict) or hook.get("type", "command") != "command":
            problems.append(f"{spot}: only type 'command' hooks are supported; ignored")
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            problems.append(f"{spot}: needs a 'command'; ignored")
            continue
        timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            problems.append(f"{spot}: 'timeout' must be a positive number of seconds; using {DEFAULT_TIMEOUT_S:g}")
            timeout = DEFAULT_TIMEOUT_S
        out.append(CommandHook(event, command, matcher, float(timeout), source))
    return out

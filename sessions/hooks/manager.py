"""What hook outcomes mean for the session (Claude Code's contract).

- Exit 0: go on; for ``UserPromptSubmit`` and ``SessionStart`` the stdout is added to the context.
- Exit 2: block. ``PreToolUse``: the call is answered with the stderr as its error;
  ``UserPromptSubmit``: the prompt is refused with the reason; ``PostToolUse``: the stderr is added
  to the tool result for the model; ``Stop``: the model goes on with the stderr as its next input.
- Other codes, a timeout, a command that cannot start: a warning, go on.
- JSON on stdout: ``{"decision": "block", "reason": ...}``, ``{"continue": false, "stopReason": ...}``,
  and ``hookSpecificOutput`` with ``permissionDecision`` (``allow|deny|ask``, PreToolUse) or
  ``additionalContext``.
Hooks run one after another in the order configured; hooks never crash baton. A project hook
whose workspace script changed since the user trusted it does not run (a warning, once).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from baton.agent.execution import AfterToolCallContext, AfterToolCallResult, BeforeToolCallResult, ToolCallContext
from baton.agent.tool import AgentTool
from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.providers.messages import TextContent
from baton.sessions.hooks.config import CommandHook, HookEvent
from baton.sessions.hooks.runner import HookOutcome, run_hook_command
from baton.tools.file_pins import changed_files
from baton.tools.tool_env import ToolEnvironment

logger = logging.getLogger(__name__)

BLOCK_EXIT_CODE = 2


@dataclass(slots=True)
class HookVerdict:
    """The combined outcome of an event's hooks."""

    blocked: bool = False
    reason: str = ""
    context: list[str] = field(default_factory=list)
    """Text to add to the model's context (UserPromptSubmit, SessionStart)."""
    permission: str | None = None
    """``allow`` | ``ask`` | ``deny`` from a PreToolUse hook."""
    feedback: list[str] = field(default_factory=list)
    """Exit-2 stderr for events that cannot block (PostToolUse): shown to the model."""


Notify = Callable[[str], None]


class HookManager:
    """The configured hooks of a session and the code that runs them."""

    def __init__(
        self,
        hooks: list[CommandHook],
        cwd: Path,
        session_id: Callable[[], str],
        transcript_path: Callable[[], str | None],
        *,
        warn: Notify | None = None,
        environment: ToolEnvironment | None = None,
    ) -> None:
        self.hooks = list(hooks)
        self.cwd = cwd
        self.environment = environment or ToolEnvironment()
        """The session's environment for hook commands (see :mod:`tools.tool_env`)."""
        self.session_id = session_id
        """The session's id now (a new session or a resume changes it)."""
        self.transcript_path = transcript_path
        """The session file's path now (``None`` while it exists only in memory)."""
        self.warn: Notify = warn or (lambda text: logger.warning("%s", text))
        self.permission_hints: dict[str, str] | None = None
        self._refused: set[str] = set()

    def add(self, hooks: list[CommandHook]) -> None:
        """Add hooks (e.g. a project's, once trusted)."""
        self.hooks.extend(hooks)

    def has(self, event: HookEvent) -> bool:
        """Whether any hook is configured for ``event``."""
        return any(h.event == event for h in self.hooks)

    async def run(self, event: HookEvent, tool: AgentTool | None = None, **fields: JsonValue) -> HookVerdict:
        """Run ``event``'s matching hooks in order (for a tool event, those matching ``tool``'s
        name or Claude Code's name for it); the first block stops the rest."""
        verdict = HookVerdict()
        names = (tool.name, tool.claude_code_name or tool.name) if tool is not None else ()
        chosen = [h for h in self.hooks if h.event == event and h.matches(*names)]
        if not chosen:
            return verdict
        payload: JsonObject = {
            "session_id": self.session_id(),
            "transcript_path": self.transcript_path() or "",
            "cwd": str(self.cwd),
            "hook_event_name": event,
            **fields,
        }
        if tool is not None:
            payload["tool_name"] = tool.claude_code_name or tool.name
            payload["baton_tool_name"] = tool.name
        for hook in chosen:
            if not self._still_trusted(hook):
                continue
            try:
                outcome = await run_hook_command(hook.command, payload, self.cwd, hook.timeout, self.environment)
            except Exception as exc:  # never let a hook take the session down
                self.warn(f"{event} hook '{hook.command}' failed: {exc}")
                continue
            self._apply(hook, outcome, verdict)
            if verdict.blocked:
                break
        return verdict

    def _still_trusted(self, hook: CommandHook) -> bool:
        """Whether the files a project hook runs are still those the user trusted (checked right
        before each run: the model can rewrite a workspace script at any time)."""
        changed = changed_files(hook.pins)
        if not changed:
            return True
        if hook.command not in self._refused:
            self._refused.add(hook.command)
            self.warn(f"{hook.event} hook '{hook.command}' not run: {', '.join(changed)} changed since you "
                      "trusted this project (baton asks again at the next start)")
        return False

    def _apply(self, hook: CommandHook, outcome: HookOutcome, verdict: HookVerdict) -> None:
        event = hook.event
        if outcome.timed_out:
            self.warn(f"{event} hook '{hook.command}' timed out after {hook.timeout:g}s and was killed")
            return
        if outcome.exit_code is None:
            self.warn(f"{event} hook '{hook.command}': {outcome.error}")
            return
        if outcome.exit_code == BLOCK_EXIT_CODE:
            reason = outcome.stderr.strip() or f"blocked by {event} hook '{hook.command}'"
            if event == "PostToolUse":
                verdict.feedback.append(reason)
            elif event in ("PreToolUse", "UserPromptSubmit", "Stop"):
                verdict.blocked, verdict.reason = True, reason
            else:
                self.warn(f"{event} hook '{hook.command}': {reason}")
            return
        if outcome.exit_code != 0:
            detail = outcome.stderr.strip().splitlines()[-1:] or [""]
            self.warn(f"{event} hook '{hook.command}' exited with {outcome.exit_code}: {detail[0][:300]}")
            return
        data = outcome.json
        if data is None:
            if event in ("UserPromptSubmit", "SessionStart") and outcome.stdout.strip():
                verdict.context.append(outcome.stdout.strip())
            return
        self._apply_json(hook, data, verdict)

    def _apply_json(self, hook: CommandHook, data: JsonMapping, verdict: HookVerdict) -> None:
        raw = data.get("hookSpecificOutput")
        specific: JsonMapping = raw if isinstance(raw, dict) else {}
        reason = str(data.get("reason") or data.get("stopReason") or "")
        if hook.event == "PreToolUse" and self._apply_permission(hook, data, specific, reason, verdict):
            return
        if data.get("decision") == "block" and hook.event != "PreToolUse":
            if hook.event != "PostToolUse":
                verdict.blocked, verdict.reason = True, reason or f"blocked by {hook.event} hook '{hook.command}'"
                return
            verdict.feedback.append(reason or f"PostToolUse hook '{hook.command}' flagged this result")
        if data.get("continue") is False and hook.event in ("PreToolUse", "UserPromptSubmit"):
            verdict.blocked, verdict.reason = True, reason or f"stopped by {hook.event} hook '{hook.command}'"
            return
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            (verdict.feedback if hook.event == "PostToolUse" else verdict.context).append(extra.strip())

    @staticmethod
    def _apply_permission(
        hook: CommandHook, data: JsonMapping, specific: JsonMapping, reason: str, verdict: HookVerdict
    ) -> bool:
        """A PreToolUse hook's ``permissionDecision`` (or Claude Code's older ``decision``);
        True when it decided the call (a deny)."""
        decision = data.get("decision")
        permission = specific.get("permissionDecision")
        if decision in ("approve", "block"):  # Claude Code's older spelling
            permission = permission or ("allow" if decision == "approve" else "deny")
        if permission not in ("allow", "deny", "ask"):
            if decision == "block":
                verdict.blocked, verdict.reason = True, reason or f"blocked by PreToolUse hook '{hook.command}'"
                return True
            return False
        reason = str(specific.get("permissionDecisionReason") or reason)
        if permission == "deny":
            verdict.blocked, verdict.reason = True, reason or f"denied by PreToolUse hook '{hook.command}'"
            return True
        verdict.permission = str(permission)
        if data.get("continue") is False:
            verdict.blocked, verdict.reason = True, reason or f"stopped by PreToolUse hook '{hook.command}'"
            return True
        return False

    # ---------------------------------------------------------------- tool gates

    async def before_tool(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """The PreToolUse gate."""
        call = context.tool_call
        verdict = await self.run("PreToolUse", context.tool, tool_input=_tool_input(call.arguments, context.tool))
        if verdict.blocked:
            return BeforeToolCallResult(block=True, reason=verdict.reason)
        if verdict.permission in ("allow", "ask") and self.permission_hints is not None:
            self.permission_hints[call.id] = verdict.permission
        return None

    async def after_tool(self, context: AfterToolCallContext, signal: asyncio.Event) -> AfterToolCallResult | None:
        """The PostToolUse gate: exit-2 stderr and additional context are appended to the result."""
        call = context.tool_call
        response: JsonObject = {
            "content": "".join(b.text for b in context.result.content if isinstance(b, TextContent)),
            "is_error": context.is_error,
        }
        verdict = await self.run(
            "PostToolUse", context.tool, tool_input=_tool_input(call.arguments, context.tool), tool_response=response
        )
        if not verdict.feedback:
            return None
        notes = [TextContent(text=f"\n\n[PostToolUse hook]\n{text}") for text in verdict.feedback]
        return AfterToolCallResult(content=[*context.result.content, *notes])


def _tool_input(arguments: JsonMapping, tool: AgentTool) -> JsonObject:
    """The tool's arguments, with Claude Code's ``file_path`` beside the tool's path argument."""
    out = dict(arguments)
    parameter = tool.path_parameter
    if parameter is not None and parameter.name in out and "file_path" not in out:
        out["file_path"] = out[parameter.name]
    return out

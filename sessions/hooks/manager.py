"""What hook outcomes mean for the session (Claude Code's contract).

- Exit 0: go on; for ``UserPromptSubmit`` and ``SessionStart`` the stdout is added to the context.
- Exit 2: block. ``PreToolUse``: the call is answered with the stderr as its error;
  ``UserPromptSubmit``: the prompt is refused with the reason; ``PostToolUse``: the stderr is added
  to the tool result for the model; ``Stop``: the model goes on with the stderr as its next input.
- Other codes, a timeout, a command that cannot start: a warning, go on.
- JSON on stdout: ``{"decision": "block", "reason": ...}``, ``{"continue": false, "stopReason": ...}``,
  and ``hookSpecificOutput`` with ``permissionDecision`` (``allow|deny|ask``, PreToolUse) or
  ``additionalContext``.
All of an event's matching hooks run at once, as in Claude Code; their outcomes are then read in
the order configured: any block wins (every blocking hook's reason is kept), and every hook's
context and feedback is kept. Hooks never crash baton. A project hook whose workspace script
changed since the user trusted it does not run (a warning, once).

The input is Claude Code's: ``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``,
``permission_mode`` (baton's ``ask`` is ``default``, ``auto`` ``acceptEdits``, ``full``
``bypassPermissions``), and for tool events ``tool_name``, ``tool_use_id`` and ``tool_input`` in
Claude Code's shape (each tool's :meth:`AgentTool.claude_code_call`), and ``tool_response`` as
Claude Code sends it.
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

    def block(self, reason: str) -> None:
        """A hook blocked: the verdict blocks, with every blocking hook's reason."""
        self.blocked = True
        self.reason = f"{self.reason}\n{reason}" if self.reason else reason


CLAUDE_MODES = {"ask": "default", "auto": "acceptEdits", "full": "bypassPermissions", "plan": "plan"}
"""baton's approval modes under Claude Code's ``permission_mode`` names."""


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
        self.approval_mode: Callable[[], str] = lambda: "auto"
        """baton's approval mode now (``ask``, ``auto``, ``full``), sent as Claude Code's ``permission_mode``."""
        self._refused: set[str] = set()

    def add(self, hooks: list[CommandHook]) -> None:
        """Add hooks (e.g. a project's, once trusted)."""
        self.hooks.extend(hooks)

    def has(self, event: HookEvent) -> bool:
        """Whether any hook is configured for ``event``."""
        return any(h.event == event for h in self.hooks)

    async def run(self, event: HookEvent, tool: AgentTool | None = None, *, tool_name: str | None = None,
                  match: str | None = None, **fields: JsonValue) -> HookVerdict:
        """Run ``event``'s matching hooks, all at once (for a tool event, those matching ``tool``'s
        name, Claude Code's name for it or ``tool_name``, the name the call is sent under; for other
        events with a matcher, those matching ``match``); any block wins."""
        verdict = HookVerdict()
        names: tuple[str, ...] = ()
        if tool is not None:
            names = tuple(dict.fromkeys((tool.name, tool.claude_code_name or tool.name, tool_name or tool.name)))
        elif match is not None:
            names = (match,)
        chosen = [h for h in self.hooks if h.event == event and h.matches(*names)]
        if not chosen:
            return verdict
        payload: JsonObject = {
            "session_id": self.session_id(),
            "transcript_path": self.transcript_path() or "",
            "cwd": str(self.cwd),
            "permission_mode": CLAUDE_MODES.get(self.approval_mode(), "default"),
            "hook_event_name": event,
            **fields,
        }
        if tool is not None:
            payload["tool_name"] = tool_name or tool.claude_code_name or tool.name
            payload["baton_tool_name"] = tool.name
        runnable = [hook for hook in chosen if self._still_trusted(hook)]
        outcomes = await asyncio.gather(*(self._run_one(hook, payload) for hook in runnable))
        for hook, outcome in zip(runnable, outcomes, strict=True):
            if outcome is not None:
                self._apply(hook, outcome, verdict)
        return verdict

    async def _run_one(self, hook: CommandHook, payload: JsonObject) -> HookOutcome | None:
        try:
            return await run_hook_command(hook.command, payload, self.cwd, hook.timeout, self.environment)
        except Exception as exc:  # never let a hook take the session down
            self.warn(f"{hook.event} hook '{hook.command}' failed: {exc}")
            return None

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
                verdict.block(reason)
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
                verdict.block(reason or f"blocked by {hook.event} hook '{hook.command}'")
                return
            verdict.feedback.append(reason or f"PostToolUse hook '{hook.command}' flagged this result")
        if data.get("continue") is False and hook.event in ("PreToolUse", "UserPromptSubmit"):
            verdict.block(reason or f"stopped by {hook.event} hook '{hook.command}'")
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
                verdict.block(reason or f"blocked by PreToolUse hook '{hook.command}'")
                return True
            return False
        reason = str(specific.get("permissionDecisionReason") or reason)
        if permission == "deny":
            verdict.block(reason or f"denied by PreToolUse hook '{hook.command}'")
            return True
        if verdict.permission != "ask":  # of two hooks, "ask" is the stricter answer
            verdict.permission = str(permission)
        if data.get("continue") is False:
            verdict.block(reason or f"stopped by PreToolUse hook '{hook.command}'")
            return True
        return False

    # ---------------------------------------------------------------- tool gates

    async def before_tool(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """The PreToolUse gate."""
        call = context.tool_call
        name, tool_input = context.tool.claude_code_call(call.arguments, str(self.cwd))
        verdict = await self.run("PreToolUse", context.tool, tool_name=name, tool_input=tool_input,
                                 tool_use_id=call.id)
        if verdict.blocked:
            return BeforeToolCallResult(block=True, reason=verdict.reason)
        if verdict.permission in ("allow", "ask") and self.permission_hints is not None:
            self.permission_hints[call.id] = verdict.permission
        return None

    async def after_tool(self, context: AfterToolCallContext, signal: asyncio.Event) -> AfterToolCallResult | None:
        """The PostToolUse gate: exit-2 stderr and additional context are appended to the result."""
        call = context.tool_call
        name, tool_input = context.tool.claude_code_call(call.arguments, str(self.cwd))
        text = "".join(b.text for b in context.result.content if isinstance(b, TextContent))
        verdict = await self.run(
            "PostToolUse", context.tool, tool_name=name, tool_input=tool_input, tool_use_id=call.id,
            tool_response=tool_response(name, tool_input, text, context.is_error),
        )
        if not verdict.feedback:
            return None
        notes = [TextContent(text=f"\n\n[PostToolUse hook]\n{text}") for text in verdict.feedback]
        return AfterToolCallResult(content=[*context.result.content, *notes])


def tool_response(name: str, tool_input: JsonMapping, text: str, is_error: bool) -> JsonObject:
    """The ``tool_response`` of a PostToolUse input, as Claude Code sends it: ``Bash``'s
    ``stdout``/``stderr``/``interrupted``, a file tool's ``filePath`` and ``success`` (with the
    edit's or write's own fields); baton's ``content`` and ``is_error`` beside them."""
    out: JsonObject = {"content": text, "is_error": is_error}
    if name == "Bash":
        out.update(stdout=text, stderr="", interrupted=False, isImage=False)
    path = tool_input.get("file_path")
    if isinstance(path, str):
        out.update(filePath=path, success=not is_error)
        if name == "Write":
            out.update(type="create", content=tool_input.get("content", ""))
        elif name in ("Edit", "MultiEdit"):
            for key, claude in (("old_string", "oldString"), ("new_string", "newString"), ("replace_all", "replaceAll"),
                                ("edits", "edits")):
                if key in tool_input:
                    out[claude] = tool_input[key]
    return out

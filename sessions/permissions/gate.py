"""The permission gate: the policy applied to every tool call, asking when it says so.

:class:`Permissions` registers as the session's ``permissions`` before-gate (allow, ask or deny
each call) and after-gate (a sandboxed command that failed as if the sandbox blocked it: say what
it was kept from, and offer to run it again without the sandbox). It also starts bash's commands
inside the bubblewrap sandbox: every allowed command — by the mode, a rule or the user's answer to
"allow?" — runs there (unless the mode is ``full``); only the user's "yes" to "run it again without
the sandbox?", for that one command, runs it outside. Decisions become ``tool_approval`` events
and session entries.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from baton.agent.execution import AfterToolCallContext, BeforeToolCallResult, ToolCallContext
from baton.agent.tool import AgentTool, AgentToolResult, ToolError
from baton.providers.json_types import JsonMapping, JsonObject
from baton.providers.messages import TextContent
from baton.sessions.permissions.approval import ApprovalAnswer, ApprovalRequest, Approver
from baton.sessions.permissions.blocked import blocked_places, blocked_reason
from baton.sessions.permissions.events import ApprovalModeChangeEvent, ToolApprovalEvent
from baton.sessions.permissions.persist import LOCAL_RULES_FILE, RuleSaveError, save_allow_rule
from baton.sessions.permissions.policy import APPROVAL_MODES, ApprovalMode, Decision, Policy
from baton.sessions.permissions.preview import change_preview
from baton.sessions.permissions.rules import RuleError, parse_rule
from baton.tools.path_pins import PathPins
from baton.tools.sandbox import Sandbox, SandboxStatus, looks_like_denial
from baton.tools.sandbox_host import SandboxHostError, SandboxHosts
from baton.tools.shell import StartedCommand, start_command

if TYPE_CHECKING:
    from baton.sessions.event_hub import EventHub

logger = logging.getLogger(__name__)

Outcome: TypeAlias = Literal["allow", "deny"]
DECISION_ENTRY = "permission_decision"
"""``custom_type`` of the session entries recording decisions."""
SANDBOX_NOTE = (
    "[baton: this looks like the sandbox blocked the command: outside the workspace and the temp "
    "dirs the file system is read-only, and there is no network.]"
)


def sandbox_note(reason: str) -> str:
    """What the model reads about a command the sandbox blocked: the places it was kept from
    (``reason`` from :func:`.blocked.blocked_reason`), else the general rule."""
    if reason.startswith("it "):
        return f"[baton: the sandbox blocked this command: {reason}.]"
    return SANDBOX_NOTE

FIRST_HOSTED_RUN = 2
"""The first sandboxed command of a session started in its long-lived sandbox; the ones before
start their own bwrap. The long-lived sandbox costs about three fresh ones to start, so a session
running a single command (a one-shot ``baton -p``) is cheaper without it."""
MAX_HOST_FAILURES = 3
"""After this many failures of the long-lived sandbox, every command starts its own bwrap."""


def denied_text(reason: str | None) -> str:
    """What the model reads when the user said no."""
    return f"The user denied this: {reason}" if reason else "The user denied this."


class Permissions:
    """The policy, the sandbox and the approver of one session (see the module docstring)."""

    def __init__(
        self,
        policy: Policy,
        *,
        sandbox: Sandbox | None,
        sandbox_status: SandboxStatus,
        project_dir: Path,
        hints: dict[str, str],
        events: EventHub,
        record: Callable[[JsonObject], object],
        tools: Callable[[], list[AgentTool]],
        abort: Callable[[], None],
        record_mode: Callable[[str], object] = lambda mode: None,
    ) -> None:
        self.policy = policy
        self.sandbox = sandbox
        self.sandbox_status = sandbox_status
        self.project_dir = project_dir
        self.approver: Approver | None = None
        self._hints = hints
        self._events = events
        self._record = record
        self._tools = tools
        self._abort = abort
        self._record_mode = record_mode
        self.mode_listeners: list[Callable[[ApprovalMode], object]] = []
        """Called with each new mode (the session's plan-mode part follows it)."""
        self._sandboxed: dict[str, bool] = {}
        self._absent: dict[str, list[str]] = {}
        """Per sandboxed call: protected paths that did not exist before it (the sandbox can only
        keep existing ones read-only, so one that appears is reported)."""
        self._ask_lock = asyncio.Lock()
        self._hosts: SandboxHosts | None = (
            SandboxHosts(socket_filter=sandbox.socket_filter) if sandbox is not None else None
        )
        self._host_failures = 0
        self._sandboxed_runs = 0
        self.warnings: list[str] = []
        self.on_rule_saved: Callable[[str], object] | None = None
        self.on_wait: Callable[[ApprovalRequest], object] | None = None
        """Called as a question is put to the user (the Notification hooks)."""
        """Called with each rule an "allow always" answer saved to the project's settings."""
        self.pins = PathPins()
        """The real path each allowed file-tool call was judged by; the tool opens that one."""

    @property
    def mode(self) -> ApprovalMode:
        """The approval mode in effect: ``plan``, ``ask``, ``auto`` or ``full`` (see the README's
        Permissions section)."""
        return self.policy.mode

    def set_mode(self, mode: str) -> ApprovalMode:
        """Switch the approval mode (an ``approval_mode_change`` event and a session entry, so a
        resumed session starts in it); raises ValueError for anything but plan, ask, auto and full.
        Only front ends call this, for the user: no tool can."""
        chosen = next((m for m in APPROVAL_MODES if m == mode), None)
        if chosen is None:
            raise ValueError(f"unknown approval mode {mode!r}: use plan, ask, auto or full")
        if self.policy.mode != chosen:
            self.policy.mode = chosen
            try:
                self._record_mode(chosen)
            except OSError as exc:  # the session reports its own write errors
                logger.warning("could not record the approval mode: %s", exc)
            self._events.emit_soon(ApprovalModeChangeEvent(chosen))
            for listener in list(self.mode_listeners):
                listener(chosen)
        return chosen

    @property
    def sandbox_active(self) -> bool:
        """Whether bash runs in the sandbox in this mode."""
        return self.sandbox is not None and self.policy.mode != "full"

    def status_line(self) -> str:
        """For footers: ``auto · sandbox``, ``auto · no sandbox (why)``, ``full · no sandbox``."""
        mode = self.policy.mode
        if mode == "full":
            return "full · no sandbox"
        if mode == "plan":
            return "plan · read-only"
        if self.sandbox is None:
            why = self.sandbox_status.reason
            return f"{mode} · no sandbox ({why})" if why and mode == "auto" else f"{mode} · no sandbox"
        return f"{mode} · sandbox"

    # ------------------------------------------------------------------ bash hook

    def sandbox_for(self, tool_call_id: str) -> Sandbox | None:
        """The sandbox this allowed bash call must run in (``None``: it runs without one). For
        runners that start commands themselves, like an editor's terminal."""
        return self.sandbox if self.sandbox is not None and self._sandboxed.get(tool_call_id) else None

    async def launch_command(
        self, argv: list[str], tool_call_id: str, cwd: str, env: dict[str, str], output_fd: int,
        *, background: bool = False,
    ) -> StartedCommand:
        """bash's ``command_launcher``: the sandboxed calls start in the session's long-lived
        sandbox from the second on (the first, or every one when that cannot start, in a fresh
        bwrap), the others directly. A ``background`` command starts in the long-lived sandbox
        even when it is the first, so the later commands share its network namespace (a server
        it runs on 127.0.0.1 answers them)."""
        if self.sandbox is None or not self._sandboxed.get(tool_call_id):
            return await start_command(argv, cwd, env, output_fd)
        self._sandboxed_runs += 1
        if background:
            self._sandboxed_runs = max(self._sandboxed_runs, FIRST_HOSTED_RUN)
        if self._hosts is not None and self._sandboxed_runs >= FIRST_HOSTED_RUN:
            try:
                return await self._hosts.spawn(self.sandbox.bwrap_args(), argv, cwd, env, output_fd)
            except SandboxHostError as exc:
                self._host_failures += 1
                logger.warning("sandbox host failed (%s): this command starts its own bwrap", exc)
                if self._host_failures >= MAX_HOST_FAILURES:
                    hosts, self._hosts = self._hosts, None
                    await hosts.close()
        return await self.sandbox.start(argv, cwd, env, output_fd)

    async def close(self) -> None:
        """End the long-lived sandbox (commands still running in it end with it)."""
        if self._hosts is not None:
            await self._hosts.close()

    # ------------------------------------------------------------------ before

    async def before(self, context: ToolCallContext, signal: asyncio.Event) -> BeforeToolCallResult | None:
        """The before-gate: allow, ask or deny this call."""
        call = context.tool_call
        args = dict(call.arguments or {})
        traits = type(context.tool)  # the traits of the tool that will run decide, not a table of names
        decision = self.policy.decide(call.name, args, self._hints.pop(call.id, None), traits=traits)
        if decision.action == "allow":
            self._pin(call.id, decision)
            self._sandboxed[call.id] = decision.sandbox
            if decision.sandbox:
                self._absent[call.id] = self._absent_protected()
            if decision.source in ("rule", "hook"):  # the mode's own defaults are not worth an entry each
                self._settle(call.id, call.name, decision, "allow", decision.source, decision.reason)
                await self._event(call.id, call.name, decision, "allow", decision.source, decision.reason)
            return None
        if decision.action == "deny":
            return await self._block(call.id, call.name, decision, decision.source, decision.reason,
                                     f"Denied: {decision.reason}.")
        if self.approver is None:
            reason = f"needs approval ({decision.reason})"
            return await self._block(
                call.id, call.name, decision, "policy", reason,
                f"Not run: {decision.summary} needs the user's approval ({decision.reason}), and nobody can be "
                "asked in this mode. Do not retry it; tell the user what you wanted to do.",
                needed=True,
            )
        request = ApprovalRequest(
            call.id, call.name, args, decision.summary,
            None if decision.source == "protected" else decision.proposed_rule,
            decision.reason, diff=self._diff(call.name, args, decision, traits),
        )
        answer = await self._ask(request, signal)
        if answer.allowed:
            self._pin(call.id, decision)
            # "allow" answers "may it run?", not "may it leave the sandbox?": bash still runs inside,
            # and if the sandbox blocks it the after-gate asks that second question.
            sandboxed = call.name == "bash" and self.policy.sandboxes_bash
            self._sandboxed[call.id] = sandboxed
            if sandboxed:
                self._absent[call.id] = self._absent_protected()
            rule = await self._remember(answer, request)
            reason = "allowed by the user" + (f" (saved {rule} to {LOCAL_RULES_FILE})" if rule else "")
            self._settle(call.id, call.name, decision, "allow", "user", reason, rule)
            await self._event(call.id, call.name, decision, "allow", "user", reason, rule=rule, needed=True)
            return None
        if answer.kind == "abort":
            self._abort()
        text = denied_text(answer.reason)
        return await self._block(call.id, call.name, decision, "user", answer.reason or "denied by the user", text,
                                 needed=True)

    def _pin(self, call_id: str, decision: Decision) -> None:
        if decision.path is not None:
            self.pins.pin(call_id, decision.path_argument, decision.path)

    async def _block(
        self, call_id: str, tool: str, decision: Decision, by: str, reason: str, text: str, *, needed: bool = False
    ) -> BeforeToolCallResult:
        self._settle(call_id, tool, decision, "deny", by, reason)
        await self._event(call_id, tool, decision, "deny", by, reason, needed=needed)
        return BeforeToolCallResult(block=True, reason=text)

    def _diff(self, tool: str, args: JsonMapping, decision: Decision, traits: type[AgentTool]) -> str | None:
        if decision.path is None or not traits.changes_files():
            return None
        try:
            return change_preview(tool, args, decision.path)
        except Exception:  # a preview is a nicety; never let it stop the question
            logger.exception("could not build the change preview")
            return None

    async def ask(self, request: ApprovalRequest, signal: asyncio.Event) -> ApprovalAnswer:
        """Ask the user something that is not a tool call (an MCP server's sampling request), in
        turn with the other questions; ``deny`` when no one can be asked."""
        if self.approver is None:
            return ApprovalAnswer("deny", reason="baton cannot ask the user in this mode")
        return await self._ask(request, signal)

    async def _ask(self, request: ApprovalRequest, signal: asyncio.Event) -> ApprovalAnswer:
        """Ask the approver (one question at a time); an abort while waiting answers ``abort``."""
        assert self.approver is not None
        async with self._ask_lock:
            if signal.is_set():
                return ApprovalAnswer("abort")
            if self.on_wait is not None:
                try:
                    self.on_wait(request)
                except Exception:  # a notification never stops the question
                    logger.exception("could not announce the approval")
            question = asyncio.ensure_future(self.approver(request))
            stop = asyncio.ensure_future(signal.wait())
            try:
                done, _ = await asyncio.wait({question, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
            if question not in done:
                question.cancel()
                return ApprovalAnswer("abort")
            try:
                return question.result()
            except Exception as exc:  # a broken front end denies rather than allows
                logger.exception("approver failed")
                return ApprovalAnswer("deny", reason=f"the approval could not be asked ({exc})")

    async def _remember(self, answer: ApprovalAnswer, request: ApprovalRequest) -> str | None:
        """Save the rule of an "allow always" answer; returns its text (None when nothing was saved)."""
        if answer.kind != "allow_always":
            return None
        text = (answer.rule or request.proposed_rule or "").strip()
        if not text:
            return None
        try:
            rule = parse_rule(text)
            save_allow_rule(self.project_dir, text)
            if self.on_rule_saved is not None:
                self.on_rule_saved(text)
        except (RuleError, RuleSaveError, OSError) as exc:
            self.warnings.append(str(exc))
            logger.warning("could not save the rule %s: %s", text, exc)
            return None
        self.policy.rules.add("allow", rule)
        return text

    # ------------------------------------------------------------------ after

    async def after(self, context: AfterToolCallContext, signal: asyncio.Event) -> AgentToolResult | None:
        """The after-gate: notice a sandbox denial, offer to run the command again without it."""
        call = context.tool_call
        sandboxed = self._sandboxed.pop(call.id, False)
        created = [p for p in self._absent.pop(call.id, []) if os.path.lexists(p)]
        if created:
            shown = ", ".join(self.policy.workspace.display(p) for p in created)
            warning = f"a sandboxed command created {shown}, which baton protects: review it before trusting it"
            self.warnings.append(warning)
            return _with_note(context.result, f"[baton: {warning}.]", is_error=context.is_error)
        if call.name != "bash" or not sandboxed or not context.is_error:
            return None
        output = "".join(b.text for b in context.result.content if isinstance(b, TextContent))
        if not looks_like_denial(output):
            return None
        args = dict(call.arguments or {})
        decision = self.policy.decide("bash", args)
        why = blocked_reason(blocked_places(output, str(args.get("command", "")), self.policy.workspace))
        note = sandbox_note(why)
        if self.approver is None:
            reason = f"the sandbox blocked it ({why}); running it outside the sandbox needs approval"
            self._settle(call.id, call.name, decision, "deny", "policy", reason)
            await self._event(call.id, call.name, decision, "deny", "policy", reason, needed=True)
            note += " Running it outside the sandbox needs the user's approval, which cannot be asked here."
            return _with_note(context.result, note)
        # No "allow always" here: a rule skips a question, it never lets a command out of the sandbox.
        request = ApprovalRequest(
            call.id, call.name, args, decision.summary, None, why, kind="unsandboxed", output=output[-2000:],
        )
        answer = await self._ask(request, signal)
        if not answer.allowed:
            if answer.kind == "abort":
                self._abort()
            reason = answer.reason or "declined to run it outside the sandbox"
            self._settle(call.id, call.name, decision, "deny", "user", reason)
            await self._event(call.id, call.name, decision, "deny", "user", reason, needed=True)
            return _with_note(context.result, f"{note} {denied_text(answer.reason)} (not run outside the sandbox)")
        reason = f"run again outside the sandbox, allowed by the user ({why})"
        self._settle(call.id, call.name, decision, "allow", "user", reason)
        await self._event(call.id, call.name, decision, "allow", "user", reason, needed=True)
        return await self._rerun(context, signal)

    async def _rerun(self, context: AfterToolCallContext, signal: asyncio.Event) -> AgentToolResult:
        tool = next((t for t in self._tools() if t.name == "bash"), None)
        if tool is None:
            return context.result
        self._sandboxed[context.tool_call.id] = False
        try:
            return await tool.execute(context.tool_call.id, context.args, signal, lambda _: None)
        except ToolError as exc:
            return AgentToolResult([TextContent(text=str(exc))], exc.details, True)
        finally:
            self._sandboxed.pop(context.tool_call.id, None)

    def _absent_protected(self) -> list[str]:
        return [p for p in self.policy.workspace.protected if not os.path.lexists(p)]

    # ------------------------------------------------------------------ records

    def _settle(
        self, call_id: str, tool: str, decision: Decision, outcome: Outcome, by: str, reason: str,
        rule: str | None = None,
    ) -> None:
        data: JsonObject = {
            "toolCallId": call_id,
            "toolName": tool,
            "decision": outcome,
            "decidedBy": by,
            "rule": rule or decision.rule,
            "reason": reason,
            "summary": decision.summary,
            "mode": self.policy.mode,
            "sandbox": bool(outcome == "allow" and self._sandboxed.get(call_id)),
        }
        try:
            self._record(data)
        except OSError as exc:  # the session reports its own write errors; a decision record is not fatal
            logger.warning("could not record a permission decision: %s", exc)

    async def _event(
        self, call_id: str, tool: str, decision: Decision, outcome: Outcome, by: str, reason: str,
        *, rule: str | None = None, needed: bool = False,
    ) -> None:
        await self._events.emit(
            ToolApprovalEvent(call_id, tool, outcome, reason, rule or decision.rule, by,
                              decision.summary, needed)
        )


def _with_note(result: AgentToolResult, note: str, *, is_error: bool = True) -> AgentToolResult:
    content = [*result.content, TextContent(text=note)]
    return AgentToolResult(content, result.details, is_error)

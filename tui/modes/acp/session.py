"""One ACP session: a :class:`CodingSession` plus what the editor needs to follow it.

The shared actions (``tui/actions``) reach the editor two ways: those with an ACP command are
listed in ``available_commands_update`` and run when a prompt is ``/name args`` (unless a prompt
template has the name); those that are config options (the model, the thinking level) change
with ``session/set_config_option``. What an action reports becomes a finished card in the thread.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING

from baton.agent.events import MessageEndEvent
from baton.providers.errors import BatonError
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.messages import AssistantMessage
from baton.sessions.events import ModelChangeEvent, ModelFallbackEvent, ThinkingLevelChangeEvent, TodoUpdateEvent
from baton.sessions.permissions.events import ApprovalModeChangeEvent
from baton.tui.actions.action import ActionCancelled, ActionError, Report, SessionAction
from baton.tui.modes.acp.config import config_options, describe
from baton.tui.modes.acp.errors import INTERNAL_ERROR, INVALID_PARAMS, AcpError
from baton.tui.modes.acp.updates import UpdateMapper, replay_updates

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent, Usage
    from baton.sessions import CodingSession
    from baton.tui.modes.acp.client import AcpClient
    from baton.tui.modes.print_mode import RunTracker

logger = logging.getLogger(__name__)
_notice_ids = itertools.count(1)
ACP_TRUST_HINT = "trust it in baton's app, or start the agent with --trust-project"
_REFUSAL_WORDS = ("refused to respond", "safety filter", "flagged by safety")


class AcpSession:
    """Maps one CodingSession's events to ``session/update`` and serves the session's methods."""

    def __init__(self, session: CodingSession, client: AcpClient) -> None:
        self.session = session
        self.client = client
        self.id = session.session_id
        self.cwd = str(session.cwd)
        self.cancelled = False
        self._run_usage: dict[str, int] = {}
        self._title: str | None = None
        """The title the editor was last told (``session_info_update``)."""
        self.mapper = UpdateMapper(self.cwd, self.send, usage=self.usage_update)
        self._unsubscribe = session.subscribe(self._on_event)
        self._attach_file_access()
        self._attach_terminal()
        from baton.tui.modes.acp.permission import editor_approver

        session.permissions.approver = editor_approver(client, self.id, self.cwd)  # asking happens in the editor
        from baton.tui.modes.acp.plan import editor_plan_approver

        session.plan_mode.approver = editor_plan_approver(client, self.id)
        from baton.tui.modes.acp.elicitation import editor_elicitor

        session.mcp.elicitor = editor_elicitor(client, self.id)  # an MCP server's yes/no questions too

    # ------------------------------------------------------------------ wiring

    def send(self, update: JsonObject) -> None:
        """One ``session/update`` for this session."""
        self.client.update(self.id, update)

    def _on_event(self, event: object) -> None:
        match event:
            case ModelChangeEvent() | ThinkingLevelChangeEvent():
                self.send({"sessionUpdate": "config_option_update", "configOptions": config_options(self.session)})
                return
            case ApprovalModeChangeEvent(mode=mode):  # Shift+Tab's cycle, plan accepted, the editor's choice
                self.send({"sessionUpdate": "current_mode_update", "currentModeId": mode})
                self.send({"sessionUpdate": "config_option_update", "configOptions": config_options(self.session)})
                return
            case ModelFallbackEvent():
                self.notice(f"Model: {event.model.ref}", event.text(), "switch_mode", {"notice": "model_fallback",
                                                                                    **event.to_dict()})
                return
            case MessageEndEvent(message=AssistantMessage() as message):
                self._count_usage(message.usage)
            case TodoUpdateEvent(todos=todos):
                from baton.tui.modes.acp.plan import plan_update

                self.send(plan_update(todos))
                return
        self.mapper(event)

    def _attach_file_access(self) -> None:
        if not (self.client.can_read_files or self.client.can_write_files):
            return
        from baton.tui.modes.acp.client import EditorFileAccess, editor_file_check

        permissions = self.session.permissions
        check = editor_file_check(permissions.policy if permissions is not None else None, self.cwd)
        access = EditorFileAccess(self.client, self.id, check)
        for tool in self.session.agent.tools:
            if hasattr(tool, "file_access"):
                tool.file_access = access

    def _attach_terminal(self) -> None:
        """bash runs in the editor's terminal when the editor offers terminals."""
        if not self.client.capabilities.get("terminal"):
            return
        from baton.tools.bash import BashTool
        from baton.tui.modes.acp.terminal_bash import EditorTerminalBash

        permissions = self.session.permissions
        sandbox_for = permissions.sandbox_for if permissions is not None else (lambda call_id: None)
        tools = self.session.agent.tools
        for index, tool in enumerate(tools):
            if tool.name == "bash":
                tools[index] = EditorTerminalBash(self.client, self.id, self.cwd, self._show_terminal, sandbox_for,
                                                  self.session.tool_env,
                                                  background=tool if isinstance(tool, BashTool) else None)

    def _show_terminal(self, tool_call_id: str, terminal_id: str) -> None:
        self.mapper.terminals[tool_call_id] = terminal_id
        self.send({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id,
                   "content": [{"type": "terminal", "terminalId": terminal_id}]})

    def _count_usage(self, usage: Usage) -> None:
        for key, value in (("inputTokens", usage.input), ("outputTokens", usage.output),
                           ("cachedReadTokens", usage.cache_read), ("cachedWriteTokens", usage.cache_write)):
            self._run_usage[key] = self._run_usage.get(key, 0) + int(value)

    def usage_update(self) -> JsonObject | None:
        """Context fill and the session's cost so far (``usage_update``)."""
        try:
            usage = self.session.context_usage()
            cost = self.session.stats().cost
        except Exception:  # figures are a courtesy; never break a run over them
            logger.exception("usage figures failed")
            return None
        return {"sessionUpdate": "usage_update", "used": max(usage.tokens, 0),
                "size": max(usage.context_window, 0), "cost": {"amount": round(cost, 6), "currency": "USD"}}

    def describe(self) -> JsonObject:
        """The ``session/new`` / ``session/load`` result fields besides the id."""
        return describe(self.session)

    def announce(self) -> None:
        """Updates a client wants right after the session opens: commands and usage, and what of
        the project is ignored until it is trusted (a notice)."""
        from baton.tui.actions.registry import acp_commands
        from baton.tui.modes.session_features import ignored_project_notice, prompt_commands

        templates = prompt_commands(self.session)
        commands: list[JsonValue] = [
            {"name": c["name"], "description": c.get("description") or c["name"],
             "input": {"hint": c.get("argumentHint") or "arguments"}}
            for c in templates
        ]
        names = {c["name"] for c in templates}
        commands += [_command_entry(a) for a in acp_commands() if a.name not in names]
        self.send({"sessionUpdate": "available_commands_update", "availableCommands": commands})
        self.send_title()
        ignored = ignored_project_notice(self.session, ACP_TRUST_HINT)
        if ignored is not None:
            self.notice("Project settings ignored", str(ignored["text"]), "other", {"notice": "project_trust"})

    def send_title(self) -> None:
        """``session_info_update`` when the session's name differs from what the editor knows."""
        name = self.session.session_name
        if name is None or name == self._title:
            return
        from datetime import UTC, datetime

        self._title = name
        self.send({"sessionUpdate": "session_info_update", "title": name,
                   "updatedAt": datetime.now(UTC).isoformat(timespec="seconds")})

    def replay(self) -> None:
        """Send the stored conversation as updates (``session/load``): the whole current branch,
        including what a compaction has summarised away from the model's context."""
        from baton.sessions.entries import MessageEntry

        messages = [e.message for e in self.session.store.branch_path() if isinstance(e, MessageEntry)]
        for update in replay_updates(messages, self.cwd):
            self.send(update)
        from baton.tools.todo_write import latest_todos
        from baton.tui.modes.acp.plan import plan_update

        todos = latest_todos(messages)
        if todos:  # the task list as it last stood
            self.send(plan_update(todos))

    async def close(self) -> None:
        """Abort any run and release the session file."""
        self._unsubscribe()
        await self.session.close()

    # ------------------------------------------------------------------ prompting

    async def prompt(self, text: str, images: list[ImageContent]) -> JsonObject:
        """Run one prompt; the result holds ACP's stop reason (and this turn's token usage)."""
        from baton.sessions.errors import SessionError
        from baton.tui.modes.print_mode import RunTracker

        if self.session.is_running:
            raise AcpError(INVALID_PARAMS, "A prompt is already running in this session; cancel it first")
        slash = self._slash_action(text)
        if slash is not None:
            return await self._run_command(*slash)
        tracker = RunTracker()
        unsubscribe = self.session.subscribe(tracker)
        self.cancelled = False
        self._run_usage = {}
        try:
            await self.session.prompt(text, images or None)
        except SessionError as exc:
            raise AcpError(INTERNAL_ERROR, str(exc)) from exc
        finally:
            unsubscribe()
        result: JsonObject = {"stopReason": self._stop_reason(tracker)}
        if self._run_usage:
            total = sum(self._run_usage.values())
            result["usage"] = {"totalTokens": total, **self._run_usage}
        return result

    def _slash_action(self, text: str) -> tuple[SessionAction, str] | None:
        """The action a ``/name args`` prompt asks for and its arguments; ``None`` for any other
        prompt (or when a prompt template of that name takes precedence)."""
        from baton.tui.actions.registry import acp_commands
        from baton.tui.modes.session_features import prompt_commands

        head, _, rest = text.strip().partition(" ")
        action = next((a for a in acp_commands() if head == f"/{a.name}"), None)
        if action is None or any(c["name"] == action.name for c in prompt_commands(self.session)):
            return None
        return action, rest.strip()

    async def _run_command(self, action: SessionAction, args: str) -> JsonObject:
        """Run a slash command's action; its report becomes a card, the usage follows."""
        self.cancelled = False
        try:
            report = await action.from_text(self.session, args)
        except ActionCancelled:
            return {"stopReason": "cancelled"}
        except ActionError as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        except BatonError as exc:
            raise AcpError(INTERNAL_ERROR, str(exc)) from exc
        if report is not None:
            self._report(action, report, "other")
        self.send_title()
        usage = self.usage_update()
        if usage is not None:
            self.send(usage)
        return {"stopReason": "end_turn"}

    def _stop_reason(self, tracker: RunTracker) -> str:
        if self.cancelled:
            return "cancelled"
        answer = tracker.answer
        if answer is None:
            if tracker.last_message is None:
                raise AcpError(INTERNAL_ERROR, "The run produced no answer")
            return "end_turn"  # e.g. ended on a tool result the loop could not continue from
        reason = answer.stop_reason
        if reason == "aborted":
            return "cancelled"
        if reason == "length":
            return "max_tokens"
        if reason == "error":
            message = answer.error_message or "The model request failed"
            if any(word in message.lower() for word in _REFUSAL_WORDS):
                return "refusal"
            raise AcpError(INTERNAL_ERROR, message)
        return "end_turn"

    def cancel(self) -> None:
        """``session/cancel``: abort like Ctrl+C (partial saved and marked aborted, tools killed)."""
        self.cancelled = True
        self.session.abort()

    # ------------------------------------------------------------------ configuration

    async def set_config_option(self, config_id: str, value: JsonValue) -> list[JsonValue]:
        """Change a config option (the model, the thinking level); returns every option's new state."""
        from baton.tui.actions.registry import acp_option

        action = acp_option(config_id)
        if action is None:
            raise AcpError(INVALID_PARAMS, f"Unknown config option: {config_id!r}")
        if not action.while_running and self.session.is_running:
            raise AcpError(INVALID_PARAMS, f"{config_id} cannot change while a prompt runs; cancel it first")
        try:
            report = await action.from_option(self.session, value)
        except ActionError as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        kind = action.option_notice
        if report is not None and kind is not None:
            self._report(action, report, kind)
        return config_options(self.session)

    def _report(self, action: SessionAction, report: Report, kind: str) -> None:
        self.notice(report.title or f"/{action.name}", report.text, kind, report.meta)

    def notice(self, title: str, text: str, kind: str, meta: JsonObject) -> None:
        """Something baton tells the user (not the model): a finished card in the thread, with
        ``_meta.baton`` for clients that want the details."""
        self.send(notice_update(title, text, kind, meta))


def notice_update(title: str, text: str, kind: str, meta: JsonObject) -> JsonObject:
    """A notice as a ``session/update``: a finished card (``_meta.baton`` holds the details)."""
    return {
        "sessionUpdate": "tool_call", "toolCallId": f"baton-notice-{next(_notice_ids)}", "title": title,
        "kind": kind, "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
        "_meta": {"baton": meta},
    }



def _command_entry(action: SessionAction) -> JsonObject:
    """An action as an entry of ``available_commands_update``."""
    spec = action.acp_command
    entry: JsonObject = {"name": action.name,
                         "description": (spec.description if spec else None) or action.description}
    if spec is not None and spec.hint:
        entry["input"] = {"hint": spec.hint}
    return entry

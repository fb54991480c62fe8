"""The commands of RPC mode: pi's names and shapes, plus baton's ``handoff_preview``,
``set_approval``, ``rewind`` and ``get_checkpoints``.

The commands that are also slash commands (``compact``, ``set_model``, ``set_thinking_level``,
``export_html``, ``rewind``, ``set_session_name``, ``new_session``, ``switch_session``, ``fork``,
``set_approval``) are shared actions (``tui/actions``), found by their RPC name; the rest — the
prompt and its queues, state and queries that only a program asks for — are the ``cmd_*``
methods here. Each takes the command object and returns the response's ``data``
(:data:`~baton.tui.actions.action.NO_DATA`: none); raising :class:`RpcError` (or any exception)
makes an error response with the message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeAlias

from baton.providers.json_types import JsonMapping, JsonObject, JsonValue
from baton.tui.actions.action import NO_DATA, NoData
from baton.tui.actions.fields import bool_field, text_field
from baton.tui.actions.models import model_json
from baton.tui.modes.rpc_responses import RpcError, error_response

if TYPE_CHECKING:
    from baton.agent.agent import QueueMode
    from baton.providers.messages import ImageContent, UserMessage
    from baton.providers.models import Model
    from baton.sessions import CodingSession

_QUEUE_MODES: tuple[QueueMode, ...] = ("all", "one-at-a-time")
Reply: TypeAlias = "JsonValue | NoData"
Handler: TypeAlias = "Callable[[JsonObject], Awaitable[Reply]]"


def parse_images(raw: JsonValue) -> list[ImageContent]:
    """pi's ``images`` field: ``[{"type": "image", "data": base64, "mimeType"}]``."""
    from pydantic import ValidationError

    from baton.providers.messages import ImageContent

    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RpcError('"images" must be a list of {"type": "image", "data", "mimeType"}')
    try:
        return [ImageContent.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise RpcError(f'"images": {exc.errors()[0]["msg"]}') from None


class RpcCommands:
    """Runs commands against one session; follows its events for ``isCompacting`` and retries."""

    def __init__(self, session: CodingSession, emit: Callable[[JsonObject], None]) -> None:
        self.session = session
        self.emit = emit
        self.prompt_task: asyncio.Task[None] | None = None
        self.compacting = False
        self.retrying = False
        self._handlers: dict[str, Handler] = {
            name.removeprefix("cmd_"): getattr(self, name) for name in dir(self) if name.startswith("cmd_")
        }

    # ------------------------------------------------------------------ plumbing

    async def run(self, name: str, command: JsonObject) -> tuple[JsonValue, bool]:
        """Run command ``name``; returns (data, whether to include ``data`` even when null)."""
        handler = self._handlers.get(name)
        if handler is not None:
            data = await handler(command)
        else:
            from baton.tui.actions.registry import rpc_action

            action = rpc_action(name)
            if action is None:
                raise RpcError(f"Unknown command: {name}")
            data = await action.from_rpc(self.session, command)
        if isinstance(data, NoData):
            return None, False
        return data, True

    def observe(self, event: object) -> None:
        """Track compaction and retry state from the session's events."""
        from baton.sessions.events import (
            AutoCompactionEndEvent,
            AutoCompactionStartEvent,
            AutoRetryEndEvent,
            AutoRetryStartEvent,
        )

        match event:
            case AutoCompactionStartEvent():
                self.compacting = True
            case AutoCompactionEndEvent():
                self.compacting = False
            case AutoRetryStartEvent(source="session"):
                self.retrying = True
            case AutoRetryEndEvent():
                self.retrying = False

    @property
    def running(self) -> bool:
        """A prompt is running (or has been accepted and is about to)."""
        return self.session.is_running or (self.prompt_task is not None and not self.prompt_task.done())

    async def wait_idle(self) -> None:
        """Wait for the running prompt (after an abort) to finish and be saved."""
        task = self.prompt_task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=30)

    def _find_model(self, ref: str) -> Model:
        from baton.tui.actions.models import find_available

        model = find_available(self.session, ref)
        if model is None:
            raise RpcError(f"Model not found: {ref}")
        return model

    def _user_message(self, command: JsonMapping) -> UserMessage:
        from baton.providers.messages import TextContent, UserMessage

        text = text_field(command, "message")
        images = parse_images(command.get("images"))
        if not images:
            return UserMessage(content=text)
        return UserMessage(content=[TextContent(text=text), *images])

    # ------------------------------------------------------------------ prompting

    async def cmd_prompt(self, command: JsonObject) -> Reply:
        text = text_field(command, "message")
        images = parse_images(command.get("images"))
        behavior = command.get("streamingBehavior")
        if self.running:
            if behavior == "steer":
                return await self.cmd_steer(command)
            if behavior == "followUp":
                return await self.cmd_follow_up(command)
            raise RpcError(
                "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
            )
        request_id = command.get("id")

        async def run() -> None:
            try:
                await self.session.prompt(text, images or None)
            except Exception as exc:
                self.emit(error_response("prompt", request_id, str(exc) or type(exc).__name__))

        self.prompt_task = asyncio.create_task(run())
        return NO_DATA

    async def cmd_steer(self, command: JsonObject) -> Reply:
        self.session.agent.steer(self._user_message(command))
        return NO_DATA

    async def cmd_follow_up(self, command: JsonObject) -> Reply:
        self.session.agent.follow_up(self._user_message(command))
        return NO_DATA

    async def cmd_abort(self, command: JsonObject) -> Reply:
        self.session.abort()
        await self.wait_idle()
        return NO_DATA

    # ------------------------------------------------------------------ state

    async def cmd_get_state(self, command: JsonObject) -> Reply:
        s = self.session
        state: JsonObject = {
            "model": model_json(s.model),
            "thinkingLevel": s.thinking_level,
            "isStreaming": self.running,
            "isCompacting": self.compacting,
            "steeringMode": s.agent.steering_mode,
            "followUpMode": s.agent.follow_up_mode,
            "sessionFile": str(s.session_file) if s.session_file else None,
            "sessionId": s.session_id,
            "autoCompactionEnabled": s.settings.compaction.enabled,
            "messageCount": len(s.messages),
            "pendingMessageCount": len(s.agent.queued_messages),
        }
        if s.session_name:
            state["sessionName"] = s.session_name
        return state

    async def cmd_get_messages(self, command: JsonObject) -> Reply:
        return {"messages": [m.to_json_dict() for m in self.session.messages]}

    # ------------------------------------------------------------------ models and thinking

    async def cmd_cycle_model(self, command: JsonObject) -> Reply:
        model = await self.session.models.cycle()
        if model is None:
            return None
        return {
            "model": model_json(model),
            "thinkingLevel": self.session.thinking_level,
            "isScoped": bool(self.session.settings.favorite_models),
        }

    async def cmd_get_available_models(self, command: JsonObject) -> Reply:
        return {"models": [model_json(m) for m in self.session.models.available()]}

    async def cmd_cycle_thinking_level(self, command: JsonObject) -> Reply:
        if not self.session.model.reasoning:
            return None
        return {"level": self.session.models.cycle_thinking()}

    async def cmd_handoff_preview(self, command: JsonObject) -> Reply:
        ref = text_field(command, "model")
        if "/" not in ref:
            raise RpcError('"model" must be "provider/id"')
        return self.session.models.handoff_preview(self._find_model(ref)).to_dict()

    # ------------------------------------------------------------------ queues, compaction, retry

    async def cmd_set_steering_mode(self, command: JsonObject) -> Reply:
        self.session.agent.steering_mode = self._queue_mode(command)
        return NO_DATA

    async def cmd_set_follow_up_mode(self, command: JsonObject) -> Reply:
        self.session.agent.follow_up_mode = self._queue_mode(command)
        return NO_DATA

    def _queue_mode(self, command: JsonMapping) -> QueueMode:
        mode = command.get("mode")
        for known in _QUEUE_MODES:
            if mode == known:
                return known
        raise RpcError('"mode" must be "all" or "one-at-a-time"')

    async def cmd_set_auto_compaction(self, command: JsonObject) -> Reply:
        self.session.settings.compaction.enabled = bool_field(command, "enabled")
        return NO_DATA

    async def cmd_set_auto_retry(self, command: JsonObject) -> Reply:
        self.session.settings.retry.enabled = bool_field(command, "enabled")
        return NO_DATA

    async def cmd_abort_retry(self, command: JsonObject) -> Reply:
        if self.retrying:
            self.session.abort()
        return NO_DATA

    # ------------------------------------------------------------------ bash

    async def cmd_bash(self, command: JsonObject) -> Reply:
        message = await self.session.run_bash(text_field(command, "command"))
        data: JsonObject = {
            "output": message.output,
            "exitCode": message.exit_code,
            "cancelled": message.cancelled,
            "truncated": message.truncated,
        }
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        return data

    async def cmd_abort_bash(self, command: JsonObject) -> Reply:
        self.session.abort_bash()
        return NO_DATA

    # ------------------------------------------------------------------ session

    async def cmd_get_session_stats(self, command: JsonObject) -> Reply:
        st = self.session.stats()
        return {
            "sessionFile": str(st.session_file) if st.session_file else None,
            "sessionId": st.session_id,
            "userMessages": st.user_messages,
            "assistantMessages": st.assistant_messages,
            "toolCalls": st.tool_calls,
            "toolResults": st.tool_results,
            "totalMessages": st.total_messages,
            "tokens": {
                "input": st.input_tokens,
                "output": st.output_tokens,
                "cacheRead": st.cache_read_tokens,
                "cacheWrite": st.cache_write_tokens,
                "total": st.total_tokens,
            },
            "cost": st.cost,
        }

    async def cmd_get_fork_messages(self, command: JsonObject) -> Reply:
        return {"messages": [{"entryId": eid, "text": text} for eid, text in self.session.fork_points()]}

    async def cmd_get_last_assistant_text(self, command: JsonObject) -> Reply:
        from baton.providers.messages import AssistantMessage

        for message in reversed(self.session.messages):
            if isinstance(message, AssistantMessage):
                return {"text": message.text}
        return {"text": None}

    async def cmd_get_commands(self, command: JsonObject) -> Reply:
        from baton.tui.modes.session_features import prompt_commands

        commands: list[JsonValue] = list(prompt_commands(self.session))
        return {"commands": commands}

    async def cmd_get_checkpoints(self, command: JsonObject) -> Reply:
        from baton.sessions.checkpoints.rpc import get_checkpoints

        return get_checkpoints(self.session)

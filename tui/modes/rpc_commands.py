"""The commands of RPC mode: pi's names and shapes, plus baton's ``handoff_preview``,
``set_approval``, ``rewind`` and ``get_checkpoints``.

Each handler takes the command object and returns the response's ``data`` (see
:meth:`RpcCommands.run`); raising :class:`rpc_mode.RpcError` (or any exception) makes an error
response with the message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton.providers.messages import ImageContent
    from baton.providers.models import Model
    from baton.sessions import CodingSession

_NO_DATA = object()
_QUEUE_MODES = ("all", "one-at-a-time")
Handler = Callable[[dict[str, Any]], Awaitable[Any]]


def _error(message: str) -> Exception:
    from baton.tui.modes.rpc_mode import RpcError

    return RpcError(message)


def _field(command: dict[str, Any], name: str, kind: type = str, *, required: bool = True) -> Any:
    value = command.get(name)
    if value is None:
        if required:
            raise _error(f'"{name}" is required')
        return None
    if kind is bool and not isinstance(value, bool):
        raise _error(f'"{name}" must be true or false')
    if not isinstance(value, kind):
        raise _error(f'"{name}" must be a {kind.__name__}')
    return value


def parse_images(raw: Any) -> list[ImageContent]:
    """pi's ``images`` field: ``[{"type": "image", "data": base64, "mimeType"}]``."""
    from pydantic import ValidationError

    from baton.providers.messages import ImageContent

    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _error('"images" must be a list of {"type": "image", "data", "mimeType"}')
    try:
        return [ImageContent.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise _error(f'"images": {exc.errors()[0]["msg"]}') from None


def model_json(model: Model) -> dict[str, Any]:
    """pi's Model object."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class RpcCommands:
    """Runs commands against one session; follows its events for ``isCompacting`` and retries."""

    def __init__(self, session: CodingSession, emit: Callable[[dict[str, Any]], None]) -> None:
        self.session = session
        self.emit = emit
        self.prompt_task: asyncio.Task[None] | None = None
        self.compacting = False
        self.retrying = False
        self._handlers: dict[str, Handler] = {
            name.removeprefix("cmd_"): getattr(self, name) for name in dir(self) if name.startswith("cmd_")
        }

    # ------------------------------------------------------------------ plumbing

    async def run(self, name: str, command: dict[str, Any]) -> tuple[Any, bool]:
        """Run command ``name``; returns (data, whether to include ``data`` even when null)."""
        handler = self._handlers.get(name)
        if handler is None:
            raise _error(f"Unknown command: {name}")
        data = await handler(command)
        if data is _NO_DATA:
            return None, False
        return data, True

    def observe(self, event: Any) -> None:
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

    def _find_model(self, provider: str, model_id: str) -> Model:
        ref = f"{provider}/{model_id}".lower()
        for model in self.session.models.available():
            if model.ref.lower() == ref:
                return model
        raise _error(f"Model not found: {provider}/{model_id}")

    def _user_message(self, command: dict[str, Any]) -> Any:
        from baton.providers.messages import TextContent, UserMessage

        text = _field(command, "message")
        images = parse_images(command.get("images"))
        if not images:
            return UserMessage(content=text)
        return UserMessage(content=[TextContent(text=text), *images])

    # ------------------------------------------------------------------ prompting

    async def cmd_prompt(self, command: dict[str, Any]) -> Any:
        text = _field(command, "message")
        images = parse_images(command.get("images"))
        behavior = command.get("streamingBehavior")
        if self.running:
            if behavior == "steer":
                return await self.cmd_steer(command)
            if behavior == "followUp":
                return await self.cmd_follow_up(command)
            raise _error(
                "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
            )
        request_id = command.get("id")

        async def run() -> None:
            try:
                await self.session.prompt(text, images or None)
            except Exception as exc:
                from baton.tui.modes.rpc_mode import error_response

                self.emit(error_response("prompt", request_id, str(exc) or type(exc).__name__))

        self.prompt_task = asyncio.create_task(run())
        return _NO_DATA

    async def cmd_steer(self, command: dict[str, Any]) -> Any:
        self.session.agent.steer(self._user_message(command))
        return _NO_DATA

    async def cmd_follow_up(self, command: dict[str, Any]) -> Any:
        self.session.agent.follow_up(self._user_message(command))
        return _NO_DATA

    async def cmd_abort(self, command: dict[str, Any]) -> Any:
        self.session.abort()
        await self.wait_idle()
        return _NO_DATA

    async def cmd_new_session(self, command: dict[str, Any]) -> Any:
        await self.session.new_session()
        return {"cancelled": False}

    # ------------------------------------------------------------------ state

    async def cmd_get_state(self, command: dict[str, Any]) -> Any:
        s = self.session
        state: dict[str, Any] = {
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

    async def cmd_get_messages(self, command: dict[str, Any]) -> Any:
        return {"messages": [m.to_json_dict() for m in self.session.messages]}

    # ------------------------------------------------------------------ models and thinking

    async def cmd_set_model(self, command: dict[str, Any]) -> Any:
        model = self._find_model(_field(command, "provider"), _field(command, "modelId"))
        await self.session.models.switch(model)
        return model_json(self.session.model)

    async def cmd_cycle_model(self, command: dict[str, Any]) -> Any:
        model = await self.session.models.cycle()
        if model is None:
            return None
        return {
            "model": model_json(model),
            "thinkingLevel": self.session.thinking_level,
            "isScoped": bool(self.session.settings.favorite_models),
        }

    async def cmd_get_available_models(self, command: dict[str, Any]) -> Any:
        return {"models": [model_json(m) for m in self.session.models.available()]}

    async def cmd_set_thinking_level(self, command: dict[str, Any]) -> Any:
        from baton.sessions.models import parse_thinking_level

        level = parse_thinking_level(command.get("level"))
        if level is None:
            raise _error('"level" must be one of off, minimal, low, medium, high, xhigh')
        self.session.models.set_thinking(level)
        return _NO_DATA

    async def cmd_cycle_thinking_level(self, command: dict[str, Any]) -> Any:
        if not self.session.model.reasoning:
            return None
        return {"level": self.session.models.cycle_thinking()}

    async def cmd_handoff_preview(self, command: dict[str, Any]) -> Any:
        ref: str = _field(command, "model")
        provider, sep, model_id = ref.partition("/")
        if not sep:
            raise _error('"model" must be "provider/id"')
        return self.session.models.handoff_preview(self._find_model(provider, model_id)).to_dict()

    # ------------------------------------------------------------------ queues, compaction, retry

    async def cmd_set_steering_mode(self, command: dict[str, Any]) -> Any:
        self.session.agent.steering_mode = self._queue_mode(command)
        return _NO_DATA

    async def cmd_set_follow_up_mode(self, command: dict[str, Any]) -> Any:
        self.session.agent.follow_up_mode = self._queue_mode(command)
        return _NO_DATA

    def _queue_mode(self, command: dict[str, Any]) -> Any:
        mode = command.get("mode")
        if mode not in _QUEUE_MODES:
            raise _error('"mode" must be "all" or "one-at-a-time"')
        return mode

    async def cmd_compact(self, command: dict[str, Any]) -> Any:
        focus = _field(command, "customInstructions", required=False)
        result = await self.session.compact(focus)
        return result.to_dict()

    async def cmd_set_auto_compaction(self, command: dict[str, Any]) -> Any:
        self.session.settings.compaction.enabled = _field(command, "enabled", bool)
        return _NO_DATA

    async def cmd_set_auto_retry(self, command: dict[str, Any]) -> Any:
        self.session.settings.retry.enabled = _field(command, "enabled", bool)
        return _NO_DATA

    async def cmd_abort_retry(self, command: dict[str, Any]) -> Any:
        if self.retrying:
            self.session.abort()
        return _NO_DATA

    # ------------------------------------------------------------------ bash

    async def cmd_bash(self, command: dict[str, Any]) -> Any:
        text = _field(command, "command")
        message = await self.session.run_bash(text)
        data: dict[str, Any] = {
            "output": message.output,
            "exitCode": message.exit_code,
            "cancelled": message.cancelled,
            "truncated": message.truncated,
        }
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        return data

    async def cmd_abort_bash(self, command: dict[str, Any]) -> Any:
        self.session.abort_bash()
        return _NO_DATA

    # ------------------------------------------------------------------ session

    async def cmd_get_session_stats(self, command: dict[str, Any]) -> Any:
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

    async def cmd_export_html(self, command: dict[str, Any]) -> Any:
        out = _field(command, "outputPath", required=False)
        path = await asyncio.to_thread(self.session.export_html, Path(out).expanduser() if out else None)
        return {"path": str(path)}

    async def cmd_switch_session(self, command: dict[str, Any]) -> Any:
        await self.session.switch_session(_field(command, "sessionPath"))
        return {"cancelled": False}

    async def cmd_fork(self, command: dict[str, Any]) -> Any:
        text = await self.session.fork(_field(command, "entryId"))
        return {"text": text, "cancelled": False}

    async def cmd_get_fork_messages(self, command: dict[str, Any]) -> Any:
        return {"messages": [{"entryId": eid, "text": text} for eid, text in self.session.fork_points()]}

    async def cmd_get_last_assistant_text(self, command: dict[str, Any]) -> Any:
        from baton.providers.messages import AssistantMessage

        for message in reversed(self.session.messages):
            if isinstance(message, AssistantMessage):
                return {"text": message.text}
        return {"text": None}

    async def cmd_set_session_name(self, command: dict[str, Any]) -> Any:
        name = _field(command, "name").strip()
        if not name:
            raise _error("Session name cannot be empty")
        self.session.set_name(name)
        return _NO_DATA

    async def cmd_get_commands(self, command: dict[str, Any]) -> Any:
        from baton.tui.modes.session_features import prompt_commands

        return {"commands": prompt_commands(self.session)}

    # ------------------------------------------------------------------ baton's own

    async def cmd_set_approval(self, command: dict[str, Any]) -> Any:
        return {"mode": self.session.permissions.set_mode(_field(command, "mode"))}

    async def cmd_get_checkpoints(self, command: dict[str, Any]) -> Any:
        from baton.sessions.checkpoints.rpc import get_checkpoints

        return get_checkpoints(self.session)

    async def cmd_rewind(self, command: dict[str, Any]) -> Any:
        from baton.sessions.checkpoints.rpc import rewind

        return await rewind(self.session, command)

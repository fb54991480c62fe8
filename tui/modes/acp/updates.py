"""Session and agent events → ACP ``session/update`` payloads, and a stored transcript replayed
as the same updates (``session/load``).

Text and thinking deltas become ``agent_message_chunk`` / ``agent_thought_chunk``; a tool call
appears as ``tool_call`` as soon as the model starts it (raw input then streams, throttled so a
long argument is not re-sent on every fragment), and ``tool_call_update`` carries its status,
locations and result content. After each answer, ``usage_update`` reports the context fill and
the session's cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from baton.providers.bounded_read import read_regular
from baton.tools import tool_type
from baton.tui.modes.acp.tool_info import (
    command_of,
    result_content,
    terminal_text,
    text_content,
    tool_kind,
    tool_locations,
    tool_title,
)

Update = dict[str, Any]
Send = Callable[[Update], None]
# Raw input of a streaming tool call is re-sent at most this often (seconds).
RAW_INPUT_INTERVAL = 0.1
# A file bigger than this is not read to show a write's "before" side.
_OLD_TEXT_LIMIT = 1 << 20


@dataclass
class _Call:
    name: str
    last_raw: float = 0.0
    old_text: str | None = None
    args: dict[str, Any] | None = None


def chunk(kind: str, text: str) -> Update:
    """``agent_message_chunk`` / ``agent_thought_chunk`` / ``user_message_chunk`` with text."""
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def image_chunk(kind: str, data: str, mime: str) -> Update:
    """A chunk holding an image."""
    return {"sessionUpdate": kind, "content": {"type": "image", "data": data, "mimeType": mime}}


def _read_old(path: str | None) -> str | None:
    if path is None:
        return None
    try:  # never a FIFO or device (opening one could block the server)
        data = read_regular(path, _OLD_TEXT_LIMIT)
    except OSError:  # absent, unreadable, not a regular file or too large: no old text
        return None
    return data.decode("utf-8", "replace")


class UpdateMapper:
    """Turns one session's events into updates for ``send`` (a synchronous writer)."""

    def __init__(self, cwd: str, send: Send, usage: Callable[[], Update | None] | None = None) -> None:
        self.cwd = cwd
        self.send = send
        self.usage = usage
        self._calls: dict[str, _Call] = {}
        self.terminals: dict[str, str] = {}
        """Tool call id → the editor terminal showing it (its content stays that terminal)."""

    def __call__(self, event: Any) -> None:
        handler = getattr(self, "_on_" + getattr(event, "type", ""), None)
        if handler is not None:
            handler(event)

    # ------------------------------------------------------------------ streaming

    def _on_message_update(self, event: Any) -> None:
        inner = event.assistant_message_event
        kind = inner.type
        if kind == "text_delta":
            self.send(chunk("agent_message_chunk", inner.delta))
        elif kind == "thinking_delta":
            self.send(chunk("agent_thought_chunk", inner.delta))
        elif kind in ("toolcall_start", "toolcall_delta", "toolcall_end"):
            block = inner.tool_call if kind == "toolcall_end" else inner.partial.content[inner.content_index]
            self._tool_call_streaming(kind, block)

    def _tool_call_streaming(self, kind: str, block: Any) -> None:
        call_id, name = getattr(block, "id", ""), getattr(block, "name", "")
        args = getattr(block, "arguments", None) or {}
        if not call_id:
            return
        state = self._calls.get(call_id)
        if state is None:
            state = self._calls[call_id] = _Call(name)
            self.send({
                "sessionUpdate": "tool_call", "toolCallId": call_id, "title": tool_title(name, args, self.cwd),
                "kind": tool_kind(name), "status": "pending", "rawInput": args,
                "locations": tool_locations(name, args, self.cwd),
            })
            state.last_raw = time.monotonic()
            return
        now = time.monotonic()
        if kind == "toolcall_delta" and now - state.last_raw < RAW_INPUT_INTERVAL:
            return
        state.last_raw = now
        self.send({
            "sessionUpdate": "tool_call_update", "toolCallId": call_id, "title": tool_title(name, args, self.cwd),
            "rawInput": args, "locations": tool_locations(name, args, self.cwd),
        })

    # ------------------------------------------------------------------ execution

    def _on_tool_execution_start(self, event: Any) -> None:
        name, args = event.tool_name, event.args or {}
        state = self._calls.get(event.tool_call_id)
        fields: Update = {
            "toolCallId": event.tool_call_id, "title": tool_title(name, args, self.cwd), "kind": tool_kind(name),
            "status": "in_progress", "rawInput": args, "locations": tool_locations(name, args, self.cwd),
        }
        if state is None:
            state = self._calls[event.tool_call_id] = _Call(name)
            self.send({"sessionUpdate": "tool_call", **fields})
        else:
            self.send({"sessionUpdate": "tool_call_update", **fields})
        state.args = args
        if isinstance(args.get("content"), str) and tool_type(name).changes_files():  # a whole file's new text
            locations = fields["locations"]
            state.old_text = _read_old(locations[0]["path"] if locations else None)

    def _on_tool_execution_update(self, event: Any) -> None:
        command = command_of(event.tool_name, event.args or {})
        text = "".join(getattr(b, "text", "") for b in event.partial_result.content)
        if command is None:
            if tool_type(event.tool_name).delegates and text:  # a subagent's progress, live
                self.send({"sessionUpdate": "tool_call_update", "toolCallId": event.tool_call_id,
                           "content": [text_content(text)]})
            return
        self.send({
            "sessionUpdate": "tool_call_update", "toolCallId": event.tool_call_id,
            "content": [text_content(terminal_text(command, text))],
        })

    def _on_tool_execution_end(self, event: Any) -> None:
        state = self._calls.pop(event.tool_call_id, None)
        args = (state.args if state else None) or {}
        details = event.result.details
        terminal = self.terminals.pop(event.tool_call_id, None)
        content = [{"type": "terminal", "terminalId": terminal}] if terminal else result_content(
            event.tool_name, args, self.cwd, event.result, event.is_error, state.old_text if state else None)
        update: Update = {
            "sessionUpdate": "tool_call_update", "toolCallId": event.tool_call_id,
            "status": "failed" if event.is_error else "completed",
            "content": content,
            "rawOutput": {"content": "".join(getattr(b, "text", "") for b in event.result.content),
                          "details": details if isinstance(details, dict) else None},
        }
        locations = tool_locations(event.tool_name, args, self.cwd, details)
        if locations:
            update["locations"] = locations
        self.send(update)

    def _on_agent_end(self, event: Any) -> None:
        """Calls the model started but that never ran (cancelled, or cut off by the length
        limit) are closed as failed, so the editor does not show them pending forever."""
        for call_id in list(self._calls):
            self._calls.pop(call_id)
            self.send({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed",
                       "content": [text_content("Not run: the turn ended before this call.")]})

    # ------------------------------------------------------------------ answers

    def _on_message_end(self, event: Any) -> None:
        if getattr(event.message, "role", "") == "assistant" and self.usage is not None:
            usage = self.usage()
            if usage is not None:
                self.send(usage)


def replay_updates(messages: list[Any], cwd: str) -> list[Update]:
    """The stored conversation as the updates a live run would have sent (for ``session/load``):
    user and assistant text, thinking, images, and each tool call with its final result."""
    from baton.agent.messages import BashExecutionMessage
    from baton.providers.messages import (
        AssistantMessage,
        TextContent,
        ThinkingContent,
        ToolResultMessage,
        UserMessage,
    )

    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    out: list[Update] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.extend(_user_chunks(message.content))
        elif isinstance(message, BashExecutionMessage):
            out.append(chunk("user_message_chunk", terminal_text(message.command, message.output, message.exit_code)))
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextContent):
                    if block.text:
                        out.append(chunk("agent_message_chunk", block.text))
                elif isinstance(block, ThinkingContent):
                    if block.thinking and not block.redacted:
                        out.append(chunk("agent_thought_chunk", block.thinking))
                else:
                    out.append(_replayed_call(block, results.get(block.id), cwd))
    return out


def _user_chunks(content: Any) -> list[Update]:
    if isinstance(content, str):
        return [chunk("user_message_chunk", content)] if content else []
    out: list[Update] = []
    for block in content or []:
        if getattr(block, "type", "") == "text" and block.text:
            out.append(chunk("user_message_chunk", block.text))
        elif getattr(block, "type", "") == "image":
            out.append(image_chunk("user_message_chunk", block.data, block.mime_type))
    return out


def _replayed_call(block: Any, result: Any, cwd: str) -> Update:
    name, args = block.name, block.arguments or {}
    update: Update = {
        "sessionUpdate": "tool_call", "toolCallId": block.id, "title": tool_title(name, args, cwd),
        "kind": tool_kind(name), "rawInput": args, "locations": tool_locations(name, args, cwd),
    }
    if result is None:
        update["status"] = "failed"
        update["content"] = [text_content("No result was recorded (the run was interrupted).")]
    else:
        update["status"] = "failed" if result.is_error else "completed"
        # The file's earlier text is not stored: a replayed write shows the whole new file.
        update["content"] = result_content(name, args, cwd, result, result.is_error, None)
    return update

"""A parent session on the Anthropic protocol whose subagents run on OpenAI Chat Completions, both
served by one replay server (the request's path says which protocol it speaks)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply

PARENT_API = "anthropic-messages"
CHILD_API = "openai-completions"
ChildScript = Callable[[dict[str, Any]], Reply]
"""The subagent's model: its request body (its protocol's: see :func:`protocol_of`) → the reply."""
SUBAGENT_MARK = "You are a subagent"
"""In every subagent's system prompt (sessions/subagents.py), never in the parent's requests."""


def protocol_of(body: dict[str, Any]) -> str:
    """The wire protocol a request body speaks (Anthropic bodies carry ``system`` apart)."""
    return PARENT_API if "system" in body else CHILD_API


def parent_model(server: ReplayServer) -> Model:
    return Model(id="parent-model", api=PARENT_API, provider="replay-a", base_url=server.url)


def child_model(server: ReplayServer) -> Model:
    return Model(id="child-model", api=CHILD_API, provider="replay-o", base_url=server.url + "/v1")


def write_agent(folder: Path, name: str, *, model: str | None = None, tools: str | None = None,
                body: str = "You look things up.") -> Path:
    """An agent file in Claude Code's format."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"name: {name}", f"description: The {name} agent"]
    if model is not None:
        lines.append(f"model: {model}")
    if tools is not None:
        lines.append(f"tools: {tools}")
    path = folder / f"{name}.md"
    path.write_text("\n".join([*lines, "---", body, ""]))
    return path


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results an Anthropic request carries, in order."""
    return [block for message in body["messages"] if isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_result"]


def task_calls_reply(calls: list[tuple[str, dict[str, Any]]]) -> Reply:
    """An Anthropic reply making the ``task`` calls ``(id, arguments)`` at once."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}]
    for index, (call_id, args) in enumerate(calls):
        events += [
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": call_id, "name": "task", "input": {}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}},
            {"type": "content_block_stop", "index": index},
        ]
    events += [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}},
               {"type": "message_stop"}]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Reply.sse(body)


class TwoProtocols:
    """The replay server's script: the parent's turns in order, the subagents' (known by their
    system prompt) by their body."""

    def __init__(self, parent: list[Reply], child: ChildScript) -> None:
        self.parent = list(parent)
        self.child = child
        self.parent_bodies: list[dict[str, Any]] = []
        self.child_bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.json()
        with self._lock:
            if SUBAGENT_MARK not in json.dumps(body):
                self.parent_bodies.append(body)
                return self.parent.pop(0) if self.parent else Reply.json_error(500, {"error": "no more parent turns"})
            self.child_bodies.append(body)
        return self.child(body)


def child_reads_then_answers(path: str, answer: Callable[[str], str]) -> ChildScript:
    """A subagent that reads ``path`` and then answers ``answer(what it read)``."""

    def script(body: dict[str, Any]) -> Reply:
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results:
            return Reply.sse(tool_call_reply(CHILD_API, "call_r1", "read", {"path": path}))
        content = results[-1]["content"]
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
        return Reply.sse(text_reply(CHILD_API, answer(text)))

    return script


async def open_parent(cwd: Path, server: ReplayServer, *, sessions: Path | None = None,
                      settings: dict[str, Any] | None = None, approval: str = "auto",
                      tools: list[str] | None = None) -> CodingSession:
    """A saved session (in ``sessions``) on the parent model, the child model known as an extra model."""
    return await CodingSession.open(SessionOptions(
        cwd=cwd, model=parent_model(server), api_key="parent-key",
        tools=tools if tools is not None else ["read", "bash", "edit", "write", "task"],
        session="new" if sessions is not None else "none", session_dir=sessions, context_files=False,
        preload_tokenizer=False, approval=approval, extra_models=[child_model(server)],
        settings=validate_settings({"retry": {"enabled": False}, **(settings or {})}),
    ))


def text_of(result: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in result["content"])

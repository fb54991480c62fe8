"""Running one scripted tool call through a real CodingSession against the replay server."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.permissions import ApprovalAnswer, ApprovalRequest
from baton.sessions.settings import validate_settings
from tests.provider_scripts import text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply

API = "openai-completions"


def replay_model(server: ReplayServer) -> Model:
    return Model(id="replay-model", api=API, provider="replay", baseUrl=server.url + "/v1")


@dataclass
class Outcome:
    """What one run produced."""

    result_text: str
    is_error: bool
    events: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    asked: list[ApprovalRequest] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def approvals(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "tool_approval"]


async def run_call(
    cwd: Path,
    tool: str,
    args: dict[str, Any],
    *,
    approval: str = "auto",
    answers: list[ApprovalAnswer] | None = None,
    settings: dict[str, Any] | None = None,
    extra_tools: list[Any] | None = None,
    tools: list[str] | None = None,
    read_project: bool = False,
    trust_project: bool | None = None,
    prepare: Callable[[CodingSession], object] | None = None,
) -> Outcome:
    """The model calls ``tool(args)`` once, then answers "done"; returns the tool result and events.

    ``answers``: the approver's answers in order (None: no approver, as in print mode).
    ``read_project``: read the project's own settings instead of ``settings``, trusted as
    ``trust_project`` says (True: for this run, False: never, None: as the user answered before).
    ``prepare``: called with the open session before the prompt."""
    replies = [Reply.sse(tool_call_reply(API, "call_1", tool, args)), Reply.sse(text_reply(API, "done"))]
    asked: list[ApprovalRequest] = []
    with ReplayServer(replies) as server:
        options = SessionOptions(
            cwd=cwd, model=replay_model(server), api_key="test-key", tools=tools or ["read", "bash", "edit", "write"],
            context_files=False, approval=approval, preload_tokenizer=False,
            settings=None if read_project else validate_settings({"retry": {"enabled": False},
                                                                                **(settings or {})}),
            trust_project=trust_project,
        )
        session = await CodingSession.open(options)
        session.agent.tools.extend(extra_tools or [])
        if prepare is not None:
            prepare(session)
        events: list[dict[str, Any]] = []
        session.subscribe(lambda e: events.append(e.to_dict()) if hasattr(e, "to_dict") else None)
        if answers is not None:
            queue = list(answers)

            async def approver(request: ApprovalRequest) -> ApprovalAnswer:
                asked.append(request)
                return queue.pop(0)

            session.permissions.approver = approver
        try:
            await asyncio.wait_for(session.prompt("go"), 60)
            entries = [e.model_dump(by_alias=True) for e in session.store.entries]
            warnings = list(session.warnings)
        finally:
            await session.close()
    result = next(e for e in events if e["type"] == "tool_execution_end")
    text = "".join(b.get("text", "") for b in result["result"]["content"])
    return Outcome(text, result["isError"], events, entries, asked, warnings)


@contextmanager
def counting_server() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on 127.0.0.1 recording every connection's first bytes (answers HTTP 200)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    seen.append(conn.recv(1024))
                    conn.sendall(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(2)
        sock.close()


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)

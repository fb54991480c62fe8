"""A local HTTP/1.1 server that replays scripted provider responses over a real socket.

It runs its own event loop in a background thread, so async tests, sync tests and subprocesses
(``baton -p`` pointed at ``server.url``) can all talk to it. Every request is recorded
(method, path, headers, JSON body). Replies can be chunked at any byte boundary, paced, cut off
mid-stream (connection dropped) or stalled (connection held open, nothing sent).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SHARED_DIR = Path(__file__).resolve().parents[2] / "shared"
PROVIDER_STREAMS = SHARED_DIR / "fixtures" / "provider-streams"
PI_SESSIONS = SHARED_DIR / "fixtures" / "pi-sessions"


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


@dataclass
class Reply:
    """One scripted response.

    ``chunks`` are written one by one (each as its own TCP write, as an HTTP chunk), ``delay``
    seconds apart. ``disconnect_after=N`` drops the connection after N chunks without finishing
    the body; ``stall_after=N`` sends N chunks and then holds the connection open silently.
    """

    chunks: list[bytes] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    delay: float = 0.0
    disconnect_after: int | None = None
    stall_after: int | None = None

    @classmethod
    def sse(cls, body: bytes | str, chunk_size: int | None = None, **kwargs: Any) -> Reply:
        """An event-stream reply of ``body``, optionally re-chunked every ``chunk_size`` bytes."""
        data = body.encode() if isinstance(body, str) else body
        return cls(chunks=rechunk(data, chunk_size) if chunk_size else [data], **kwargs)

    @classmethod
    def json_error(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
        """A JSON error response (e.g. 429 with ``retry-after``)."""
        hdrs = {"content-type": "application/json", **(headers or {})}
        return cls(chunks=[json.dumps(payload).encode()], status=status, headers=hdrs)


ReplyScript = list[Reply] | Callable[[RecordedRequest], Reply]


class ReplayServer:
    """Serve ``replies`` in order (or from a function of the request) on 127.0.0.1.

    Use as a context manager; ``url`` is ``http://127.0.0.1:<port>``. When a list runs out, the
    server answers 500 with a clear message, so a test sees an unexpected extra request.
    """

    def __init__(self, replies: ReplyScript | None = None) -> None:
        self.replies: ReplyScript = replies if replies is not None else []
        self.requests: list[RecordedRequest] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        """Base URL of the server."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ReplayServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Bind a free port and start serving in the background thread."""
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(timeout=10)

    def stop(self) -> None:
        """Close every connection and stop the thread."""
        fut = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
        fut.result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        for writer in list(self._writers):
            writer.close()
        if self._server is not None:
            self._server.close()
        handlers = [task for task in self._handlers if not task.done()]
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if callable(self.replies):
            return self.replies(request)
        if not self.replies:
            return Reply.json_error(500, {"error": {"message": "replay server: no reply scripted"}})
        return self.replies.pop(0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                keep_open = await self._respond(writer, self._next_reply(request))
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            try:
                writer.close()
            except Exception:
                pass

    async def _respond(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        head += ["transfer-encoding: chunked", "", ""]
        writer.write("\r\n".join(head).encode())
        await writer.drain()
        for i, chunk in enumerate(reply.chunks):
            if reply.disconnect_after is not None and i >= reply.disconnect_after:
                writer.transport.abort()
                return False
            if reply.stall_after is not None and i >= reply.stall_after:
                await asyncio.sleep(3600)
            if reply.delay and i:
                await asyncio.sleep(reply.delay)
            if chunk:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
        if reply.disconnect_after is not None and reply.disconnect_after <= len(reply.chunks):
            writer.transport.abort()
            return False
        if reply.stall_after is not None:
            await asyncio.sleep(3600)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    body = b""
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readline()).strip(), 16)
            if size == 0:
                await reader.readline()
                break
            parts.append(await reader.readexactly(size))
            await reader.readline()
        body = b"".join(parts)
    return RecordedRequest(method, path, headers, body)


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 529: "Overloaded"}


def rechunk(data: bytes, size: int) -> list[bytes]:
    """Split ``data`` every ``size`` bytes (size 1 = every byte boundary)."""
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def chunks_txt_to_sse(text: str, *, event_from_type: bool = False, done: bool = False) -> bytes:
    """Frame a Vercel ``.chunks.txt`` fixture (one JSON payload per line) as SSE.

    With ``event_from_type`` each event also gets an ``event:`` line named after the payload's
    ``type`` (as OpenAI Responses and Anthropic send); ``done`` appends ``data: [DONE]``."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if event_from_type:
            kind = json.loads(line).get("type")
            if kind:
                out.append(f"event: {kind}\n")
        out.append(f"data: {line}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def sse_events(lines: Iterable[dict[str, Any] | str], *, named: bool = False) -> bytes:
    """Build an SSE body from payloads (dicts become JSON; ``named`` adds ``event: <type>``)."""
    out: list[str] = []
    for item in lines:
        data = item if isinstance(item, str) else json.dumps(item)
        if named and isinstance(item, dict) and "type" in item:
            out.append(f"event: {item['type']}\n")
        out.append(f"data: {data}\n\n")
    return "".join(out).encode()

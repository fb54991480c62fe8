"""A raw JSON-lines client for ``baton --mode rpc`` running as a subprocess."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.tui.cli_harness import baton_command, baton_env


class RpcProcess:
    """``baton --mode rpc`` with a reader thread collecting every stdout line (parsed)."""

    def __init__(self, home: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            baton_command("--mode", "rpc", *args), cwd=cwd, env=baton_env(home, **(env or {})),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.lines: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._used: set[int] = set()
        self._start = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        self._next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            self._queue.put(json.loads(line))  # every stdout line must be JSON
        self._queue.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, command: dict[str, Any]) -> str:
        """Send ``command`` with a fresh id; returns the id."""
        self._next_id += 1
        request_id = f"r{self._next_id}"
        self.send_raw((json.dumps({"id": request_id, **command}) + "\n").encode())
        return request_id

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        """The first line not matched by an earlier wait for which ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            for i in range(self._start, len(self.lines)):
                if i not in self._used and predicate(self.lines[i]):
                    self._used.add(i)
                    return self.lines[i]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out; last lines: {self.lines[-5:]}")
            try:
                item = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if item is None:
                raise AssertionError(f"baton exited; last lines: {self.lines[-5:]}")
            self.lines.append(item)

    def response(self, request_id: str, timeout: float = 30) -> dict[str, Any]:
        """The response to ``request_id``."""
        return self.wait_for(lambda m: m.get("type") == "response" and m.get("id") == request_id, timeout)

    def call(self, command: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Send and wait for the response."""
        return self.response(self.send(command), timeout)

    def event(self, kind: str, timeout: float = 30) -> dict[str, Any]:
        """The next event of type ``kind``."""
        return self.wait_for(lambda m: m.get("type") == kind, timeout)

    def skip_seen(self) -> None:
        """Later waits only look at lines that arrive from now on (or are still unread)."""
        self._start = len(self.lines)

    def close_stdin(self, timeout: float = 30) -> int:
        """EOF on stdin; returns the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._thread.join(timeout=5)
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.lines.append(item)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

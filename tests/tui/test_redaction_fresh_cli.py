"""The real program keeps what redaction read from models.json between tool results: a key the
file gains between two results — a new literal key, then a rewrite of the same size with the old
modification time — never reaches the output, the next request or the session file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.key_leaks import leaks
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

API = "openai-completions"
FIRST = "acme-first-key-Rb4Tn8Wq2Lz6Xc0V"
SECOND = "acme-other-key-Mh3Jk7Pq1Ws5Ze9Y"


def _printf(key: str) -> dict[str, Any]:
    """A bash call printing ``key`` without the call itself holding it."""
    return {"command": f"printf '%s%s\\n' '{key[:10]}' '{key[10:]}'"}


def test_a_key_models_json_gains_between_two_results_is_never_stored_or_sent(home: Path, workdir: Path) -> None:
    assert len(FIRST) == len(SECOND)
    path = home / "models.json"
    providers: dict[str, Any] = {}
    seen: list[int] = []

    def acme(key: str) -> dict[str, Any]:
        return {"baseUrl": "http://127.0.0.1:9", "api": API, "apiKey": key, "models": [{"id": "m"}]}

    def reply(request: RecordedRequest) -> Reply:
        turn = len(seen)
        seen.append(turn)
        if turn == 1:  # after the first result: a new literal key
            write_models_json(home, {**providers, "acme": acme(FIRST)})
        elif turn == 2:  # after the second: the same size, the old modification time
            before = path.stat()
            write_models_json(home, {**providers, "acme": acme(SECOND)})
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
            assert path.stat().st_size == before.st_size
        if turn == 0:
            return Reply.sse(tool_call_reply(API, "call_0", "bash", {"command": "echo warm"}))
        if turn < 3:
            return Reply.sse(tool_call_reply(API, f"call_{turn}", "bash", _printf([FIRST, SECOND][turn - 1])))
        return Reply.sse(text_reply(API, "Done."))

    with ReplayServer(reply) as server:
        providers["replay"] = models_json_provider(API, server.url)
        write_models_json(home, providers)
        result = run_baton(home, workdir, "-p", "--mode", "json", "--approval", "full",
                           "--model", "replay/replay-model", "go")
        requests = [json.dumps(r.json()) for r in server.requests]
    assert result.returncode == 0, result.stderr
    assert len(requests) == 4
    files = session_files(home)
    results = [m for e in read_entries(files[0]) if e.get("type") == "message"
               for m in [e["message"]] if m["role"] == "toolResult"]
    assert ["".join(b.get("text", "") for b in m["content"]).strip() for m in results] == \
        ["warm", "[redacted]", "[redacted]"]
    outputs = {f"request {i}": body for i, body in enumerate(requests)}
    outputs.update({"stdout": result.stdout, "session": files[0].read_text()})
    assert leaks(outputs, FIRST) == []
    assert leaks(outputs, SECOND) == []

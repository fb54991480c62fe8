"""A local Ollama server's models are listed and selectable (faked by the replay server)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.provider_scripts import text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import run_baton


def fake_ollama(request: RecordedRequest) -> Reply:
    if request.path == "/api/tags":
        return Reply(chunks=[json.dumps({"models": [{"name": "qwen2.5-coder:0.5b"}]}).encode()],
                     headers={"content-type": "application/json"})
    if request.path == "/api/show":
        info = {"capabilities": ["completion", "tools"], "model_info": {"qwen2.context_length": 32768}}
        return Reply(chunks=[json.dumps(info).encode()], headers={"content-type": "application/json"})
    if request.path == "/v1/chat/completions":
        return Reply.sse(text_reply("openai-completions", "Hello from Ollama."))
    return Reply.json_error(404, {"error": f"no route {request.path}"})


def test_ollama_models_are_listed_and_selectable(tmp_path: Path, home: Path) -> None:
    with ReplayServer(fake_ollama) as server:
        host = server.url.removeprefix("http://")
        listing = run_baton(home, tmp_path, "--list-models", "ollama", OLLAMA_HOST=host)
        answer = run_baton(home, tmp_path, "-p", "--model", "ollama/qwen2.5-coder:0.5b", "hi", OLLAMA_HOST=host)
        chat = [r for r in server.requests if r.path == "/v1/chat/completions"]
    assert listing.returncode == 0, listing.stderr
    assert "ollama/qwen2.5-coder:0.5b" in listing.stdout and "32.8K" in listing.stdout
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == "Hello from Ollama.\n"
    assert len(chat) == 1 and chat[0].json()["model"] == "qwen2.5-coder:0.5b"

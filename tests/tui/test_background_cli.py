"""Background commands in the real program: a model (the replay server) starts a server in the
background and talks to it from a later call; nothing it started outlives baton, however baton
ends (a normal exit, SIGKILL)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from baton.tools.sandbox import probe
from tests.process_helpers import needs_proc, processes_with, wait_until
from tests.provider_scripts import models_json_provider, parallel_calls_reply, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_command, baton_env, read_entries, run_baton, session_files, write_models_json

API = "openai-completions"
SANDBOX = probe()
APPROVALS = [
    pytest.param("auto", marks=pytest.mark.skipif(not SANDBOX.available, reason=f"no sandbox: {SANDBOX.reason}"),
                 id="sandboxed"),
    pytest.param("full", id="unsandboxed"),
]

SERVER = """
import http.server, socketserver
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from the background server"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        print("served", self.path, flush=True)
with socketserver.TCPServer(("127.0.0.1", 0), Hello) as httpd:
    open("port.tmp", "w").write(str(httpd.server_address[1]))
    __import__("os").rename("port.tmp", "port.txt")
    print("listening", flush=True)
    httpd.serve_forever()
"""
CLIENT = ("for i in $(seq 100); do [ -s port.txt ] && break; sleep 0.1; done; "
          "python3 -c \"import urllib.request; "
          "print(urllib.request.urlopen('http://127.0.0.1:' + open('port.txt').read() + '/page').read().decode())\"")


def _tool_texts(request_body: dict[str, Any]) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in request_body["messages"] if m["role"] == "tool"]


@needs_proc
@pytest.mark.parametrize("approval", APPROVALS)
def test_a_server_started_in_the_background_answers_a_later_call(home: Path, workdir: Path, approval: str) -> None:
    (workdir / "serve.py").write_text(SERVER)
    marker = f"serve.py {uuid.uuid4().hex}"
    replies = [
        Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": f"exec python3 {marker}",
                                                          "run_in_background": True})),
        Reply.sse(tool_call_reply(API, "call_2", "bash", {"command": CLIENT})),
        Reply.sse(tool_call_reply(API, "call_3", "bash_output", {"bash_id": "bash_1"})),
        Reply.sse(tool_call_reply(API, "call_4", "kill_shell", {"shell_id": "bash_1"})),
        Reply.sse(text_reply(API, "Done.")),
    ]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--approval", approval, "--model", "replay/replay-model", "serve")
        assert result.returncode == 0, result.stderr
        tool_texts = _tool_texts(server.requests[-1].json())
    assert "Command running in background with ID: bash_1" in tool_texts[0]
    assert "hello from the background server" in tool_texts[1], tool_texts[1]
    assert "listening" in tool_texts[2] and "served /page" in tool_texts[2], tool_texts[2]
    assert "Killed background shell bash_1" in tool_texts[3], tool_texts[3]
    assert not processes_with(marker), "the server ended with its shell"


def _sleeper(name: str) -> str:
    """A command sleeping 1000 s whose command line holds ``name``."""
    return f"python3 -c 'import time; time.sleep(1000)' {name}"


def _kill_marked(marker: str) -> None:
    for process in processes_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)


def _three_sleepers(marker: str) -> list[tuple[str, str, dict[str, Any]]]:
    # `setsid` and a double fork try to leave the process group; `trap '' TERM` ignores SIGTERM.
    commands = [_sleeper(f"{marker}-a"), f"setsid {_sleeper(f'{marker}-b')} & wait",
                f"trap '' TERM; ({_sleeper(f'{marker}-c')} &); {_sleeper(f'{marker}-d')}"]
    return [(f"call_{i}", "bash", {"command": c, "run_in_background": True}) for i, c in enumerate(commands)]


def _count_command(marker: str) -> str:
    """Waits until the four sleepers run (as the sandbox sees them), then says how many."""
    return (f"for i in $(seq 100); do n=$(pgrep -f 'time.sleep.1000. {marker}' | wc -l); [ $n -ge 4 ] && break; "
            "sleep 0.1; done; echo running: $n")


@needs_proc
@pytest.mark.parametrize("approval", APPROVALS)
def test_background_commands_end_when_baton_exits(home: Path, workdir: Path, approval: str) -> None:
    marker = uuid.uuid4().hex
    replies = [Reply.sse(parallel_calls_reply(_three_sleepers(marker))),
               Reply.sse(tool_call_reply(API, "call_9", "bash", {"command": _count_command(marker)})),
               Reply.sse(text_reply(API, "Leaving them running."))]
    try:
        with ReplayServer(replies) as server:
            write_models_json(home, {"replay": models_json_provider(API, server.url)})
            result = run_baton(home, workdir, "-p", "--approval", approval, "--model", "replay/replay-model", "go")
            assert result.returncode == 0, result.stderr
            counted = _tool_texts(server.requests[-1].json())[-1]
        assert int(counted.rpartition("running: ")[2].strip('"\\n ')) >= 4, counted
        assert wait_until(lambda: not processes_with(marker), timeout=10), processes_with(marker)
    finally:
        _kill_marked(marker)


@needs_proc
@pytest.mark.parametrize("approval", APPROVALS)
def test_background_commands_end_when_baton_is_killed(home: Path, workdir: Path, approval: str) -> None:
    marker = uuid.uuid4().hex
    replies = [Reply.sse(parallel_calls_reply(_three_sleepers(marker))),
               Reply.sse(tool_call_reply(API, "call_9", "bash", {"command": _sleeper(f"{marker}-fg")})),
               Reply.sse(text_reply(API, "never"))]
    try:
        with ReplayServer(replies) as server:
            write_models_json(home, {"replay": models_json_provider(API, server.url)})
            baton = subprocess.Popen(
                baton_command("-p", "--approval", approval, "--model", "replay/replay-model", "go"),
                cwd=workdir, env=baton_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE)
            try:
                names = [f"{marker}-{s}" for s in "abcd"] + [f"{marker}-fg"]
                assert wait_until(lambda: all(processes_with(n) for n in names), timeout=30), \
                    [p.cmdline for p in processes_with(marker)]
                os.kill(baton.pid, signal.SIGKILL)
                baton.wait(10)
            finally:
                if baton.poll() is None:
                    baton.kill()
                    baton.wait(10)
        background = [f"{marker}-{s}" for s in "abcd"]
        assert wait_until(lambda: not any(processes_with(n) for n in background), timeout=10), \
            [p.cmdline for p in processes_with(marker)]
    finally:
        _kill_marked(marker)


@needs_proc
def test_a_resumed_session_says_which_background_commands_were_lost(home: Path, workdir: Path) -> None:
    marker = uuid.uuid4().hex
    replies = [Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": _sleeper(marker),
                                                                 "run_in_background": True})),
               Reply.sse(text_reply(API, "Started.")),
               Reply.sse(tool_call_reply(API, "call_2", "bash_output", {"bash_id": "bash_1"})),
               Reply.sse(text_reply(API, "Gone."))]
    try:
        with ReplayServer(replies) as server:
            write_models_json(home, {"replay": models_json_provider(API, server.url)})
            first = run_baton(home, workdir, "-p", "--approval", "full", "--model", "replay/replay-model", "go")
            assert first.returncode == 0, first.stderr
            [path] = session_files(home)
            started = [e for e in read_entries(path) if e.get("customType") == "background_process"]
            assert [e["data"]["state"] for e in started] == ["running", "lost"], started
            second = run_baton(home, workdir, "-p", "--approval", "full", "--model", "replay/replay-model", "-c",
                               "again")
            assert second.returncode == 0, second.stderr
            assert "Background processes lost when the baton that ran them ended: bash_1 (python3 -c" \
                in second.stderr, second.stderr
            tool_text = _tool_texts(server.requests[-1].json())[-1]
        assert "bash_1 was lost" in tool_text, tool_text
    finally:
        _kill_marked(marker)

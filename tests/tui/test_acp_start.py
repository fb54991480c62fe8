"""``baton --mode acp`` from spawn to the first prompt: ``initialize`` answered before the session
modules load, ``session/new`` before the session opens (and before the ACP SDK loads), and what
loads behind the answers (the session, the SDK, the sandbox probe's result, the editor's MCP
servers) in place before the first tool runs.

The start-up answers must be the bytes the SDK's path gives, and the answers baton gave before
the start-up was made lazy (``tests/fixtures/acp_start_answers.json``, recorded with
:func:`start_up_lines` for the same inputs from 5b165d7, and again from eecd272 — the session
opened before the answer — when session/new gained the approval modes)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import baton_command, baton_env, stop_if_running, write_models_json  # noqa: E402

AM = "anthropic-messages"
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "acp_start_answers.json"
MCP_SERVER_APP = Path(__file__).resolve().parents[1] / "tools" / "mcp" / "server_app.py"
INITIALIZE = {"protocolVersion": 1, "clientInfo": {"name": "an-editor", "version": "1.0"},
              "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}


@contextmanager
def _acp_process(argv: list[str], workdir: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """baton on pipes in ``workdir``; once the body is done, its stdin closes and it must exit 0
    (killed if it is still running after a failure)."""
    proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        yield proc
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        stop_if_running(proc)


def _request(proc: subprocess.Popen[bytes], request_id: int, method: str, params: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
                     + b"\n")
    proc.stdin.flush()


def _lines_until_answer(proc: subprocess.Popen[bytes], request_id: int) -> list[bytes]:
    """Every line up to and including the answer to ``request_id``, as written."""
    assert proc.stdout is not None
    lines: list[bytes] = []
    while True:
        line = proc.stdout.readline()
        assert line, "baton closed stdout"
        lines.append(line)
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return lines


def _normalised(line: bytes, session_id: str, request_id: int) -> str:
    """A line with what differs between runs (the session id, the request id, the version) fixed."""
    from baton import __version__

    text = line.decode().replace(session_id, "SESSION-ID").replace(f'"version":"{__version__}"', '"version":"VERSION"')
    return text.replace(f'"id":{request_id},', '"id":"ID",')


def start_up_lines(home: Path, workdir: Path, *args: str, again: bool = False, **env: str) -> dict[str, str]:
    """``initialize`` and ``session/new`` (then the first update after it, the commands), as the
    bytes baton writes, normalised; with ``again``, the same two requests once more, which the
    SDK's connection answers (keys ending ``-sdk``)."""
    answers: dict[str, str] = {}
    with _acp_process(baton_command("--mode", "acp", *args), workdir, baton_env(home, **env)) as proc:
        for suffix, first_id in (("", 1), ("-sdk", 3)) if again else (("", 1),):
            _request(proc, first_id, "initialize", INITIALIZE)
            (init,) = _lines_until_answer(proc, first_id)
            _request(proc, first_id + 1, "session/new", {"cwd": str(workdir), "mcpServers": []})
            (new,) = _lines_until_answer(proc, first_id + 1)
            session_id = json.loads(new)["result"]["sessionId"]
            assert proc.stdout is not None
            commands = proc.stdout.readline()
            answers["initialize" + suffix] = _normalised(init, session_id, first_id)
            answers["session/new" + suffix] = _normalised(new, session_id, first_id + 1)
            answers["commands" + suffix] = _normalised(commands, session_id, -1)
    return answers


def _replay_model(home: Path) -> None:
    """A models.json model with a key and thinking levels (nothing listens at its address: the
    start-up never calls it)."""
    write_models_json(home, {"replay-am": models_json_provider(AM, "http://127.0.0.1:9", reasoning=True)})


def test_start_up_answers_are_the_bytes_the_sdk_path_gives(home: Path, workdir: Path) -> None:
    _replay_model(home)
    answers = start_up_lines(home, workdir, "--model", "replay-am/replay-model", again=True)
    for name in ("initialize", "session/new", "commands"):
        assert answers[name] == answers[f"{name}-sdk"]
    assert '"availableModels"' in answers["session/new"] and '"thinking"' in answers["session/new"]


@pytest.mark.parametrize("model", ["demo/baton-demo", "replay-am/replay-model"])
def test_start_up_answers_are_those_baton_gave_before(home: Path, workdir: Path, model: str) -> None:
    _replay_model(home)
    answers = start_up_lines(home, workdir, "--model", model)
    assert answers == json.loads(GOLDEN.read_text())[model]


class ApprovingEditor:
    """An editor that allows each permission request once and records updates and requests."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.asked: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.asked.append(tool_call.tool_call_id)
        return acp.RequestPermissionResponse(outcome=acp.schema.AllowedOutcome(outcome="selected",
                                                                              option_id="allow_once"))


def test_the_first_prompt_straight_after_session_new_runs_an_mcp_tool_behind_the_permission_gate(
        home: Path, workdir: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    replies = [Reply.sse(tool_call_reply(AM, "toolu_mcp", "mcp__editor__shout", {"text": "hello"})),
               Reply.sse(text_reply(AM, "Shouted."))]

    async def story() -> tuple[ApprovingEditor, str]:
        client = ApprovingEditor()
        cmd = baton_command("--mode", "acp", "--model", "replay-am/replay-model", "--approval", "ask")
        async with spawn_agent_process(client, cmd[0], *cmd[1:], env=baton_env(home), cwd=str(workdir)) as (conn, _):
            await conn.initialize(protocol_version=1)
            server = acp.schema.McpServerStdio(
                name="editor", command=sys.executable, args=[str(MCP_SERVER_APP), "stdio"],
                env=[acp.schema.EnvVariable(name="MCP_TEST_MARKERS", value=str(markers)),
                     acp.schema.EnvVariable(name="MCP_TEST_NAME", value="editor")])
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[server])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("shout hello")])
        return client, result.stop_reason

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client, stop_reason = asyncio.run(story())
        first, second = (json.dumps(r.json()) for r in server.requests)
    assert stop_reason == "end_turn"
    assert "mcp__editor__shout" in first  # the editor's server was connected for the first request
    assert client.asked == ["toolu_mcp"]  # the permission policy was in place: the editor was asked
    assert (markers / "calls").read_text() == "shout hello\n" and "HELLO" in second
    assert any(u.get("sessionUpdate") == "available_commands_update" for u in client.updates)


def test_without_a_key_the_editor_gets_clean_errors_and_the_agent_goes_on(home: Path, workdir: Path) -> None:
    for args in ((), ("--model", "keyless/m")):
        if args:
            write_models_json(home, {"keyless": {"baseUrl": "https://keyless.invalid/v1", "api": "openai-completions",
                                                 "models": [{"id": "m", "contextWindow": 8000, "maxTokens": 100}]}})
        with _acp_process(baton_command("--mode", "acp", *args), workdir, baton_env(home)) as proc:
            _request(proc, 1, "initialize", INITIALIZE)
            _lines_until_answer(proc, 1)
            answers = []
            for request_id in (2, 3):  # the fast path, then the SDK's
                _request(proc, request_id, "session/new", {"cwd": str(workdir), "mcpServers": []})
                answers.append(json.loads(_lines_until_answer(proc, request_id)[-1]))
            for answer in answers:  # no model has a key, or the one named has none: said at session/new
                message = answer["error"]["message"]
                assert answer["error"]["code"] == -32000 and "API key" in message
                assert ("keyless" in message) == bool(args)
            _request(proc, 5, "session/list", {"cwd": str(workdir)})
            assert "result" in json.loads(_lines_until_answer(proc, 5)[-1])


MODULES_AT_ANSWERS = """
import json, sys
import baton.tui.modes.acp.transport as transport

seen = {}
send_now = transport.StdioTransport.send_now

def record(self, message):
    if message.get("id") in (1, 2) and "method" not in message:
        seen[message["id"]] = sorted(k for k, v in sys.modules.items() if v is not None)  # None: import blocked
    send_now(self, message)

transport.StdioTransport.send_now = record
from baton.tui.cli.main import main
code = main(["--mode", "acp", "--model", "demo/baton-demo"])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "initialize": seen.get(1), "session/new": seen.get(2)}, out)
"""
HEAVY_AT_INITIALIZE = ("pydantic", "baton.providers.messages", "baton.providers.models", "baton.agent.agent",
                       "baton.sessions.settings", "baton.sessions.coding_session", "baton.tools.bash",
                       "baton.tui.modes.acp.session")
"""What ``initialize`` is answered without: the validation library, the models, the session."""
HEAVY_AT_SESSION_NEW = ("acp", "textual", "httpx", "httpcore", "mcp", "tiktoken", "anthropic", "openai",
                        "baton.sessions.coding_session", "baton.agent.agent", "baton.sessions.entries",
                        "baton.sessions.store", "baton.sessions.permissions", "baton.tools.bash", "baton.tools.sandbox",
                        "baton.tui.modes.acp.session", "baton.providers.messages")
"""What ``session/new`` is answered without: the ACP SDK (its schema is a few hundred pydantic
models), the UI, the HTTP client, the MCP SDK (no server configured), the tokenizer, the message
model (the model descriptions need only its base) — and the session itself (its store, agent,
tools, permissions and sandbox), which opens behind the answer."""


def _loaded(modules: list[str], heavy: tuple[str, ...]) -> list[str]:
    return [name for name in heavy if any(m == name or m.startswith(name + ".") for m in modules)]


def test_the_answers_wait_for_no_heavy_module(home: Path, workdir: Path, tmp_path: Path) -> None:
    report = tmp_path / "modules.json"
    with _acp_process([sys.executable, "-c", MODULES_AT_ANSWERS, str(report)], workdir, baton_env(home)) as proc:
        _request(proc, 1, "initialize", INITIALIZE)
        _lines_until_answer(proc, 1)
        _request(proc, 2, "session/new", {"cwd": str(workdir), "mcpServers": []})
        _lines_until_answer(proc, 2)
    seen = json.loads(report.read_text())
    assert seen["code"] == 0
    assert _loaded(seen["initialize"], HEAVY_AT_INITIALIZE) == []
    assert _loaded(seen["session/new"], HEAVY_AT_SESSION_NEW) == []
    assert "baton.sessions.settings" in seen["session/new"]  # answered from the settings, read as always


GC_AT_START_UP = """
import gc, json, sys, importlib.abc
seen = {}
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "baton.tui.cli.launch":
            seen.setdefault("launch imported", gc.isenabled())
        return None
sys.meta_path.insert(0, Watch())
import baton.tui.modes.acp.transport as transport
send_now = transport.StdioTransport.send_now
def record(self, message):
    if "id" in message and "method" not in message:
        seen.setdefault(f"answer {message['id']}", gc.isenabled())
    send_now(self, message)
transport.StdioTransport.send_now = record
from baton.tui.cli.main import main
try:
    seen["code"] = main(sys.argv[2:])
except SystemExit as exc:
    seen["code"] = exc.code
seen["after"] = gc.isenabled()
with open(sys.argv[1], "w") as out:
    json.dump(seen, out)
"""


@pytest.mark.parametrize("requests", [2, 1, 0], ids=["session opened", "closed after initialize", "closed at once"])
def test_the_collector_waits_from_the_start_until_the_first_session_and_comes_back(
        home: Path, workdir: Path, tmp_path: Path, requests: int) -> None:
    report = tmp_path / "gc.json"
    argv = [sys.executable, "-c", GC_AT_START_UP, str(report), "--mode", "acp", "--model", "demo/baton-demo"]
    with _acp_process(argv, workdir, baton_env(home)) as proc:
        if requests >= 1:
            _request(proc, 1, "initialize", INITIALIZE)
            _lines_until_answer(proc, 1)
        if requests >= 2:
            _request(proc, 2, "session/new", {"cwd": str(workdir), "mcpServers": []})
            _lines_until_answer(proc, 2)
    seen = json.loads(report.read_text())
    assert seen["code"] == 0
    assert seen["launch imported"] is False  # paused before the start-up's imports
    assert [seen[f"answer {n}"] for n in range(1, requests + 1)] == [False] * requests
    assert seen["after"] is True


def test_the_collector_comes_back_at_the_first_error_answer(home: Path, workdir: Path, tmp_path: Path) -> None:
    """An error answer leaves reference cycles (the exception and its frames): an editor that keeps
    sending failing start-up requests must not keep the collector paused."""
    report = tmp_path / "gc.json"
    argv = [sys.executable, "-c", GC_AT_START_UP, str(report), "--mode", "acp", "--model", "demo/baton-demo"]
    with _acp_process(argv, workdir, baton_env(home)) as proc:
        _request(proc, 1, "initialize", {"protocolVersion": "one"})
        assert "error" in json.loads(_lines_until_answer(proc, 1)[-1])
        _request(proc, 2, "initialize", INITIALIZE)
        _lines_until_answer(proc, 2)
    seen = json.loads(report.read_text())
    assert seen["answer 1"] is True and seen["answer 2"] is True and seen["after"] is True


@pytest.mark.parametrize("argv", [["--mode", "acp", "--no-such-option"], ["--mode=acp", "--list-models", "zzz"]],
                         ids=["usage error", "a command that exits"])
def test_the_collector_comes_back_when_acp_mode_never_starts(home: Path, workdir: Path, tmp_path: Path,
                                                             argv: list[str]) -> None:
    report = tmp_path / "gc.json"
    subprocess.run([sys.executable, "-c", GC_AT_START_UP, str(report), *argv], cwd=workdir, env=baton_env(home),
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert json.loads(report.read_text())["after"] is True


def test_a_session_that_fails_to_open_behind_its_answer_is_told_and_the_agent_goes_on(
        home: Path, workdir: Path) -> None:
    """The tool list is read as the session opens, behind the answer: the editor gets a notice
    naming the cause, each request for the session an error naming it, and the agent serves on."""
    _replay_model(home)
    command = baton_command("--mode", "acp", "--model", "replay-am/replay-model", "--tools", "no_such_tool")
    with _acp_process(command, workdir, baton_env(home)) as proc:
        _request(proc, 1, "initialize", INITIALIZE)
        _lines_until_answer(proc, 1)
        _request(proc, 2, "session/new", {"cwd": str(workdir), "mcpServers": []})
        session_id = json.loads(_lines_until_answer(proc, 2)[-1])["result"]["sessionId"]
        _request(proc, 3, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        lines = [json.loads(line) for line in _lines_until_answer(proc, 3)]
        updates = [m["params"] for m in lines if m.get("method") == "session/update"]
        notices = [u["update"] for u in updates
                   if u["sessionId"] == session_id and u["update"].get("title") == "Session not opened"]
        assert len(notices) == 1 and "no_such_tool" in json.dumps(notices[0])
        error = lines[-1]["error"]
        assert session_id in error["message"] and "no_such_tool" in error["message"]
        _request(proc, 4, "session/set_config_option",
                 {"sessionId": session_id, "configId": "thinking", "value": "low"})
        assert "no_such_tool" in json.loads(_lines_until_answer(proc, 4)[-1])["error"]["message"]
        _request(proc, 5, "session/close", {"sessionId": session_id})
        assert json.loads(_lines_until_answer(proc, 5)[-1])["result"] == {}
        _request(proc, 6, "session/list", {"cwd": str(workdir)})
        assert "result" in json.loads(_lines_until_answer(proc, 6)[-1])

"""Keys in baton's own outputs: each exit gets a key put into it, and every output is searched
for every encoding of it (``tests/key_leaks.py``).

Exits: provider HTTP and stream errors, the RPC stream and ``rpc.log``, ``acp.log``, the HTML
and Markdown export, tracebacks and last-resort log records, ``--list-models``, the one-line
CLI error naming a failed ``!command`` key, and the app's start-up notices and ``/model`` picker.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.key_leaks import leaks
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_command, baton_env, run_baton, session_files, write_models_json
from tests.tui.rpc_client import RpcProcess

API = "openai-completions"
KEY = "sk-proj-Rt5+Yu7/Io9Pa1Sd3Fg5Hj7Kl9Zx2Cv4Bn6"
SECRET = "Vault-Pw-4Tz8Lm2Qs6Wx"  # a credential variable's value (DB_PASSWORD)


def _encoded(value: str) -> str:
    """``value`` as a hostile server or a failing command would print it: all at once."""
    data = value.encode()
    folded = "\n".join(value[i:i + 7] for i in range(0, len(value), 7))
    return (f"raw {value} | b64 {base64.b64encode(b'xy' + data).decode()} | "
            f"url {quote(value, safe='')} | HEX {data.hex().upper()} | lower {value.lower()} | fold {folded}")


def _provider(server: ReplayServer) -> dict[str, object]:
    provider = models_json_provider(API, server.url)
    provider["apiKey"] = KEY
    return provider


# --------------------------------------------------------------------------------------------
# Provider errors


def test_a_provider_error_echoing_the_key_in_every_encoding(home: Path, workdir: Path) -> None:
    body = {"error": {"message": "Incorrect API key provided: " + _encoded(KEY), "type": "invalid_request_error"}}
    with ReplayServer([Reply.json_error(401, body)]) as server:
        write_models_json(home, {"replay": _provider(server)})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "replay/replay-model", "hi")
    assert result.returncode == 1 and "Incorrect API key provided" in result.stdout
    outputs = {"stdout": result.stdout, "stderr": result.stderr, "session": session_files(home)[0].read_text()}
    assert leaks(outputs, KEY) == []


def test_a_stream_error_event_echoing_the_key(home: Path, workdir: Path) -> None:
    """An error that arrives inside the stream, after content started."""
    error = json.dumps({"error": {"message": "upstream rejected key " + _encoded(KEY)}})
    start = text_reply(API, "partial ").split(b"data: [DONE]")[0].rsplit(b"data: ", 2)[0]
    with ReplayServer([Reply.sse(start + f"data: {error}\n\n".encode())]) as server:
        write_models_json(home, {"replay": _provider(server)})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "replay/replay-model", "hi")
    assert result.returncode == 1 and "upstream rejected key" in result.stdout
    outputs = {"stdout": result.stdout, "stderr": result.stderr, "session": session_files(home)[0].read_text()}
    assert leaks(outputs, KEY) == []


# --------------------------------------------------------------------------------------------
# RPC and ACP, and their logs


def test_rpc_stream_and_log(home: Path, workdir: Path, tmp_path: Path) -> None:
    """A hook warning carrying the key goes to the RPC client as a notice; nothing of it in
    the stream or in rpc.log."""
    vault = tmp_path / "vault.txt"
    vault.write_text(SECRET)
    hook = f"printf '%s\\n' \"$(cat {vault}) $(printf %s \"$(cat {vault})\" | base64)\" >&2; exit 1"
    (home / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": hook}]}]}}))
    replies = [Reply.sse(tool_call_reply(API, "c1", "bash", {"command": "echo hi"})), Reply.sse(text_reply(API, "ok"))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": _provider(server)})
        rpc = RpcProcess(home, workdir, "--model", "replay/replay-model", "--approval", "full",
                         env={"DB_PASSWORD": SECRET})
        try:
            rpc.call({"type": "prompt", "message": "go"})
            rpc.event("agent_end")
            code = rpc.close_stdin()
        finally:
            rpc.kill()
    assert code == 0
    stream = "\n".join(json.dumps(line) for line in rpc.lines)
    assert "exited with 1" in stream  # the hook's warning reached the client
    logs = {p.name: p.read_text() for p in (home / "logs").glob("*.log")}
    assert leaks({"rpc stdout": stream, **logs}, SECRET) == []


def test_acp_log(home: Path, workdir: Path) -> None:
    """What an editor sends is logged (its name and version): a key there is redacted."""
    with ReplayServer([]) as server:
        write_models_json(home, {"replay": _provider(server)})
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": 1, "clientInfo": {"name": _encoded(KEY), "version": SECRET}}}
        proc = subprocess.run(baton_command("--mode", "acp", "--model", "replay/replay-model"), cwd=workdir,
                              env=baton_env(home, DB_PASSWORD=SECRET), input=json.dumps(init) + "\n",
                              capture_output=True, text=True, timeout=60)
    log = (home / "logs" / "acp.log").read_text()
    assert "client " in log  # the client was logged
    outputs = {"stdout": proc.stdout, "stderr": proc.stderr, "acp.log": log}
    assert leaks(outputs, KEY) == [] and leaks(outputs, SECRET) == []


# --------------------------------------------------------------------------------------------
# Export


@pytest.mark.parametrize("suffix", ["html", "md"])
def test_export_of_a_session_file_holding_a_key(suffix: str, home: Path, workdir: Path, tmp_path: Path) -> None:
    """A session file written before keys were redacted (or by another tool) holds one."""
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": str(workdir)}
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat .env"}}
    entries = [
        header,
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": "show me", "timestamp": 1}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [call], "api": API, "provider": "p", "model": "m",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "toolUse", "timestamp": 2}},
        {"type": "message", "id": "c", "parentId": "b", "timestamp": "2026-01-01T00:00:03Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
                     "content": [{"type": "text", "text": _encoded(KEY) + "\n" + _encoded(SECRET)}],
                     "timestamp": 3}},
    ]
    session = tmp_path / "old.jsonl"
    session.write_text("".join(json.dumps(e) + "\n" for e in entries))
    out = tmp_path / f"export.{suffix}"
    result = run_baton(home, workdir, "--export", str(session), str(out), OPENAI_API_KEY=KEY, DB_PASSWORD=SECRET)
    assert result.returncode == 0, result.stderr
    exported = out.read_text()
    assert "cat .env" in exported and "raw " in exported
    outputs = {"export": exported, "stdout": result.stdout, "stderr": result.stderr}
    assert leaks(outputs, KEY) == [] and leaks(outputs, SECRET) == []


# --------------------------------------------------------------------------------------------
# Tracebacks


def test_tracebacks_and_last_resort_logs(home: Path, workdir: Path) -> None:
    """Once baton's CLI has started, an exception escaping to the interpreter, one in a thread
    and a log record with no handler configured all print with keys redacted."""
    script = (
        "import logging, os, sys, threading\n"
        "from baton.tui.cli import launch\n"
        "launch.run(['--list-models', 'no-such-model'])\n"
        "key = os.environ['OPENAI_API_KEY']\n"
        "logging.getLogger('baton.test').error('request failed for %s', key)\n"
        "t = threading.Thread(target=lambda: (_ for _ in ()).throw(ValueError('thread ' + key.upper())))\n"
        "t.start(); t.join()\n"
        "raise RuntimeError('bad key ' + key + ' ' + key.encode().hex())\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=workdir, capture_output=True, text=True,
                            env=baton_env(home, OPENAI_API_KEY=KEY), timeout=60)
    assert "RuntimeError: bad key" in result.stderr and "ValueError: thread" in result.stderr
    assert "request failed for" in result.stderr
    assert leaks({"stderr": result.stderr, "stdout": result.stdout}, KEY) == []


# --------------------------------------------------------------------------------------------
# Model listing and key status


def _failing_key_command(home: Path) -> None:
    """A models.json provider whose ``!command`` key fails, printing a password on stderr (as
    a password manager's CLI may when it is locked)."""
    command = "!sh -c 'printf \"%s %s\\n\" \"$DB_PASSWORD\" \"$(printf %s \"$DB_PASSWORD\" | base64)\" >&2; exit 3'"
    write_models_json(home, {"vault": {"baseUrl": "https://vault.example.invalid/v1", "api": API, "apiKey": command,
                                       "models": [{"id": "m1"}]}})


def test_list_models_and_a_failed_key_command(home: Path, workdir: Path) -> None:
    _failing_key_command(home)
    listed = run_baton(home, workdir, "--list-models", "vault", DB_PASSWORD=SECRET, OPENAI_API_KEY=KEY)
    assert listed.returncode == 0 and "vault/m1" in listed.stdout
    assert "exited with 3" in listed.stderr
    refused = run_baton(home, workdir, "-p", "--model", "vault/m1", "hi", DB_PASSWORD=SECRET, OPENAI_API_KEY=KEY)
    assert refused.returncode == 2 and "exited with 3" in refused.stderr
    outputs = {"list stdout": listed.stdout, "list stderr": listed.stderr, "refused": refused.stderr}
    assert leaks(outputs, SECRET) == [] and leaks(outputs, KEY) == []


@pytest.fixture
def forget_key_commands() -> Iterator[None]:
    """The failures of ``!command`` keys are remembered per process: none leaks into other tests."""
    from baton.providers.config_values import clear_command_cache

    clear_command_cache()
    yield
    clear_command_cache()


@pytest.mark.usefixtures("forget_key_commands")
async def test_app_notices_and_model_picker(baton_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.providers.api_keys import has_api_key
    from baton.providers.faux import FauxProvider, faux_model
    from baton.tui.app.baton_app import BatonApp
    from tests.tui.app_helpers import open_session, screen_text, submit, wait_until

    monkeypatch.setenv("DB_PASSWORD", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _failing_key_command(baton_home)
    assert not has_api_key("vault")  # what start-up asks: the command runs and fails
    model = faux_model("m", provider="prov", api="faux-keys")
    with FauxProvider("faux-keys"):
        session = await open_session(project, model)
        app = BatonApp(session)
        seen: list[str] = []
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_until(pilot, lambda: "exited with 3" in screen_text(app), what="the models.json notice")
            seen.append(screen_text(app))
            await submit(pilot, app, "/model vault")
            await wait_until(pilot, lambda: "No API key: set VAULT_API_KEY" in screen_text(app), what="key status")
            seen.append(screen_text(app))
            await pilot.press("escape")
            await submit(pilot, app, "/model")
            await wait_until(pilot, lambda: "Switch model" in screen_text(app), what="the model picker")
            for _ in range(8):  # down the list: each row's key status shows
                await pilot.press("down")
                seen.append(screen_text(app))
            await pilot.press("escape")
        await session.close()
    outputs = {f"screen {i}": text for i, text in enumerate(seen)}
    assert leaks(outputs, SECRET) == [] and leaks(outputs, KEY) == []


async def test_the_apps_crash_report(baton_home: Path, project: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Textual prints a crash with the frames' local variables: a key held in one (as an
    adapter holds ``api_key``) showed there in full. The report is redacted and has no locals."""
    from baton.providers.faux import FauxProvider, faux_model
    from baton.tui.app.baton_app import BatonApp
    from tests.tui.app_helpers import open_session

    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def crash() -> None:
        api_key = KEY
        raise RuntimeError("request refused for key " + api_key.encode().hex())

    with FauxProvider("faux-crash"):
        session = await open_session(project, faux_model("m", provider="prov", api="faux-crash"))
        app = BatonApp(session)
        with pytest.raises(RuntimeError):
            async with app.run_test() as pilot:
                app.call_later(crash)
                await pilot.pause(0.3)
        await session.close()
    report = capsys.readouterr().err
    assert "RuntimeError: request refused for key" in report
    assert leaks({"crash report": report}, KEY) == []

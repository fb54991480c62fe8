"""Nothing leaked, nothing left behind, clear errors (issue 11), with the real ``baton``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.process_helpers import kill_sleepers, needs_proc, sleepers, wait_until
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import (
    baton_command,
    baton_env,
    read_entries,
    run_baton,
    session_files,
    session_messages,
    write_models_json,
)

DEMO = ("--model", "demo/baton-demo")
API = "openai-completions"


# --------------------------------------------------------------------------------------------
# 11. Every process baton started ends with it


@needs_proc
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_terminating_signal_during_a_tool_ends_every_process(
    sig: signal.Signals, home: Path, workdir: Path
) -> None:
    marker = f"31{sig.value:02d}.{os.getpid() % 1000}"
    command = (f"sleep {marker}1 & nohup sleep {marker}2 >/dev/null 2>&1 & "
               f"setsid sleep {marker}3 >/dev/null 2>&1 & sleep {marker}4")
    proc = subprocess.Popen(
        baton_command("-p", "--mode", "json", *DEMO, f"run {command}"), cwd=workdir, env=baton_env(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert wait_until(lambda: len(sleepers(marker)) == 4), "the command did not start"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 128 + sig.value, err
        assert wait_until(lambda: not sleepers(marker), 5), sleepers(marker)
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_sleepers(marker)
    assert "Traceback" not in err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[-1]["type"] == "agent_end"
    stored = session_messages(session_files(home)[0])
    assert stored[-1]["role"] == "toolResult" and stored[-1]["details"]["aborted"] is True


@needs_proc
def test_background_jobs_and_setsid_escapees_end_with_baton(home: Path, workdir: Path) -> None:
    marker = f"3200.{os.getpid() % 1000}"
    command = (f"(sleep {marker}1 &); nohup sleep {marker}2 >/dev/null 2>&1 & "
               f"setsid sleep {marker}3 >/dev/null 2>&1 & echo started")
    try:
        result = run_baton(home, workdir, "-p", *DEMO, f"run {command}")
        assert result.returncode == 0, result.stderr
        assert "started" in result.stdout
        assert wait_until(lambda: not sleepers(marker), 5), sleepers(marker)
    finally:
        kill_sleepers(marker)


# --------------------------------------------------------------------------------------------
# 12. Keys


def test_a_401_echoing_the_key_reaches_no_output_and_no_file(home: Path, workdir: Path) -> None:
    secret = "sk-live-9fJ2mQ7rT4vX8zL1pN6bW3"
    body = {"error": {"message": f"Incorrect API key provided: {secret}", "type": "invalid_request_error"}}
    with ReplayServer([Reply.json_error(401, body)]) as server:
        provider = models_json_provider(API, server.url)
        provider["apiKey"] = secret
        write_models_json(home, {"replay": provider})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "replay/replay-model", "hi")
        assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    assert result.returncode == 1
    assert "Incorrect API key provided" in result.stdout and "Incorrect API key provided" in result.stderr
    stored = session_files(home)[0].read_text()
    for place in (result.stdout, result.stderr, stored):
        assert secret not in place and secret[8:20] not in place


def test_bash_environment_drops_keys_and_tokens_unless_passed(home: Path, workdir: Path) -> None:
    write_models_json(home, {"corp": {"baseUrl": "http://127.0.0.1:9/v1", "api": API, "apiKey": "CORP_GATEWAY",
                                      "models": [{"id": "m"}]}})
    (home / "settings.json").write_text(json.dumps({"bash": {"passEnv": ["GITHUB_TOKEN"]}}))
    env = {"OPENAI_API_KEY": "sk-env-openai-123456789", "SOME_SERVICE_TOKEN": "tok-987654321",
           "CORP_GATEWAY": "corp-secret-555", "GITHUB_TOKEN": "ghp-passed-through", "HARMLESS": "visible-1"}
    result = run_baton(home, workdir, "-p", "--mode", "json", *DEMO, "run env", **env)
    assert result.returncode == 0, result.stderr
    end = next(json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_end"' in line)
    output = json.dumps(end["result"])
    assert "visible-1" in output
    # passEnv hands the command the token; what it prints of it is still redacted (issue 23)
    assert "GITHUB_TOKEN=[redacted]" in output and "ghp-passed-through" not in output
    for name in ("OPENAI_API_KEY", "SOME_SERVICE_TOKEN", "CORP_GATEWAY"):
        assert name not in output and env[name] not in output


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_api_key_from_a_file_or_stdin(how: str, home: Path, workdir: Path, tmp_path: Path) -> None:
    key = "sk-from-" + how + "-0123456789"
    with ReplayServer([Reply.sse(text_reply(API, "ok"))]) as server:
        provider = models_json_provider(API, server.url)
        del provider["apiKey"]
        write_models_json(home, {"replay": provider})
        if how == "file":
            key_file = tmp_path / "key.txt"
            key_file.write_text(key + "\n")
            result = run_baton(home, workdir, "-p", "--model", "replay/replay-model",
                               "--api-key-file", str(key_file), "hi")
        else:
            result = run_baton(home, workdir, "-p", "--model", "replay/replay-model", "--api-key", "-", "hi",
                               stdin=key + "\n")
        assert result.returncode == 0, result.stderr
        assert server.requests[0].headers["authorization"] == f"Bearer {key}"
        assert key not in json.dumps(server.requests[0].json())  # the key is not the prompt
    assert result.stdout == "ok\n"


def test_api_key_file_that_is_missing_is_a_usage_error(home: Path, workdir: Path, tmp_path: Path) -> None:
    result = run_baton(home, workdir, "-p", *DEMO, "--api-key-file", str(tmp_path / "nope"), "hi")
    assert result.returncode == 2 and "--api-key-file" in result.stderr and "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------
# 13. Full-output files


def test_full_output_files_live_in_baton_home_and_go_with_the_session(home: Path, workdir: Path) -> None:
    tmp = home / "tmp"
    tmp.mkdir()
    stale, fresh = tmp / "baton-bash-old.log", tmp / "baton-bash-recent.log"
    stale.write_text("old")
    fresh.write_text("recent")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(stale, (two_days_ago, two_days_ago))
    result = run_baton(home, workdir, "-p", "--mode", "json", *DEMO, "run seq 1 5000")
    assert result.returncode == 0, result.stderr
    end = next(json.loads(line) for line in result.stdout.splitlines() if '"tool_execution_end"' in line)
    path = end["result"]["details"]["fullOutputPath"]
    assert path is not None and Path(path).parent == tmp
    assert not Path(path).exists()  # removed when the session ended
    assert not stale.exists() and fresh.exists()


# --------------------------------------------------------------------------------------------
# 15. Clear errors


def test_unknown_model_names_the_models_json_problem(home: Path, workdir: Path) -> None:
    (home / "models.json").write_text('{"providers": {"mine": {"baseUrl": "http://x", "api": "openai-completions",'
                                      ' "models": [{"id": "m1"}]}')  # one brace short
    result = run_baton(home, workdir, "-p", "--model", "mine/m1", "hi")
    assert result.returncode == 2
    assert "Unknown model" in result.stderr
    assert "models.json" in result.stderr and "invalid JSON" in result.stderr


@pytest.mark.parametrize("name", ["settings.json", "models.json"])
def test_absurdly_deep_config_files_never_stop_baton(name: str, home: Path, workdir: Path) -> None:
    depth = 50_000
    (home / name).write_text('{"a":' * depth + "1" + "}" * depth)
    result = run_baton(home, workdir, "-p", *DEMO, "hello")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert name in result.stderr and "nested" in result.stderr


def test_a_failing_key_command_is_named_with_its_provider(home: Path, workdir: Path) -> None:
    write_models_json(home, {"openai": {"apiKey": "!echo vault locked >&2; exit 3"}})
    result = run_baton(home, workdir, "-p", "--model", "openai/gpt-5.1", "hi")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "vault locked" in line]
    assert len(lines) == 1 and "providers.openai.apiKey" in lines[0] and "exited with 3" in lines[0]


# --------------------------------------------------------------------------------------------
# 16. Print and JSON modes never answer with the demo model unless asked


@pytest.mark.parametrize("mode", [(), ("--mode", "json")])
def test_print_modes_without_a_key_exit_2_naming_the_variables(
    mode: tuple[str, ...], home: Path, workdir: Path
) -> None:
    result = run_baton(home, workdir, "-p", *mode, "hello")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "ANTHROPIC_API_KEY" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert "demo/baton-demo" in result.stderr
    assert session_files(home) == []
    named = run_baton(home, workdir, "-p", *mode, *DEMO, "hello")
    assert named.returncode == 0 and "demo" in named.stdout.lower()


# --------------------------------------------------------------------------------------------
# 18. Ctrl+C at start-up; agent_end last

_TRIGGER = """
import importlib.abc, os, signal, sys
class Trigger(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Trigger())
sys.argv = ["baton", "-p", "--model", "demo/baton-demo", "hello"]
from baton.tui.cli.main import main
sys.exit(main())
"""


@pytest.mark.parametrize("module", ["argparse", "baton.tui.cli.launch", "baton.tui.cli.session_setup",
                                    "baton.sessions.settings", "baton.tui.modes.print_mode"])
def test_ctrl_c_while_starting_is_one_line_and_exit_1(module: str, home: Path, workdir: Path) -> None:
    # SIGINT arrives exactly when ``module`` is first imported (the console script's own code).
    result = subprocess.run([sys.executable, "-c", _TRIGGER.format(module=module)], cwd=workdir,
                            env=baton_env(home), capture_output=True, text=True, timeout=60, input="")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert result.stderr.strip() in ("baton: interrupted", "baton: aborted")


def test_json_mode_ends_on_agent_end_after_a_retry(home: Path, workdir: Path) -> None:
    first = text_reply(API, "Partial answer")
    cut = Reply(chunks=[first[: len(first) // 2], first[len(first) // 2:]], disconnect_after=1)
    with ReplayServer([cut, Reply.sse(text_reply(API, "Full answer"))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "replay/replay-model", "hi")
        assert len(server.requests) == 2
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert "auto_retry_start" in kinds and "auto_retry_end" in kinds
    assert kinds[-1] == "agent_end"
    assert kinds.index("auto_retry_end") < len(kinds) - 1


# --------------------------------------------------------------------------------------------
# 19. Print mode: Ctrl+C after the answer arrived still exits 1


def test_ctrl_c_after_the_final_answer_still_exits_1(home: Path, workdir: Path) -> None:
    # The answer is complete; then a threshold compaction runs (tiny window) and hangs: Ctrl+C now
    # must not report success, although the run's last message is a good answer.
    def reply(request) -> Reply:  # type: ignore[no-untyped-def]
        if len(server.requests) == 1:
            return Reply.sse(text_reply(API, "The answer."))
        return Reply(chunks=[b""], stall_after=0)

    with ReplayServer(reply) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url, contextWindow=2000,
                                                                maxTokens=500)})
        (home / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 1995,
                                                                       "keepRecentTokens": 10}}))
        proc = subprocess.Popen(
            baton_command("-p", "--model", "replay/replay-model", "x " * 300), cwd=workdir, env=baton_env(home),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert wait_until(lambda: len(server.requests) >= 2), "no compaction request"
            stored = session_messages(session_files(home)[0])
            assert stored[-1]["role"] == "assistant" and stored[-1]["stopReason"] == "stop"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1, (out, err)
    assert "abort" in err.lower()
    assert read_entries(session_files(home)[0])

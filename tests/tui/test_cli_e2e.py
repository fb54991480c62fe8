"""`baton -p` and `--mode json` end to end, as a subprocess, against a local replay server."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.process_helpers import wait_until
from tests.provider_scripts import APIS, models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import (
    baton_command,
    baton_env,
    read_entries,
    run_baton,
    session_files,
    session_messages,
    write_models_json,
)

API_SHORT = {"openai-completions": "oc", "openai-responses": "or", "anthropic-messages": "am",
             "google-generative-ai": "gg"}


@pytest.fixture
def workdir(workdir: Path) -> Path:
    (workdir / "notes.txt").write_text("hello from notes\n")
    return workdir


def tool_then_text(api: str, command: str, answer: str) -> list[Reply]:
    return [
        Reply.sse(tool_call_reply(api, "call_1", "bash", {"command": command}, text="Running it.")),
        Reply.sse(text_reply(api, answer)),
    ]


def model_ref(api: str) -> str:
    return f"replay-{API_SHORT[api]}/replay-model"


def configure(home: Path, server: ReplayServer, *apis: str) -> None:
    write_models_json(home, {f"replay-{API_SHORT[a]}": models_json_provider(a, server.url) for a in apis})


def request_text(request: RecordedRequest) -> str:
    return json.dumps(request.json())


@pytest.mark.parametrize("api", APIS)
def test_print_mode_runs_tool_and_prints_final_text(api: str, home: Path, workdir: Path) -> None:
    replies = tool_then_text(api, "echo baton-e2e > made.txt && echo tool-ran-ok", "All done: made.txt exists.")
    with ReplayServer(replies) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "-p", "--model", model_ref(api), "make the file")
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done: made.txt exists.\n"
    assert (workdir / "made.txt").read_text() == "baton-e2e\n"
    assert len(requests) == 2
    assert "tool-ran-ok" in request_text(requests[1])  # the real tool output went back to the model
    files = session_files(home)
    assert len(files) == 1
    roles = [m["role"] for m in session_messages(files[0])]
    assert roles == ["user", "assistant", "toolResult", "assistant"]


JSON_EVENT_TYPES = {
    "session", "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
    "auto_compaction_start", "auto_compaction_end", "auto_retry_start", "auto_retry_end",
    "model_change", "thinking_level_change", "session_changed",
}


def check_json_event(event: dict[str, Any]) -> None:
    """The documented shape of JSON-mode lines (README, 'JSON mode')."""
    assert event["type"] in JSON_EVENT_TYPES, event["type"]
    kind = event["type"]
    if kind == "session":
        assert {"version", "id", "timestamp", "cwd"} <= event.keys()
    elif kind in ("message_start", "message_end"):
        assert event["message"]["role"] in ("user", "assistant", "toolResult", "bashExecution", "custom",
                                            "compactionSummary", "branchSummary")
    elif kind == "message_update":
        inner = event["assistantMessageEvent"]
        assert inner["type"] in ("start", "text_start", "text_delta", "text_end", "thinking_start",
                                 "thinking_delta", "thinking_end", "toolcall_start", "toolcall_delta",
                                 "toolcall_end", "done", "error")
        if inner["type"].endswith("_delta"):
            assert isinstance(inner["delta"], str)
        else:
            assert event["message"]["role"] == "assistant"
    elif kind.startswith("tool_execution_"):
        assert isinstance(event["toolCallId"], str) and isinstance(event["toolName"], str)
        if kind == "tool_execution_end":
            assert isinstance(event["isError"], bool)
            assert isinstance(event["result"]["content"], list)
    elif kind == "turn_end":
        assert event["message"]["role"] == "assistant"
        assert isinstance(event["toolResults"], list)
    elif kind == "agent_end":
        assert isinstance(event["messages"], list)


@pytest.mark.parametrize("api", APIS)
def test_json_mode_event_stream(api: str, home: Path, workdir: Path) -> None:
    with ReplayServer(tool_then_text(api, "echo json-mode", "Finished.")) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "-p", "--mode", "json", "--model", model_ref(api), "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    for event in events:
        check_json_event(event)
    types = [e["type"] for e in events]
    assert types[0] == "session" and types[1] == "agent_start" and types[-1] == "agent_end"
    assert types.count("tool_execution_start") == 1 and types.count("tool_execution_end") == 1
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["toolName"] == "bash" and not end["isError"]
    assert "json-mode" in json.dumps(end["result"]["content"])
    deltas = "".join(
        e["assistantMessageEvent"]["delta"] for e in events
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
    )
    assert deltas.endswith("Finished.")


def test_continue_appends_to_the_same_session(home: Path, workdir: Path) -> None:
    api = "anthropic-messages"
    replies = [Reply.sse(text_reply(api, "First answer.")), Reply.sse(text_reply(api, "Second answer."))]
    with ReplayServer(replies) as server:
        configure(home, server, api)
        first = run_baton(home, workdir, "-p", "--model", model_ref(api), "first question")
        second = run_baton(home, workdir, "-c", "-p", "again")
        requests = list(server.requests)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert second.stdout == "Second answer.\n"
    files = session_files(home)
    assert len(files) == 1
    texts = json.dumps(requests[1].json())
    assert "first question" in texts and "First answer." in texts and "again" in texts
    assert [m["role"] for m in session_messages(files[0])] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize(("first_api", "second_api"), [
    ("anthropic-messages", "openai-completions"),
    ("openai-responses", "google-generative-ai"),
    ("google-generative-ai", "anthropic-messages"),
    ("openai-completions", "openai-responses"),
])
def test_model_switch_between_runs_transforms_history(
    first_api: str, second_api: str, home: Path, workdir: Path
) -> None:
    long_id = "call_" + "x" * 60 + "|fc_" + "y" * 60
    replies = [
        Reply.sse(tool_call_reply(first_api, long_id, "bash", {"command": "echo switched-ok"})),
        Reply.sse(text_reply(first_api, "Tool done.")),
        Reply.sse(text_reply(second_api, "Second model here.")),
    ]
    with ReplayServer(replies) as server:
        configure(home, server, first_api, second_api)
        first = run_baton(home, workdir, "-p", "--model", model_ref(first_api), "run it")
        second = run_baton(home, workdir, "-c", "-p", "--model", model_ref(second_api), "what happened?")
        requests = list(server.requests)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Second model here.\n"
    body = requests[2].json()
    text = json.dumps(body)
    # The second model received the whole history, in its own wire format.
    assert "run it" in text and "switched-ok" in text and "Tool done." in text and "what happened?" in text
    assert '"bash"' in text
    if second_api == "anthropic-messages":
        ids = [b["id"] for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_use"]
        assert ids and all(len(i) <= 64 and "|" not in i for i in ids)
    if second_api == "openai-completions":
        calls = [c for m in body["messages"] for c in (m.get("tool_calls") or [])]
        assert calls and all(len(c["id"]) <= 40 and "|" not in c["id"] for c in calls)
        results = [m for m in body["messages"] if m["role"] == "tool"]
        assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
    entries = read_entries(session_files(home)[0])
    assert any(e["type"] == "model_change" for e in entries)


def test_unknown_model_is_a_usage_error(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "-p", "--model", "nosuch/definitely-not-a-model", "hi")
    assert result.returncode == 2
    assert "definitely-not-a-model" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_key_names_the_env_var(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "-p", "--model", "anthropic/claude-sonnet-4-5", "hi")
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_http_401_shows_provider_text_and_exits_1(home: Path, workdir: Path) -> None:
    api = "openai-completions"
    error = {"error": {"message": "Incorrect API key provided: sk-te***", "type": "invalid_request_error",
                       "code": "invalid_api_key"}}
    with ReplayServer([Reply.json_error(401, error)]) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "-p", "--model", model_ref(api), "hi")
    assert result.returncode == 1
    assert "Incorrect API key provided" in result.stderr
    assert result.stdout == ""


def test_unreadable_attachment_is_a_usage_error(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "-p", "@missing-file.txt", "explain")
    assert result.returncode == 2
    assert "missing-file.txt" in result.stderr


def test_sigint_during_print_mode_aborts_and_saves_partial(home: Path, workdir: Path) -> None:
    api = "anthropic-messages"
    body = text_reply(api, ["Partial ", "answer ", "that ", "never ", "ends"])
    lines = body.split(b"\n\n")
    head = b"\n\n".join(lines[:5]) + b"\n\n"  # message_start, block start, first deltas
    with ReplayServer([Reply(chunks=[head, b""], stall_after=1)]) as server:
        configure(home, server, api)
        proc = subprocess.Popen(
            baton_command("-p", "--model", model_ref(api), "talk"), cwd=workdir, env=baton_env(home),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        wait_until(lambda: server.requests, 20)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1, err
    assert "abort" in err.lower()
    messages = session_messages(session_files(home)[0])
    assistant = messages[-1]
    assert assistant["role"] == "assistant" and assistant["stopReason"] == "aborted"
    assert "Partial" in "".join(b.get("text", "") for b in assistant["content"])


def test_demo_model_lists_files_with_a_real_tool_call(home: Path, workdir: Path) -> None:
    (workdir / "alpha.py").write_text("print('a')\n")
    result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "demo/baton-demo", "list files")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["provider"] == "demo"
    ends = [e for e in events if e["type"] == "tool_execution_end"]
    assert ends and ends[0]["toolName"] in ("ls", "bash") and not ends[0]["isError"]
    listing = json.dumps(ends[0]["result"]["content"])
    assert "alpha.py" in listing and "notes.txt" in listing


def test_demo_model_print_mode(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "-p", "--model", "demo/baton-demo", "list files")
    assert result.returncode == 0, result.stderr
    assert "notes.txt" in result.stdout


def test_piped_stdin_joins_prompt_and_implies_print(home: Path, workdir: Path) -> None:
    api = "openai-completions"
    with ReplayServer([Reply.sse(text_reply(api, "Reviewed."))]) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "--model", model_ref(api), "review this", stdin="diff --git a b\n+x\n")
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reviewed.\n"
    sent = json.dumps(requests[0].json())
    assert "diff --git a b" in sent and "review this" in sent


def test_print_mode_never_imports_textual(home: Path, workdir: Path) -> None:
    code = ("import sys; from baton.tui.cli.main import main; "
            "rc = main(['-p', '--model', 'demo/baton-demo', 'list files']); "
            "print('TEXTUAL-LOADED' if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) "
            "else 'TEXTUAL-ABSENT', file=sys.stderr); raise SystemExit(rc)")
    result = subprocess.run([*baton_command()[:1], "-c", code], cwd=workdir, env=baton_env(home),
                            capture_output=True, text=True, timeout=60, input="")
    assert result.returncode == 0, result.stderr
    assert "TEXTUAL-ABSENT" in result.stderr


def test_version_and_help(home: Path, workdir: Path) -> None:
    version = run_baton(home, workdir, "--version")
    assert version.returncode == 0 and version.stdout.startswith("baton ")
    helptext = run_baton(home, workdir, "--help")
    assert helptext.returncode == 0
    for flag in ("--print", "--mode", "--model", "--continue", "--list-models", "--export", "--no-tools"):
        assert flag in helptext.stdout
    bad = run_baton(home, workdir, "--mode", "xml")
    assert bad.returncode == 2

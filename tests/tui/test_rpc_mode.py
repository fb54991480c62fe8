"""``baton --mode rpc`` as a subprocess, driven with raw JSON lines, against a local replay server."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import read_entries, session_files, session_messages, write_models_json
from tests.tui.rpc_client import RpcProcess

AM = "anthropic-messages"
OC = "openai-completions"
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100ffff03000006000557bfab"
        "d40000000049454e44ae426082"
    )
).decode()


@pytest.fixture
def workdir(workdir: Path) -> Path:
    (workdir / "notes.txt").write_text("hello from notes\n")
    return workdir


def configure(home: Path, server: ReplayServer) -> None:
    write_models_json(home, {
        "replay-am": models_json_provider(AM, server.url),
        "replay-oc": models_json_provider(OC, server.url),
    })


def stalled(api: str, deltas: list[str], sent: int) -> Reply:
    """A reply that sends its first ``sent`` SSE events and then holds the connection open."""
    events = [e + b"\n\n" for e in text_reply(api, deltas).split(b"\n\n") if e.strip()]
    return Reply(chunks=events, stall_after=sent)


def last_assistant(path: Path) -> dict[str, Any]:
    return [m for m in session_messages(path) if m["role"] == "assistant"][-1]


def test_rpc_story_tool_call_model_switch_abort(home: Path, workdir: Path) -> None:
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_01", "write", {"path": "out.txt", "content": "made by rpc\n"},
                                  text="Writing the file.")),
        Reply.sse(text_reply(AM, "Wrote out.txt.")),
        Reply.sse(text_reply(OC, "Hello from the other API.")),
        stalled(OC, ["Partial ", "answer ", "that ", "never ", "ends"], sent=2),
    ]
    with ReplayServer(replies) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model")
        try:
            # 1. a prompt that runs a tool
            response = rpc.call({"type": "prompt", "message": "write the file"})
            assert response["success"] is True
            start = rpc.event("tool_execution_start")
            assert start["toolName"] == "write" and start["args"]["path"] == "out.txt"
            end = rpc.event("tool_execution_end")
            assert end["isError"] is False
            rpc.event("agent_end")
            assert (workdir / "out.txt").read_text() == "made by rpc\n"
            # 2. switch to a model on another API; the next request carries the transformed history
            preview = rpc.call({"type": "handoff_preview", "model": "replay-oc/replay-model"})
            assert preview["success"] and preview["data"]["target"] == "replay-oc/replay-model"
            assert "summary" in preview["data"]
            switched = rpc.call({"type": "set_model", "provider": "replay-oc", "modelId": "replay-model"})
            assert switched["data"]["api"] == OC
            rpc.call({"type": "prompt", "message": "and now?"})
            rpc.event("agent_end")
            body = server.requests[2].json()
            assert body["model"] == "replay-model" and "messages" in body  # an OpenAI Chat request
            text = json.dumps(body["messages"])
            assert "Writing the file." in text and "Wrote out.txt." in text
            tool_calls = [m for m in body["messages"] if m.get("tool_calls")]
            assert tool_calls and tool_calls[0]["tool_calls"][0]["function"]["name"] == "write"
            assert any(m.get("role") == "tool" for m in body["messages"])
            # 3. abort mid-stream: the partial answer is saved, marked aborted
            rpc.skip_seen()
            rpc.call({"type": "prompt", "message": "tell me more"})
            rpc.wait_for(lambda m: m.get("assistantMessageEvent", {}).get("type") == "text_delta")
            assert rpc.call({"type": "abort"})["success"] is True
            rpc.event("agent_end")
            state = rpc.call({"type": "get_state"})["data"]
            assert state["isStreaming"] is False
            session_file = Path(state["sessionFile"])
            aborted = last_assistant(session_file)
            assert aborted["stopReason"] == "aborted"
            assert "Partial" in json.dumps(aborted["content"])
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
    entries = read_entries(session_file)
    assert any(e["type"] == "model_change" and e["provider"] == "replay-oc" for e in entries)


def test_rpc_every_command_once(home: Path, workdir: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    chat = [
        Reply.sse(text_reply(AM, "First answer.")),
        Reply.sse(text_reply(AM, "Second answer.")),
        stalled(AM, ["Busy ", "still ", "busy"], sent=3),
    ]

    def reply(request: RecordedRequest) -> Reply:
        if "context summarization assistant" in json.dumps(request.json().get("system", "")):
            return Reply.sse(text_reply(AM, "## Goal\nSummary of the chat."))
        return chat.pop(0) if chat else Reply.json_error(500, {"error": {"message": "no more replies"}})

    with ReplayServer(reply) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model")
        seen: set[str] = set()

        def ok(command: dict[str, Any]) -> Any:
            response = rpc.call(command)
            assert response["success"] is True, response
            assert response["command"] == command["type"]
            seen.add(command["type"])
            return response.get("data")

        try:
            image = {"type": "image", "data": PNG, "mimeType": "image/png"}
            ok({"type": "prompt", "message": "first", "images": [image]})
            rpc.event("agent_end")
            assert "image" in json.dumps(server.requests[0].json()["messages"][0])
            ok({"type": "prompt", "message": "second"})
            rpc.event("agent_end")
            state = ok({"type": "get_state"})
            assert state["messageCount"] == 4 and state["model"]["provider"] == "replay-am"
            messages = ok({"type": "get_messages"})["messages"]
            assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
            assert ok({"type": "get_last_assistant_text"})["text"] == "Second answer."
            models = ok({"type": "get_available_models"})["models"]
            assert {m["provider"] for m in models} >= {"replay-am", "replay-oc"}
            ok({"type": "set_thinking_level", "level": "high"})
            assert ok({"type": "cycle_thinking_level"}) is None  # the replay model has no reasoning
            ok({"type": "set_steering_mode", "mode": "all"})
            ok({"type": "set_follow_up_mode", "mode": "all"})
            state = ok({"type": "get_state"})
            assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
            ok({"type": "set_auto_retry", "enabled": False})
            ok({"type": "abort_retry"})
            ok({"type": "set_session_name", "name": "rpc work"})
            assert ok({"type": "get_state"})["sessionName"] == "rpc work"
            stats = ok({"type": "get_session_stats"})
            assert stats["userMessages"] == 2 and stats["assistantMessages"] == 2
            assert stats["tokens"]["input"] > 0
            compact = ok({"type": "compact", "customInstructions": "keep it short"})
            assert "Summary of the chat." in compact["summary"]
            ok({"type": "set_auto_compaction", "enabled": False})
            assert ok({"type": "get_state"})["autoCompactionEnabled"] is False
            bash = ok({"type": "bash", "command": "echo from-bash"})
            assert bash["output"].strip() == "from-bash" and bash["exitCode"] == 0
            ok({"type": "abort_bash"})
            html = ok({"type": "export_html", "outputPath": str(workdir / "s.html")})
            assert Path(html["path"]).read_text().lstrip().lower().startswith("<!doctype html")
            assert isinstance(ok({"type": "get_commands"})["commands"], list)
            # steering and follow-ups while a run streams
            rpc.skip_seen()
            ok({"type": "prompt", "message": "long one"})
            rpc.wait_for(lambda m: m.get("assistantMessageEvent", {}).get("type") == "text_delta")
            busy = rpc.call({"type": "prompt", "message": "not queued"})
            assert busy["success"] is False and "streamingBehavior" in busy["error"]
            ok({"type": "prompt", "message": "queued steer", "streamingBehavior": "steer"})
            ok({"type": "steer", "message": "steer me"})
            ok({"type": "follow_up", "message": "then this"})
            assert ok({"type": "get_state"})["pendingMessageCount"] == 3
            ok({"type": "abort"})
            rpc.event("agent_end")
            forks = ok({"type": "get_fork_messages"})["messages"]
            assert [f["text"] for f in forks][-1] == "long one"
            fork = ok({"type": "fork", "entryId": forks[-1]["entryId"]})
            assert fork == {"text": "long one", "cancelled": False}
            forked_file = ok({"type": "get_state"})["sessionFile"]
            cycled = ok({"type": "cycle_model"})
            assert cycled is not None and cycled["model"]["provider"] != "replay-am"
            ok({"type": "set_model", "provider": "replay-am", "modelId": "replay-model"})
            ok({"type": "new_session"})
            assert ok({"type": "get_state"})["messageCount"] == 0
            ok({"type": "switch_session", "sessionPath": forked_file})
            assert ok({"type": "get_state"})["sessionFile"] == forked_file
            preview = ok({"type": "handoff_preview", "model": "replay-oc/replay-model"})
            assert preview["target"] == "replay-oc/replay-model"
            # features other issues provide: an answer either way, never a crash
            for command in ({"type": "set_approval", "mode": "ask"}, {"type": "get_checkpoints"},
                            {"type": "rewind", "entryId": forks[0]["entryId"]}):
                response = rpc.call(command)
                assert response["command"] == command["type"]
                if not response["success"]:
                    assert "not available" in response["error"] or response["error"]
                seen.add(command["type"])
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
    pi_commands = {
        "prompt", "steer", "follow_up", "abort", "new_session", "get_state", "get_messages", "set_model",
        "cycle_model", "get_available_models", "set_thinking_level", "cycle_thinking_level", "set_steering_mode",
        "set_follow_up_mode", "compact", "set_auto_compaction", "set_auto_retry", "abort_retry", "bash",
        "abort_bash", "get_session_stats", "export_html", "switch_session", "fork", "get_fork_messages",
        "get_last_assistant_text", "set_session_name", "get_commands",
        "handoff_preview", "set_approval", "rewind", "get_checkpoints",
    }
    assert pi_commands <= seen


def test_rpc_malformed_input_gets_errors_and_the_process_goes_on(home: Path, workdir: Path) -> None:
    with ReplayServer([]) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model", "--no-session")
        try:
            rpc.send_raw(b"this is not json\n")
            first = rpc.wait_for(lambda m: m.get("type") == "response")
            assert first == {"type": "response", "command": "parse", "success": False,
                             "error": first["error"]} and first["error"].startswith("Failed to parse command")
            rpc.send_raw(b"[1, 2, 3]\n")
            assert rpc.wait_for(lambda m: m.get("type") == "response")["command"] == "parse"
            rpc.send_raw(b'{"id": "x", "no": "type"}\r\n')
            assert rpc.response("x")["success"] is False
            unknown = rpc.call({"type": "fly"})
            assert unknown["success"] is False and "Unknown command: fly" in unknown["error"]
            missing = rpc.call({"type": "set_model", "provider": "replay-am"})
            assert missing["success"] is False and "modelId" in missing["error"]
            bad = rpc.call({"type": "set_model", "provider": "nope", "modelId": "nothing"})
            assert bad["error"] == "Model not found: nope/nothing"
            bad_level = rpc.call({"type": "set_thinking_level", "level": "max"})
            assert bad_level["success"] is False
            bad_image = rpc.call({"type": "prompt", "message": "x", "images": [{"type": "image"}]})
            assert bad_image["success"] is False and "images" in bad_image["error"]
            rpc.send_raw('{"id": "u", "type": "get_state", "note": "a\u2028b"}\n'.encode())
            assert rpc.response("u")["success"] is True
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
        assert server.requests == []


def test_rpc_eof_aborts_the_run_and_exits_cleanly(home: Path, workdir: Path) -> None:
    with ReplayServer([stalled(AM, ["Half ", "done ", "and ", "then"], sent=3)]) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model")
        try:
            rpc.call({"type": "prompt", "message": "long task"})
            rpc.wait_for(lambda m: m.get("assistantMessageEvent", {}).get("type") == "text_delta")
            assert rpc.close_stdin(timeout=20) == 0
        finally:
            rpc.kill()
    assert any(m.get("type") == "agent_end" for m in rpc.lines)
    [path] = session_files(home)
    aborted = last_assistant(path)
    assert aborted["stopReason"] == "aborted" and "Half" in json.dumps(aborted["content"])
    assert b"" not in [line.strip() for line in rpc.raw]  # nothing but JSON lines on stdout


def test_protocol_modes_never_import_textual(home: Path, workdir: Path) -> None:
    import subprocess
    import sys

    from tests.tui.cli_harness import baton_env

    for mode in ("rpc", "acp"):
        code = (
            "import sys; from baton.tui.cli.main import main; rc = main(['--mode', '" + mode + "', '--model', "
            "'demo/baton-demo']); loaded = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]; "
            "sys.stderr.write('TEXTUAL-LOADED' if loaded else 'NO-TEXTUAL')"
        )
        result = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=baton_env(home), input="",
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stderr.endswith("NO-TEXTUAL"), result.stderr
        assert result.stdout == ""  # EOF at once: nothing was asked, nothing is said


def test_rpc_checkpoints_and_rewind(home: Path, workdir: Path) -> None:
    pytest.importorskip("baton.sessions.checkpoints", reason="the checkpoints feature is not in this build")
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_w", "write", {"path": "made.txt", "content": "new file\n"})),
        Reply.sse(text_reply(AM, "Made it.")),
    ]
    with ReplayServer(replies) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model")
        try:
            rpc.call({"type": "prompt", "message": "make a file"})
            rpc.event("agent_end")
            assert (workdir / "made.txt").exists()
            response = rpc.call({"type": "get_checkpoints"})
            assert response["success"], response
            checkpoints = response["data"]["checkpoints"]
            assert checkpoints[0]["prompt"] == "make a file"
            refused = rpc.call({"type": "rewind", "entryId": checkpoints[0]["entryId"], "restore": "everything"})
            assert not refused["success"] and "restore must be one of both" in refused["error"]
            rewound = rpc.call({"type": "rewind", "entryId": checkpoints[0]["entryId"], "restore": "both"})
            assert rewound["success"], rewound
            assert rewound["data"]["removed"] == ["made.txt"] and "checkpoints" in rewound["data"]
            assert "removed 1" in rewound["data"]["summary"] and rewound["data"]["needsConfirmation"] is False
            assert not (workdir / "made.txt").exists()
            assert rpc.call({"type": "get_state"})["data"]["messageCount"] == 0
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()

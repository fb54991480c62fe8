"""RPC mode prints what it printed before the session's events grew what the app needs (issue 24,
item 2): no ``queue_changed`` line, and ``auto_retry_*`` lines with pi's fields only."""

from __future__ import annotations

from pathlib import Path

from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.replay_session import overloaded_reply
from tests.tui.cli_harness import write_models_json
from tests.tui.rpc_client import RpcProcess

AM = "anthropic-messages"


def test_rpc_leaves_the_queue_event_out_and_keeps_pis_retry_fields(home: Path, workdir: Path) -> None:
    events = [e + b"\n\n" for e in text_reply(AM, ["Busy ", "still ", "busy"]).split(b"\n\n") if e.strip()]
    replies = [overloaded_reply(), overloaded_reply(), overloaded_reply(),
               Reply(chunks=events, stall_after=3)]
    (home / "settings.json").write_text('{"retry": {"baseDelayMs": 1, "maxRetries": 2}}')
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        rpc = RpcProcess(home, workdir, "--model", "replay-am/replay-model")
        try:
            assert rpc.call({"type": "prompt", "message": "long one"})["success"] is True
            rpc.wait_for(lambda m: m.get("assistantMessageEvent", {}).get("type") == "text_delta")
            assert rpc.call({"type": "steer", "message": "steer me"})["success"] is True
            assert rpc.call({"type": "follow_up", "message": "then this"})["success"] is True
            assert rpc.call({"type": "get_state"})["data"]["pendingMessageCount"] == 2
            assert rpc.call({"type": "abort"})["success"] is True
            rpc.event("agent_end")
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
    kinds = [line.get("type") for line in rpc.lines]
    assert "queue_changed" not in kinds
    starts = [line for line in rpc.lines if line.get("type") == "auto_retry_start"]
    assert [(s["source"], s["attempt"], s["maxAttempts"]) for s in starts] == [
        ("provider", 1, 3), ("provider", 2, 3), ("session", 1, 2)]
    assert {tuple(sorted(s)) for s in starts} == {
        ("attempt", "delayMs", "errorMessage", "maxAttempts", "source", "type")}

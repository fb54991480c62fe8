"""Bad input never takes the session down (issue 23, part 5), with the real ``baton``.

A hostile local provider over a real socket, hostile RPC/ACP clients on real pipes, hostile
session files: every case ends in a clear error, the session file stays valid and resumable,
and the process neither crashes nor outlives the client that drove it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from baton.providers.json_depth import MAX_VALUE_DEPTH
from baton.providers.projection import MAX_TOOL_CALL_CHARS
from baton.providers.sse import MAX_LINE
from baton.sessions import SessionStore
from tests.provider_scripts import APIS, models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import (
    baton_command,
    baton_env,
    run_baton,
    session_files,
    session_messages,
    stop_if_running,
    write_models_json,
)
from tests.tui.rpc_client import RpcProcess

OC = "openai-completions"
MODEL = ("--model", "replay/replay-model")


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def configure(home: Path, server: ReplayServer, api: str = OC, **settings: Any) -> None:
    write_models_json(home, {"replay": models_json_provider(api, server.url)})
    if settings:
        (home / "settings.json").write_text(json.dumps(settings))


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]  # every line must be JSON


def assert_valid_and_resumable(home: Path, workdir: Path, server: ReplayServer) -> None:
    """The session file is strict JSON line by line, loads without a warning, and ``-c``
    continues it with the provider answering."""
    [path] = session_files(home)
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:  # JSONL: LF only
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the session file"))
    assert SessionStore.load(path).warnings == []
    server.replies.append(Reply.sse(text_reply(OC, "resumed fine")))  # type: ignore[union-attr]
    again = run_baton(home, workdir, "-p", "-c", *MODEL, "go on")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "resumed fine\n"


# --------------------------------------------------------------------------------------------
# 1. Deep nesting


@pytest.mark.parametrize("api", APIS)
def test_a_tool_call_nested_300_deep_fails_with_a_clear_result_and_the_session_goes_on(
    api: str, home: Path, workdir: Path
) -> None:
    arguments = {"command": "echo deep", "x": nested(300)}
    replies = [Reply.sse(tool_call_reply(api, "call_1", "bash", arguments, chunk=200)),
               Reply.sse(text_reply(api, "understood"))]
    with ReplayServer(replies) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "-p", "--mode", "json", *MODEL, "go")
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr and "serial" not in result.stderr
        lines = json_lines(result.stdout)
        assert lines[-1]["type"] == "agent_end"
        end = next(line for line in lines if line["type"] == "tool_execution_end")
        assert end["isError"] is True
        assert f"nested more than {MAX_VALUE_DEPTH} levels deep" in end["result"]["content"][0]["text"]
        assert "echo deep" not in json.dumps(server.requests[1].json())  # refused, never run or resent
        stored = session_messages(session_files(home)[0])
        assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "assistant"]
        assert stored[1]["content"][-1]["arguments"] == {}
        server.replies = [Reply.sse(text_reply(api, "resumed fine"))]
        again = run_baton(home, workdir, "-p", "-c", *MODEL, "go on")
        assert again.returncode == 0 and again.stdout == "resumed fine\n", again.stderr


def test_rpc_deep_tool_call_then_the_next_prompt_is_answered(home: Path, workdir: Path) -> None:
    replies = [Reply.sse(tool_call_reply(OC, "call_1", "bash", {"command": "ls", "x": nested(300)})),
               Reply.sse(text_reply(OC, "first done")),
               Reply.sse(text_reply(OC, "second answer"))]
    with ReplayServer(replies) as server:
        configure(home, server)
        rpc = RpcProcess(home, workdir, *MODEL)
        try:
            assert rpc.call({"type": "prompt", "message": "one"})["success"] is True
            rpc.event("agent_end")
            assert rpc.call({"type": "prompt", "message": "two"})["success"] is True
            rpc.event("agent_end")
            answer = rpc.call({"type": "get_last_assistant_text"})
            assert answer["data"] == {"text": "second answer"}
            assert rpc.close_stdin() == 0
        finally:
            rpc.kill()
        stderr = rpc.proc.stderr.read().decode() if rpc.proc.stderr else ""
        assert "Traceback" not in stderr
        assert_valid_and_resumable(home, workdir, server)


def test_rpc_a_line_of_200000_brackets_is_a_parse_error_and_reading_goes_on(home: Path, workdir: Path) -> None:
    rpc = RpcProcess(home, workdir, "--model", "demo/baton-demo", "--no-session")
    try:
        rpc.send_raw(b"[" * 200_000 + b"\n")
        error = rpc.wait_for(lambda m: m.get("type") == "response")
        assert error["command"] == "parse" and error["success"] is False
        assert "nested more than" in error["error"]
        assert rpc.call({"type": "get_state"})["success"] is True
        assert rpc.close_stdin() == 0
    finally:
        rpc.kill()


def test_acp_a_line_of_200000_brackets_is_a_parse_error_and_reading_goes_on(home: Path, workdir: Path) -> None:
    proc = subprocess.Popen(baton_command("--mode", "acp", "--model", "demo/baton-demo"), cwd=workdir,
                            env=baton_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"{" * 100_000 + b"[" * 100_000 + b"\n")
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n')
        proc.stdin.flush()
        error = json.loads(proc.stdout.readline())
        assert error["error"]["code"] == -32700 and "nested more than" in error["error"]["data"]["details"]
        assert json.loads(proc.stdout.readline())["result"]["protocolVersion"] == 1
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        stop_if_running(proc)


def test_a_session_file_with_a_line_nested_200000_deep_still_continues(home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply(OC, "first"))]) as server:
        configure(home, server)
        assert run_baton(home, workdir, "-p", *MODEL, "hello").returncode == 0
        [path] = session_files(home)
        with path.open("a", encoding="utf-8") as handle:  # what a hostile or broken tool wrote
            handle.write('{"type": "custom", "id": "evil0001", "parentId": null, "data": ')
            handle.write("[" * 200_000 + "]" * 200_000 + "}\n")
        server.replies.append(Reply.sse(text_reply(OC, "still here")))  # type: ignore[union-attr]
        result = run_baton(home, workdir, "-p", "-c", *MODEL, "again")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "still here\n" and "Traceback" not in result.stderr
        listed = run_baton(home, workdir, "--export", str(path), str(workdir / "out.html"))
        assert listed.returncode == 0, listed.stderr
    texts = json.dumps(server.requests[1].json())
    assert "first" in texts and "hello" in texts  # the history before the bad line is intact


# --------------------------------------------------------------------------------------------
# 2. Oversized tool calls


def test_ten_megabytes_of_bash_arguments_never_block_the_session(home: Path, workdir: Path) -> None:
    huge = "x" * 10_000_000
    calls: list[RecordedRequest] = []

    def provider(request: RecordedRequest) -> Reply:
        calls.append(request)
        if len(calls) == 1:
            return Reply.sse(tool_call_reply(OC, "call_1", "bash", {"command": f": {huge}"}, chunk=65536))
        if len(request.body) > 4 * MAX_TOOL_CALL_CHARS:  # what a real provider answers to 2.6M tokens
            return Reply.json_error(400, {"error": {"message": "This model's maximum context length is 200000 "
                                                               "tokens. However, your messages resulted in 2600000 "
                                                               "tokens.", "code": "context_length_exceeded"}})
        return Reply.sse(text_reply(OC, f"answer {len(calls)}"))

    with ReplayServer(provider) as server:
        configure(home, server)
        first = run_baton(home, workdir, "-p", *MODEL, "go", timeout=180)
        assert first.returncode == 0, first.stderr
        assert first.stdout == "answer 2\n"
        second = run_baton(home, workdir, "-p", "-c", *MODEL, "and now?", timeout=180)
        assert second.returncode == 0, second.stderr
        assert second.stdout == "answer 3\n"
    sent = calls[2].json()["messages"]
    call = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]
    arguments = json.loads(call["function"]["arguments"])
    assert len(arguments["command"]) < 2 * MAX_TOOL_CALL_CHARS and "characters cut here" in arguments["command"]
    stored = session_messages(session_files(home)[0])
    assert stored[1]["content"][0]["arguments"]["command"] == f": {huge}"  # the file keeps it whole


# --------------------------------------------------------------------------------------------
# 3. Endless streams


def _final_error(stdout: str) -> str:
    end = json_lines(stdout)[-1]
    assert end["type"] == "agent_end"
    message: str = end["messages"][-1]["errorMessage"]
    return message


def test_an_endless_sse_line_is_cut_at_the_cap_with_an_error_naming_it(home: Path, workdir: Path) -> None:
    megabyte = b"y" * (1024 * 1024)
    chunks = [b"data: {"] + [megabyte] * (MAX_LINE // len(megabyte) + 2)
    endless = Reply(chunks=chunks, stall_after=len(chunks))  # and then nothing, the line never ends
    with ReplayServer([endless]) as server:
        configure(home, server, retry={"idleTimeoutMs": 5000, "enabled": False})
        result = run_baton(home, workdir, "-p", "--mode", "json", *MODEL, "go")
        assert len(server.requests) == 1  # not retried: the same line would come again
    assert result.returncode == 1
    assert "longer than the 8 MiB limit" in _final_error(result.stdout)


def test_keep_alive_comments_do_not_hold_a_dead_stream_open(home: Path, workdir: Path) -> None:
    # comments keep a thinking model's stream alive past the idle timeout, but not for ever
    comments = Reply(chunks=[b": keep-alive\n\n"] * 600, delay=0.05)  # 30 s of comments, then nothing
    with ReplayServer(lambda request: comments) as server:
        configure(home, server, retry={"idleTimeoutMs": 1000, "requestTimeoutMs": 3000, "enabled": False})
        result = run_baton(home, workdir, "-p", "--mode", "json", *MODEL, "go")
        assert result.returncode == 1
        assert "the time limit for one request (retry.requestTimeoutMs)" in _final_error(result.stdout)


def test_a_stream_that_drips_forever_ends_at_the_request_time_limit(home: Path, workdir: Path) -> None:
    drip = Reply.sse(text_reply(OC, "abcdefghijklmnopqrstuvwxyz" * 8, chunk=1), chunk_size=120, delay=0.25)
    with ReplayServer(lambda request: drip) as server:
        configure(home, server, retry={"requestTimeoutMs": 2000, "baseDelayMs": 10})
        result = run_baton(home, workdir, "-p", "--mode", "json", *MODEL, "go")
        assert len(server.requests) == 1  # the session does not retry a request that used its time up
    assert result.returncode == 1
    error = _final_error(result.stdout)
    assert "the time limit for one request (retry.requestTimeoutMs)" in error
    stored = session_messages(session_files(home)[0])[-1]
    assert stored["stopReason"] == "error" and stored["content"][0]["text"].startswith("abc")  # partial kept


# --------------------------------------------------------------------------------------------
# 4. A dead client


def _endless_answer() -> Reply:
    return Reply.sse(text_reply(OC, ["word "] * 100_000), chunk_size=2048, delay=0.002)


def _read_some(proc: subprocess.Popen[bytes], amount: int = 20_000) -> None:
    assert proc.stdout is not None
    got = 0
    while got < amount:
        chunk = proc.stdout.read1(65536)
        assert chunk, "baton stopped writing"
        got += len(chunk)


def test_rpc_client_that_stops_reading_mid_stream_ends_baton(home: Path, workdir: Path) -> None:
    with ReplayServer(lambda request: _endless_answer()) as server:
        configure(home, server)
        proc = subprocess.Popen(baton_command("--mode", "rpc", *MODEL), cwd=workdir, env=baton_env(home),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(b'{"id": "1", "type": "prompt", "message": "talk"}\n')
            proc.stdin.flush()
            _read_some(proc)
            proc.stdout.close()  # the client is gone; its end of stdin is still open
            assert proc.wait(timeout=30) == 1
        finally:
            stop_if_running(proc)
    stored = session_messages(session_files(home)[0])
    assert stored[-1]["stopReason"] == "aborted" and "word" in stored[-1]["content"][0]["text"]


def test_acp_client_that_stops_reading_mid_stream_ends_baton(home: Path, workdir: Path) -> None:
    with ReplayServer(lambda request: _endless_answer()) as server:
        configure(home, server)
        proc = subprocess.Popen(baton_command("--mode", "acp", *MODEL), cwd=workdir, env=baton_env(home),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stdin is not None and proc.stdout is not None

            def send(message: dict[str, Any]) -> None:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
                proc.stdin.flush()

            send({"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
            json.loads(proc.stdout.readline())
            send({"id": 2, "method": "session/new", "params": {"cwd": str(workdir), "mcpServers": []}})
            session_id = json.loads(proc.stdout.readline())["result"]["sessionId"]
            send({"id": 3, "method": "session/prompt",
                  "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "talk"}]}})
            _read_some(proc)
            proc.stdout.close()
            assert proc.wait(timeout=30) == 1
        finally:
            stop_if_running(proc)
    stored = session_messages(session_files(home)[0])
    assert stored[-1]["stopReason"] == "aborted" and "word" in stored[-1]["content"][0]["text"]


def test_json_mode_reader_that_goes_away_aborts_and_saves(home: Path, workdir: Path) -> None:
    with ReplayServer(lambda request: _endless_answer()) as server:
        configure(home, server)
        proc = subprocess.Popen(baton_command("-p", "--mode", "json", *MODEL, "talk"), cwd=workdir,
                                env=baton_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            _read_some(proc)
            assert proc.stdout is not None
            proc.stdout.close()
            assert proc.wait(timeout=30) == 1
        finally:
            stop_if_running(proc)
    assert session_messages(session_files(home)[0])[-1]["stopReason"] == "aborted"


# --------------------------------------------------------------------------------------------
# 5. Escaping


def test_bidi_overrides_in_command_output_are_shown_not_obeyed(home: Path, workdir: Path) -> None:
    command = "printf 'evil \\342\\200\\256hs.txt and \\342\\201\\246iso\\342\\201\\251 z\\342\\200\\213w'"
    result = run_baton(home, workdir, "-p", "--mode", "json", "--model", "demo/baton-demo", f"run {command}")
    assert result.returncode == 0, result.stderr
    end = next(line for line in json_lines(result.stdout) if line["type"] == "tool_execution_end")
    text = end["result"]["content"][0]["text"]
    assert "evil <U+202E>hs.txt and <U+2066>iso<U+2069> z<U+200B>w" in text
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in text)


def test_markdown_export_of_a_hostile_session_renders_no_markup(home: Path, workdir: Path, tmp_path: Path) -> None:
    from tests.sessions.test_export import hostile_session_file, unsafe_markup

    path = hostile_session_file(tmp_path)
    out = tmp_path / "out.md"
    result = run_baton(home, workdir, "--export", str(path), str(out))
    assert result.returncode == 0, result.stderr
    from markdown_it import MarkdownIt

    assert unsafe_markup(MarkdownIt("commonmark").render(out.read_text())) == []
    assert "<U+202E>" in out.read_text() and "\u202e" not in out.read_text()

"""``baton --mode acp`` as a subprocess, driven by the ACP SDK's client side, against a local
replay server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities, FileSystemCapabilities  # noqa: E402

from tests.process_helpers import processes_with  # noqa: E402
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import baton_command, baton_env, session_messages, stop_if_running, write_models_json  # noqa: E402

AM = "anthropic-messages"
OC = "openai-completions"


class EditorClient:
    """An editor: records updates, serves its (unsaved) buffers and takes writes."""

    def __init__(self, buffers: dict[str, str] | None = None) -> None:
        self.updates: list[dict[str, Any]] = []
        self.buffers = buffers or {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        self.reads.append(path)
        text = self.buffers.get(path)
        return acp.ReadTextFileResponse(content=text if text is not None else Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content)
        return acp.WriteTextFileResponse()

    async def request_permission(self, **kwargs: Any) -> Any:
        raise AssertionError("no permission request expected")

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of_kind(kind))


@pytest.fixture
def workdir(workdir: Path) -> Path:
    (workdir / "notes.txt").write_text("hello from disk\n")
    return workdir


def stalled(api: str, deltas: list[str], sent: int) -> Reply:
    events = [e + b"\n\n" for e in text_reply(api, deltas).split(b"\n\n") if e.strip()]
    return Reply(chunks=events, stall_after=sent)


def acp_command(*args: str) -> list[str]:
    return baton_command("--mode", "acp", *args)


@asynccontextmanager
async def acp_agent(client: Any, home: Path, workdir: Path, *args: str) -> AsyncIterator[Any]:
    """A connection to ``baton --mode acp *args`` run in ``workdir`` on ``home``, for ``client``."""
    cmd = acp_command(*args)
    async with spawn_agent_process(client, cmd[0], *cmd[1:], env=baton_env(home), cwd=str(workdir)) as (conn, _):
        yield conn


async def wait_until(predicate: Any, timeout: float = 20) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def run_story(home: Path, workdir: Path, server: ReplayServer) -> tuple[str, EditorClient]:
    notes = str(workdir / "notes.txt")
    client = EditorClient({notes: "hello from the unsaved buffer\n"})
    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model") as conn:
        init = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.image is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
        options = {o.root.id if hasattr(o, "root") else o.id: o for o in new.config_options or []}
        model_option = options["model"]
        model_option = getattr(model_option, "root", model_option)
        assert model_option.category == "model" and model_option.current_value == "replay-am/replay-model"
        assert {o.value for o in model_option.options} >= {"replay-am/replay-model", "replay-oc/replay-model"}
        assert getattr(options["thinking"], "root", options["thinking"]).category == "thought_level"
        session_id = new.session_id

        # 1. a prompt whose tool calls go through the editor's buffers; a diff comes back
        result = await conn.prompt(session_id=session_id, prompt=[text_block("fix the notes")])
        assert result.stop_reason == "end_turn"
        starts = client.of_kind("tool_call")
        assert [(s["kind"], s["toolCallId"]) for s in starts] == [("read", "toolu_read"), ("edit", "toolu_edit")]
        final = [u for u in client.of_kind("tool_call_update") if u.get("status") == "completed"]
        assert [u["toolCallId"] for u in final] == ["toolu_read", "toolu_edit"]
        edit_done = final[1]
        assert edit_done["content"] == [{"type": "diff", "path": notes, "oldText": "unsaved buffer",
                                         "newText": "edited buffer"}]
        assert edit_done["locations"][0]["path"] == notes and edit_done["locations"][0]["line"] == 1
        assert client.reads == [notes, notes]
        assert client.writes == [(notes, "hello from the edited buffer\n")]
        assert "hello from the unsaved buffer" in json.dumps(server.requests[1].json())  # the editor's text
        assert client.text() == "Reading.Editing.Done."
        assert client.of_kind("usage_update")[-1]["size"] == 200000

        # 2. switch to the other API: a notice (not model text), then the transformed history
        before = len(client.updates)
        changed = await conn.set_config_option(config_id="model", session_id=session_id,
                                               value="replay-oc/replay-model")
        current = [getattr(o, "root", o) for o in changed.config_options]
        assert current[0].current_value == "replay-oc/replay-model"
        await wait_until(lambda: any(u.get("kind") == "switch_mode" for u in client.updates[before:]))
        notice = next(u for u in client.updates[before:] if u.get("kind") == "switch_mode")
        assert notice["status"] == "completed" and "Handoff:" in json.dumps(notice["content"])
        assert notice["_meta"]["baton"]["handoff"]["target"] == "replay-oc/replay-model"
        assert client.text() == "Reading.Editing.Done."  # the notice never appears as model text
        result = await conn.prompt(session_id=session_id, prompt=[text_block("and now?")])
        assert result.stop_reason == "end_turn"
        body = server.requests[3].json()
        assert "messages" in body and "system" not in body  # an OpenAI Chat Completions request
        calls = [c["function"]["name"] for m in body["messages"] for c in m.get("tool_calls") or []]
        assert calls == ["read", "edit"]
        assert [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"] == ["toolu_read", "toolu_edit"]

        # 3. cancel mid-stream: the prompt answers "cancelled", the partial is saved as aborted
        prompt_task = asyncio.create_task(conn.prompt(session_id=session_id, prompt=[text_block("go on")]))
        await wait_until(lambda: "Partial" in client.text())
        await conn.cancel(session_id=session_id)
        result = await asyncio.wait_for(prompt_task, 20)
        assert result.stop_reason == "cancelled"

        # 4. the unstable session/set_model switches back
        await conn._conn.send_request("session/set_model", {"sessionId": session_id,
                                                             "modelId": "replay-am/replay-model"})

        # 5. /compact is a built-in command: the summary arrives as a notice
        commands = client.of_kind("available_commands_update")[0]["availableCommands"]
        assert "compact" in [c["name"] for c in commands]
        result = await conn.prompt(session_id=session_id, prompt=[text_block("/compact the edits")])
        assert result.stop_reason == "end_turn"
        assert "Summary of the edits." in json.dumps(client.updates[-2:])
        assert "the edits" in json.dumps([r.json() for r in server.requests[-2:]])  # the focus was used
    return session_id, client


def test_acp_story_and_load_in_a_new_process(home: Path, workdir: Path) -> None:
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_read", "read", {"path": "notes.txt"}, text="Reading.")),
        Reply.sse(tool_call_reply(AM, "toolu_edit", "edit",
                                  {"path": "notes.txt", "oldText": "unsaved buffer", "newText": "edited buffer"},
                                  text="Editing.")),
        Reply.sse(text_reply(AM, "Done.")),
        Reply.sse(text_reply(OC, "Hello from the other API.")),
        stalled(OC, ["Partial ", "answer ", "that ", "never ", "ends"], sent=2),
        Reply.sse(text_reply(AM, "## Goal\nSummary of the edits.")),
        Reply.sse(text_reply(AM, "Turn prefix summary.")),  # the split turn's beginning
    ]
    (home / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url),
                                 "replay-oc": models_json_provider(OC, server.url)})
        session_id, _ = asyncio.run(run_story(home, workdir, server))
        [path] = sorted((home / "sessions").rglob(f"*{session_id}.jsonl"))
        aborted = [m for m in session_messages(path) if m["role"] == "assistant"][-1]
        assert aborted["stopReason"] == "aborted" and "Partial" in json.dumps(aborted["content"])
        assert (workdir / "notes.txt").read_text() == "hello from the edited buffer\n"

        # 5. a new process loads the session: the history is replayed as updates
        async def load() -> tuple[EditorClient, Any]:
            client = EditorClient()
            async with acp_agent(client, home, workdir) as conn:
                await conn.initialize(protocol_version=1)
                loaded = await conn.load_session(cwd=str(workdir), session_id=session_id, mcp_servers=[])
            return client, loaded

        client, loaded = asyncio.run(load())
    users = [u["content"]["text"] for u in client.of_kind("user_message_chunk")]
    assert users == ["fix the notes", "and now?", "go on"]
    assert client.text() == "Reading.Editing.Done.Hello from the other API.Partial "
    calls = client.of_kind("tool_call")
    assert [(c["toolCallId"], c["status"]) for c in calls] == [("toolu_read", "completed"), ("toolu_edit", "completed")]
    assert calls[1]["content"][0]["type"] == "diff"
    model_option = getattr(loaded.config_options[0], "root", loaded.config_options[0])
    assert model_option.current_value == "replay-am/replay-model"  # the session's own model


def _rpc(proc: subprocess.Popen[bytes], payload: bytes) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_acp_malformed_json_rpc_gets_errors_and_the_process_survives(home: Path, workdir: Path) -> None:
    proc = subprocess.Popen(acp_command("--model", "demo/baton-demo"), cwd=workdir, env=baton_env(home),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        error = _rpc(proc, b"{this is not json")
        assert error["id"] is None and error["error"]["code"] == -32700
        error = _rpc(proc, b"[1, 2]")
        assert error["error"]["code"] == -32600
        error = _rpc(proc, b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}')
        assert error["id"] == 7 and "protocolVersion" in error["error"]["message"]
        init = _rpc(proc, b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}')
        assert init["result"]["protocolVersion"] == 1 and init["result"]["authMethods"] == []
        relative = _rpc(proc, b'{"jsonrpc": "2.0", "id": 2, "method": "session/new", '
                              b'"params": {"cwd": "relative/dir", "mcpServers": []}}')
        assert relative["error"]["code"] == -32602 and "absolute" in relative["error"]["message"]
        new = _rpc(proc, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/new",
                                     "params": {"cwd": str(workdir), "mcpServers": []}}).encode())
        session_id = new["result"]["sessionId"]
        assert new["result"]["models"]["currentModelId"] == "demo/baton-demo"
        commands = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        assert commands["method"] == "session/update"
        unknown = _rpc(proc, b'{"jsonrpc": "2.0", "id": 4, "method": "session/fly", "params": {}}')
        assert unknown["id"] == 4 and unknown["error"]["code"] == -32601
        bad = _rpc(proc, json.dumps({"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
                                     "params": {"sessionId": session_id}}).encode())
        assert bad["id"] == 5 and bad["error"]["code"] == -32602
        wrong = _rpc(proc, json.dumps({"jsonrpc": "2.0", "id": 6, "method": "session/set_config_option",
                                       "params": {"sessionId": session_id, "configId": "model",
                                                  "value": "nope/none"}}).encode())
        assert wrong["error"]["code"] == -32602 and "nope/none" in wrong["error"]["message"]
        error = _rpc(proc, b"garbage again")
        assert error["error"]["code"] == -32700
        again = _rpc(proc, b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 3}}')
        assert again["result"]["protocolVersion"] == 1
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        stop_if_running(proc)


def test_acp_without_a_key_reports_an_error_the_editor_can_show(home: Path, workdir: Path) -> None:
    proc = subprocess.Popen(acp_command(), cwd=workdir, env=baton_env(home),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _rpc(proc, b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}')
        new = _rpc(proc, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                                     "params": {"cwd": str(workdir), "mcpServers": []}}).encode())
        assert new["error"]["code"] == -32000 and "API key" in new["error"]["message"]
    finally:
        proc.kill()
        proc.wait()


class TerminalEditor(EditorClient):
    """An editor offering terminals: each runs as a real local process."""

    def __init__(self) -> None:
        super().__init__()
        self.terminals: dict[str, asyncio.subprocess.Process] = {}
        self.created: list[tuple[str, list[str], str | None]] = []
        self.released: list[str] = []

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: Any = None, cwd: str | None = None, output_byte_limit: int | None = None,
                              **kwargs: Any) -> Any:
        self.created.append((command, list(args or []), cwd))
        proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = proc
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        code = await self.terminals[terminal_id].wait()
        return acp.WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        proc = self.terminals[terminal_id]
        assert proc.stdout is not None
        output = (await proc.stdout.read()).decode()
        status = acp.schema.TerminalExitStatus(exit_code=proc.returncode) if proc.returncode is not None else None
        return acp.TerminalOutputResponse(output=output, truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.terminals[terminal_id].kill()
        return acp.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.released.append(terminal_id)
        return acp.ReleaseTerminalResponse()


def test_acp_bash_runs_in_the_editors_terminal(home: Path, workdir: Path) -> None:
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_sh", "bash", {"command": "echo from-the-terminal; exit 3"})),
        Reply.sse(text_reply(AM, "It failed with 3.")),
    ]

    async def story(server: ReplayServer) -> TerminalEditor:
        client = TerminalEditor()
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--no-session") as conn:
            await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities(terminal=True))
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("run it")])
            assert result.stop_reason == "end_turn"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story(server))
        sent = json.dumps(server.requests[1].json())
    [(command, args, cwd)] = client.created
    assert command.endswith("env") and args[0] == "-i" and cwd == str(workdir)  # baton's scrubbed environment
    assert args[-3].endswith("bash") and args[-2:] == ["-c", "echo from-the-terminal; exit 3"]
    assert client.released == ["term-1"]
    assert "from-the-terminal" in sent and "Command exited with code 3" in sent
    final = [u for u in client.of_kind("tool_call_update") if u.get("status")][-1]
    assert final["status"] == "failed" and final["content"] == [{"type": "terminal", "terminalId": "term-1"}]


def test_acp_background_commands_are_batons_own_when_the_editor_has_terminals(home: Path, workdir: Path) -> None:
    # An editor's terminal lives only as long as its call: a background command runs as baton's own
    # (the same permission decision and sandbox), and bash_output reads it.
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_bg", "bash", {
            "command": "echo from-the-background; touch started; sleep 30", "run_in_background": True})),
        Reply.sse(tool_call_reply(AM, "toolu_out", "bash",
                                  {"command": "for i in $(seq 100); do [ -e started ] && break; sleep 0.1; done"})),
        Reply.sse(tool_call_reply(AM, "toolu_read", "bash_output", {"bash_id": "bash_1"})),
        Reply.sse(text_reply(AM, "Read it.")),
    ]

    async def story(server: ReplayServer) -> TerminalEditor:
        client = TerminalEditor()
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--no-session",
                             "--approval", "full") as conn:
            await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities(terminal=True))
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("run it")])
            assert result.stop_reason == "end_turn"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story(server))
        sent = json.dumps(server.requests[-1].json())
    assert len(client.created) == 1, "only the foreground call ran in a terminal"
    assert "Command running in background with ID: bash_1" in sent
    assert "<status>running</status>" in sent and "from-the-background" in sent, sent


def test_acp_cancel_kills_a_running_command(home: Path, workdir: Path) -> None:
    marker = workdir / "still-running"
    command = f"sleep 30; touch {marker}"
    replies = [Reply.sse(tool_call_reply(AM, "toolu_sleep", "bash", {"command": command}))]

    async def story() -> tuple[Any, float]:
        client = EditorClient()
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            task = asyncio.create_task(conn.prompt(session_id=new.session_id, prompt=[text_block("wait")]))
            await wait_until(lambda: any(u.get("status") == "in_progress" for u in client.updates))
            await asyncio.sleep(0.3)
            started = asyncio.get_running_loop().time()
            await conn.cancel(session_id=new.session_id)
            result = await asyncio.wait_for(task, 20)
            elapsed = asyncio.get_running_loop().time() - started
            assert processes_with(str(marker)) == []  # killed by the cancel, baton still running
            return result, elapsed

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        result, elapsed = asyncio.run(story())
        assert len(server.requests) == 1  # nothing was sent after the cancel
    assert result.stop_reason == "cancelled" and elapsed < 10
    [path] = sorted((home / "sessions").rglob("*.jsonl"))
    tool_result = [m for m in session_messages(path) if m["role"] == "toolResult"][-1]
    assert tool_result["isError"] is True and "aborted" in json.dumps(tool_result["content"]).lower()


class ApprovingEditor(EditorClient):
    """Answers permission requests from a script: one option id (or "cancel") per request."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[Any] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.asked.append((tool_call, [o.option_id for o in options]))
        answer = self.answers.pop(0)
        if answer == "cancel":
            return acp.RequestPermissionResponse(outcome=acp.schema.DeniedOutcome(outcome="cancelled"))
        return acp.RequestPermissionResponse(outcome=acp.schema.AllowedOutcome(outcome="selected", option_id=answer))


def test_acp_permission_requests_answered_allow_and_reject(home: Path, workdir: Path) -> None:
    pytest.importorskip("baton.sessions.permissions", reason="the permissions feature is not in this build")
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_w1", "write", {"path": "allowed.txt", "content": "yes\n"})),
        Reply.sse(tool_call_reply(AM, "toolu_w2", "write", {"path": "rejected.txt", "content": "no\n"})),
        Reply.sse(text_reply(AM, "One written, one refused.")),
    ]

    async def story() -> ApprovingEditor:
        client = ApprovingEditor(["allow_once", "reject_once"])
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--approval", "ask") as conn:
            await conn.initialize(protocol_version=1)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("write both")])
            assert result.stop_reason == "end_turn"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story())
        last_request = json.dumps(server.requests[-1].json())
    assert (workdir / "allowed.txt").read_text() == "yes\n"
    assert not (workdir / "rejected.txt").exists()
    assert [call.tool_call_id for call, _ in client.asked] == ["toolu_w1", "toolu_w2"]
    first_call, options = client.asked[0]
    assert options[0] == "allow_once" and options[-1] == "reject_once"
    assert first_call.kind == "edit" and first_call.content and first_call.content[0].type == "diff"
    assert "denied" in last_request.lower()  # the model was told the user refused
    statuses = {u["toolCallId"]: u["status"] for u in client.of_kind("tool_call_update") if u.get("status")}
    assert statuses == {"toolu_w1": "completed", "toolu_w2": "failed"}


def test_acp_client_mcp_servers_and_prompt_templates(home: Path, workdir: Path, tmp_path: Path) -> None:
    server_app = Path(__file__).resolve().parents[1] / "tools" / "mcp" / "server_app.py"
    prompts = workdir / ".baton" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review a file\nargument-hint: FILE\n---\n"
                                       "Review $1 with great care.\n")
    markers = tmp_path / "markers"
    markers.mkdir()
    replies = [
        Reply.sse(tool_call_reply(AM, "toolu_mcp", "mcp__editor__shout", {"text": "hello"})),
        Reply.sse(text_reply(AM, "Shouted.")),
    ]

    async def story() -> EditorClient:
        client = EditorClient()
        # MCP tools ask in the default approval mode; this test is about MCP and templates.
        async with acp_agent(client, home, workdir, "--model", "replay-am/replay-model", "--approval", "full") as conn:
            await conn.initialize(protocol_version=1)
            server = acp.schema.McpServerStdio(
                name="editor", command=sys.executable, args=[str(server_app), "stdio"],
                env=[acp.schema.EnvVariable(name="MCP_TEST_MARKERS", value=str(markers)),
                     acp.schema.EnvVariable(name="MCP_TEST_NAME", value="editor")])
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[server])
            await wait_until(lambda: client.of_kind("available_commands_update"))
            result = await conn.prompt(session_id=new.session_id, prompt=[text_block("/review app.py")])
            assert result.stop_reason == "end_turn"
        return client

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        client = asyncio.run(story())
        first, second = (json.dumps(r.json()) for r in server.requests)
    commands = {c["name"]: c for c in client.of_kind("available_commands_update")[0]["availableCommands"]}
    assert commands["review"]["description"] == "Review a file" and commands["review"]["input"]["hint"] == "FILE"
    assert "Review app.py with great care." in first and "mcp__editor__shout" in first  # expanded; tool offered
    assert "HELLO" in second  # the editor's MCP server answered the call
    start = client.of_kind("tool_call")[0]
    assert start["title"] == "editor › shout" and start["kind"] == "other"

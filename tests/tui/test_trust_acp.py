"""An editor's terminal and file access are no way around the permission gate: ``baton --mode
acp`` driven by the ACP SDK's client side, which runs terminals as real local processes and
serves file reads and writes from the disk; the tool calls come from a hostile local provider."""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp")

from acp import text_block  # noqa: E402
from acp.schema import ClientCapabilities, FileSystemCapabilities  # noqa: E402

from baton.tools.sandbox import probe  # noqa: E402
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply  # noqa: E402
from tests.replay_server import ReplayServer, Reply  # noqa: E402
from tests.tui.cli_harness import write_models_json  # noqa: E402
from tests.tui.test_acp_mode import AM, EditorClient, TerminalEditor, acp_agent  # noqa: E402

MODEL = ("--model", "replay-am/replay-model")


class JudgedEditor(TerminalEditor):
    """Terminals and files, and permission questions answered from a script."""

    def __init__(self, answers: list[str], on_read: Any = None) -> None:
        super().__init__()
        self.answers = answers
        self.asked: list[str] = []
        self.on_read = on_read

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.asked.append(tool_call.title)
        answer = self.answers.pop(0) if self.answers else "reject_once"
        return acp.RequestPermissionResponse(outcome=acp.schema.AllowedOutcome(outcome="selected", option_id=answer))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        if self.on_read is not None:
            self.on_read(path)
        return await super().read_text_file(session_id, path, **kwargs)


def _run(home: Path, workdir: Path, client: EditorClient, replies: list[Reply], capabilities: Any,
         prompts: int = 1) -> list[dict[str, Any]]:
    async def story() -> None:
        async with acp_agent(client, home, workdir, *MODEL, "--no-session") as conn:
            await conn.initialize(protocol_version=1, client_capabilities=capabilities)
            new = await conn.new_session(cwd=str(workdir), mcp_servers=[])
            for _ in range(prompts):
                await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])

    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider(AM, server.url)})
        asyncio.run(story())
        return [r.json() for r in server.requests]


@pytest.mark.skipif(not probe().available, reason="the sandbox (bwrap) cannot run here")
def test_an_editor_terminal_runs_commands_in_the_sandbox_without_the_editors_keys(
    home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The editor (this test process) holds a key; its terminals inherit its environment.
    monkeypatch.setenv("EDITOR_SERVICE_API_KEY", "sk-editor-secret")
    outside = Path("/var/tmp") / f"baton-acp-{uuid.uuid4().hex}"
    command = f'echo "key=[$EDITOR_SERVICE_API_KEY]"; touch {outside}'
    replies = [Reply.sse(tool_call_reply(AM, "toolu_sh", "bash", {"command": command})),
               Reply.sse(text_reply(AM, "It was blocked."))]
    client = JudgedEditor(["reject_once"])  # "run it without the sandbox?" — no
    try:
        requests = _run(home, workdir, client, replies, ClientCapabilities(terminal=True))
        assert not outside.exists()  # default mode: the sandbox held, as for local bash
    finally:
        outside.unlink(missing_ok=True)
    [(_, args, _)] = client.created
    assert any(arg.endswith("bwrap") for arg in args) and "--unshare-net" in args
    sent = json.dumps(requests[1])
    assert "key=[]" in sent and "sk-editor-secret" not in sent  # not in the command's environment
    assert client.asked == [f"Run without the sandbox: bash({command})"]  # the gate's question, not a bypass


def test_an_editor_is_never_handed_a_path_that_leads_out_of_the_workspace(
    home: Path, workdir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("hello from outside\n")
    sub = workdir / "sub"
    sub.mkdir()
    (sub / "notes.txt").write_text("hello\n")

    def swap(path: str) -> None:  # a background job swaps the checked folder for a symlink
        if path == str(sub / "notes.txt") and sub.is_dir() and not sub.is_symlink():
            (sub / "notes.txt").rename(tmp_path / "moved.txt")
            sub.rmdir()
            sub.symlink_to(outside)

    replies = [
        Reply.sse(tool_call_reply(AM, "t1", "write", {"path": ".baton/settings.json", "content": "{}"})),
        Reply.sse(text_reply(AM, "Refused.")),
        Reply.sse(tool_call_reply(AM, "t2", "edit", {"path": "sub/notes.txt", "oldText": "hello", "newText": "bye"})),
        Reply.sse(text_reply(AM, "Edited.")),
        Reply.sse(tool_call_reply(AM, "t3", "write", {"path": "plain.txt", "content": "plain\n"})),
        Reply.sse(text_reply(AM, "Written.")),
    ]
    client = JudgedEditor(["reject_once"], on_read=swap)
    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    _run(home, workdir, client, replies, capabilities, prompts=3)
    assert client.asked == ["write(.baton/settings.json)"]  # protected: asked, as for a local write
    assert not (workdir / ".baton").exists()
    written = [path for path, _ in client.writes]
    assert str(sub / "notes.txt") not in written  # the editor would follow the swapped-in symlink
    assert written == [str(workdir / "plain.txt")]  # a plain path inside still goes through the editor


def test_an_editor_terminal_gets_the_whole_sandbox_seccomp_filter_included(home: Path, workdir: Path) -> None:
    # The editor starts the command itself, so no descriptor can carry the seccomp filter: it is
    # read from a file. A Unix socket (the way to a tmux server or an SSH agent) stays refused, and
    # the command sees only its own PID namespace.
    command = ("python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -n 1; "
               "echo pids=$(ls /proc | grep -c '^[0-9]')")
    replies = [Reply.sse(tool_call_reply(AM, "toolu_sh", "bash", {"command": command})),
               Reply.sse(text_reply(AM, "Done."))]
    client = JudgedEditor(["reject_once"])
    requests = _run(home, workdir, client, replies, ClientCapabilities(terminal=True))
    [(_, args, _)] = client.created
    assert "--seccomp" in args
    sent = json.dumps(requests[1])
    assert "Operation not permitted" in sent
    pids = int(re.search(r"pids=(\d+)", sent).group(1))  # type: ignore[union-attr]
    host = sum(name.isdigit() for name in os.listdir("/proc"))
    assert pids <= 8 < host, (pids, host)  # the shell, its pipeline and bwrap's init: nothing of the host

"""The installed ``baton`` in tmux asks before running a command, and runs it once approved."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from tests.process_helpers import wait_until
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_env, read_entries, session_files, write_models_json
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

API = "openai-completions"


def test_approving_one_command_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    replies = [Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": "echo tmux-approved > approved.txt"})),
               Reply.sse(text_reply(API, "File made."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        env = baton_env(home, TERM="xterm-256color")
        exit_file = tmp_path / "exit-code"
        tmux = Tmux(baton_command_line(workdir, env, "--approval ask --model replay/replay-model",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"))
        try:
            footer = tmux.wait_for(lambda p: "replay/replay-model" in p, "the editor and footer")
            assert "ask · " in footer
            tmux.type("make the file")
            tmux.send("Enter")
            asked = tmux.wait_for(lambda p: "Allow bash(echo tmux-approved > approved.txt)?" in p, "the question")
            assert not (workdir / "approved.txt").exists()
            tmux.send("y")
            done = tmux.wait_for(lambda p: "File made." in p, "the final answer")
            tmux.send("C-d")
            wait_until(exit_file.exists, 15, interval=0.1)
        finally:
            tmux.kill()
    assert "y allow once · a allow always" in asked
    assert "tmux-approved" in done
    assert (workdir / "approved.txt").read_text() == "tmux-approved\n"
    assert exit_file.read_text().strip() == "0"
    entries = read_entries(session_files(home)[0])
    decisions = [e["data"] for e in entries if e.get("customType") == "permission_decision"]
    assert [(d["toolCallId"], d["decision"], d["decidedBy"]) for d in decisions] == [("call_1", "allow", "user")]

"""The installed ``baton`` in tmux: a tool run changes files, Esc Esc rewinds code and conversation."""

from __future__ import annotations

import shlex
import shutil
import time
from pathlib import Path

import pytest

from baton.sessions.checkpoints.git import find_git
from tests.process_helpers import wait_until
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_env, write_models_json
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(find_git() is None, reason="git is not installed"),
]
API = "anthropic-messages"


def test_escape_twice_rewinds_code_and_conversation_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    (workdir / "keep.txt").write_text("original\n")
    replies = [
        Reply.sse(tool_call_reply(API, "toolu_1", "bash", {"command": "echo made > made.txt; echo agent > keep.txt"})),
        Reply.sse(text_reply(API, "Files changed.")),
    ]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        env = baton_env(home, TERM="xterm-256color")
        exit_file = tmp_path / "exit-code"
        tmux = Tmux(baton_command_line(workdir, env, "--model replay/replay-model",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"), width=120, height=36)
        try:
            tmux.wait_for(lambda p: "replay/replay-model" in p, "the editor and footer")
            tmux.type("change the files")
            tmux.send("Enter")
            tmux.wait_for(lambda p: "Files changed." in p, "the answer")
            assert (workdir / "made.txt").exists() and (workdir / "keep.txt").read_text() == "agent\n"
            deadline = time.monotonic() + 20
            while "Rewind to" not in tmux.pane() and time.monotonic() < deadline:
                tmux.send("Escape")
                time.sleep(0.35)
                tmux.send("Escape")
                time.sleep(1.0)
            picker = tmux.wait_for(lambda p: "Rewind to" in p, "the rewind picker")
            assert "change the files" in picker and "+1 ~1" in picker and "replay-model" in picker
            tmux.send("Enter")
            tmux.wait_for(lambda p: "Code and conversation" in p, "the choices")
            tmux.send("Enter")
            done = tmux.wait_for(lambda p: "restored 1 file, removed 1" in p, "the rewind summary")
            assert "the prompt is back in the editor" in done
            assert (workdir / "keep.txt").read_text() == "original\n" and not (workdir / "made.txt").exists()
            tmux.send("C-c")
            time.sleep(0.3)
            tmux.send("C-d")
            exited = wait_until(exit_file.exists, 15, interval=0.1)
            assert exited, f"baton did not quit; the pane shows:\n{tmux.pane()}"
        finally:
            tmux.kill()
    assert exit_file.read_text().strip() == "0"

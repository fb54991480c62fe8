"""The installed ``baton`` in tmux (issue 27 §2, §3): Shift+Tab into plan mode, the model's task
list pinned above the editor while it works, its plan accepted with one key, the work done, the
list folded to one line when the run ends."""

from __future__ import annotations

import shlex
import shutil
import threading
from pathlib import Path

import pytest

from tests.process_helpers import wait_until
from tests.provider_scripts import models_json_provider, parallel_calls_reply, text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import baton_env, write_models_json
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

API = "openai-completions"
TODOS = [{"content": "Write out.txt", "status": "in_progress", "activeForm": "Writing out.txt"},
         {"content": "Say so", "status": "pending", "activeForm": "Saying so"}]
DONE = [{**todo, "status": "completed"} for todo in TODOS]


class Planner:
    """Keeps a task list, proposes a plan, then (once the test saw the list) does the work."""

    def __init__(self) -> None:
        self.step = 0
        self.list_seen = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        step, self.step = self.step, self.step + 1
        if step == 0:
            return Reply.sse(parallel_calls_reply([("t1", "todo_write", {"todos": TODOS})]))
        if step == 1:
            return Reply.sse(parallel_calls_reply([("x1", "exit_plan_mode", {"plan": "## Plan\n\n- write out.txt"})]))
        if step == 2:
            self.list_seen.wait(20)
            return Reply.sse(parallel_calls_reply([("w1", "write", {"path": "out.txt", "content": "planned\n"})]))
        if step == 3:
            return Reply.sse(parallel_calls_reply([("t2", "todo_write", {"todos": DONE})]))
        return Reply.sse(text_reply(API, "All done."))


def test_plan_mode_and_the_task_list_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    model = Planner()
    with ReplayServer(model) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        env = baton_env(home, TERM="xterm-256color")
        exit_file = tmp_path / "exit-code"
        tmux = Tmux(baton_command_line(workdir, env, "--approval ask --model replay/replay-model",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"))
        try:
            tmux.wait_for(lambda p: "ask · " in p and "context" in p, "the app's footer in ask mode")
            tmux.send("BTab")
            tmux.wait_for(lambda p: "plan · read-only" in p, "plan mode in the footer")
            tmux.type("write out.txt")
            tmux.send("Enter")
            review = tmux.wait_for(lambda p: "The plan — start the work?" in p, "the plan to review")
            tmux.send("a")
            pinned = tmux.wait_for(lambda p: "Tasks (0/2 done)" in p and "▶ Writing out.txt" in p,
                                   "the task list pinned while the agent works")
            model.list_seen.set()
            folded = tmux.wait_for(lambda p: "All done." in p and "Tasks 2/2 done" in p, "the list folded")
            tmux.send("C-d")
            wait_until(exit_file.exists, 15, interval=0.1)
        finally:
            model.list_seen.set()
            tmux.kill()
    assert "write out.txt" in review and "a accept, auto mode" in review
    assert "☐ Say so" in pinned
    assert "auto · " in folded and "Saying so" not in folded.split("All done.")[-1]
    assert (workdir / "out.txt").read_text() == "planned\n"
    assert exit_file.read_text().strip() == "0"

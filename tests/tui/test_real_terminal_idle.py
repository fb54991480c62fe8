"""An idle app does nothing: the installed program in tmux, left alone on a ready editor, is not
woken by any timer or poll (counted as the context switches of its threads, from /proc), and a key
typed afterwards still arrives at once."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.tui.cli_harness import baton_env
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None or not Path("/proc/self/task").is_dir(),
                                reason="needs tmux and /proc")

QUIET_WINDOW_S = 3.0
"""How long the app is watched; a 10 Hz poll would switch about 30 times in it."""


def _baton_pid(tmux: Tmux) -> int:
    """The baton process in the pane (the pane runs a shell that runs ``env -i ... baton``)."""
    shell = int(subprocess.run(["tmux", "display-message", "-p", "-t", tmux.name, "#{pane_pid}"],
                               capture_output=True, text=True, check=True).stdout.strip())
    todo = [shell]
    while todo:
        pid = todo.pop()
        if Path(f"/proc/{pid}/comm").read_text().strip() == "baton":
            return pid
        for task in Path(f"/proc/{pid}/task").iterdir():
            children = (task / "children").read_text().split()
            todo.extend(int(child) for child in children)
    raise AssertionError("no baton process under the pane")


def _switches(pid: int) -> dict[str, int]:
    """Context switches (voluntary + not) of each of ``pid``'s threads, by thread id."""
    counts = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue  # the thread ended meanwhile
        counts[task.name] = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return counts


@pytest.mark.parametrize("mode", ["", "--inline"])
def test_a_ready_app_left_alone_is_not_woken_and_still_takes_keys(home: Path, workdir: Path, mode: str) -> None:
    """Full screen and ``--inline`` (Textual's inline driver polled its input ten times a second)."""
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, f"--model demo/baton-demo {mode}", "; sleep 30"))
    try:
        tmux.wait_for(lambda p: "context" in p and "Starting" not in p, "the app with its session")
        pid = _baton_pid(tmux)
        # Start-up work that ends by itself (MCP start after a delay, the tokenizer loading) is
        # over once the threads have stopped switching for a moment.
        deadline = time.monotonic() + 10
        before = _switches(pid)
        while time.monotonic() < deadline:
            time.sleep(1.0)
            now = _switches(pid)
            settled = now == before
            before = now
            if settled:
                break
        time.sleep(QUIET_WINDOW_S)
        after = _switches(pid)
        woken = {tid: after[tid] - before.get(tid, 0) for tid in after if after[tid] != before.get(tid, 0)}
        assert sum(woken.values()) <= 2, f"threads woken while idle (thread id: switches): {woken}"
        tmux.type("still here")
        tmux.wait_for(lambda p: "still here" in p, "the key typed after the idle time")
    finally:
        tmux.kill()

"""Keys typed into the first frame, before the app is up, act as if typed into the app: the
installed program in tmux, keys sent while the frame (or the app's "Starting" screen) shows.

A key the app binds to the session (Shift+Tab: the approval mode) waits for the session rather
than being dropped, in order with the prompt typed after it; a bracketed paste goes through the
app's paste filter (an escape sequence or a fake end marker in the pasted text is text, never a
key); Ctrl+D on the frame's empty editor quits at once."""

from __future__ import annotations

import json
import os
import select
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_env, write_models_json
from tests.tui.test_real_terminal import Tmux, baton_command_line

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _starting(tmux: Tmux) -> None:
    """Wait for the first frame (the session is not open yet: keys typed now are early)."""
    tmux.wait_for(lambda p: "Starting" in p and "Message baton" in p, "the first frame")


def _ready(pane: str) -> bool:
    return "context" in pane and "Starting" not in pane


def test_shift_tab_and_a_prompt_typed_early_act_in_order_once_the_app_is_up(home: Path, workdir: Path) -> None:
    """Shift+Tab (ask → plan) and then a prompt with Enter, typed into the first frame: the footer
    shows plan mode, and the prompt is sent once, in plan mode (it came after the Shift+Tab)."""
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "Planned answer."))]) as server:
        write_models_json(home, {"replay-am": models_json_provider("anthropic-messages", server.url)})
        env = baton_env(home, TERM="xterm-256color")
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-am/replay-model --approval ask", "; sleep 30"))
        try:
            _starting(tmux)
            tmux.send("BTab")
            tmux.type("early prompt")
            tmux.send("Enter")
            pane = tmux.wait_for(lambda p: _ready(p) and "Planned answer." in p, "the answer")
            assert "plan · read-only" in pane, pane
        finally:
            tmux.kill()
        requests = [r.json() for r in server.requests]
    assert len(requests) == 1, requests
    assert json.dumps(requests[0]).count("early prompt") == 1
    tools = [tool["name"] for tool in requests[0]["tools"]]
    assert "exit_plan_mode" in tools, f"sent before the mode changed: {tools}"


def test_a_paste_typed_early_is_text_whatever_it_holds(home: Path, workdir: Path) -> None:
    """A bracketed paste whose text holds Shift+Tab's sequence, a fake end marker and a carriage
    return (a terminal such as tmux passes ESC bytes in pasted text through): all of it lands in
    the editor as text; the mode does not change and nothing is sent."""
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "Should not be asked."))]) as server:
        write_models_json(home, {"replay-am": models_json_provider("anthropic-messages", server.url)})
        env = baton_env(home, TERM="xterm-256color")
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-am/replay-model --approval ask", "; sleep 30"))
        try:
            _starting(tmux)
            pasted = "\x1b[200~one \x1b[Z\x1b[201~two\rthree\x1b[201~"
            tmux.send("-H", *(f"{byte:02x}" for byte in pasted.encode()))
            pane = tmux.wait_for(lambda p: _ready(p) and "three" in p, "the pasted text in the editor")
            time.sleep(1.0)  # a send would show by now (the reply is local)
            pane = tmux.pane()
            requests = list(server.requests)
        finally:
            tmux.kill()
    assert not requests, "the paste was sent"
    assert "ask · " in pane and "plan · read-only" not in pane, pane
    assert "one [Z[201~two" in pane and "three" in pane, pane


FRAME_SCRIPT = """
import time
from baton.tui.app.instant_frame import InstantFrame
frame = InstantFrame.start("test")
try:
    print("\\r\\nREADY", flush=True)
    time.sleep(20)
    print("\\r\\nSLEPT", flush=True)
except KeyboardInterrupt:
    frame.close()
    print("\\r\\nQUIT" if frame.quit_requested else "\\r\\nINTERRUPTED", flush=True)
"""


def _read_until(master: int, needle: bytes, timeout: float = 30.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.parametrize(("keys", "quits"), [(b"\x04", True), (b"ab\x7f\x7f\x04", True), (b"a\x04", False),
                                             (b"\x1b[A\x04", False)])
def test_ctrl_d_on_the_frames_empty_editor_quits_at_once(keys: bytes, quits: bool) -> None:
    """Ctrl+D quits from the frame as the app would (on an empty editor), without waiting for
    the app; after text, or a key the frame cannot follow (Up recalls history), it is the app's."""
    pid, master = os.forkpty()
    if pid == 0:  # pragma: no cover - the child
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-c", FRAME_SCRIPT])
    try:
        assert b"READY" in _read_until(master, b"READY")
        os.write(master, keys)
        out = _read_until(master, b"QUIT" if quits else b"SLEPT", timeout=3.0 if not quits else 30.0)
        if quits:
            assert b"QUIT" in out, out
            assert b"\x1b[?1049l" in out  # the terminal given back
        else:
            assert b"QUIT" not in out and b"INTERRUPTED" not in out, out
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(master)

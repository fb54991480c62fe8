"""Keys typed into the first frame, before the app is up, act as if typed into the app: the
installed program in tmux, keys sent while the frame (or the app's "Starting" screen) shows.

A key the app binds to the session (Shift+Tab: the approval mode) waits for the session rather
than being dropped, in order with the prompt typed after it; a bracketed paste goes through the
app's paste filter (an escape sequence or a fake end marker in the pasted text is text, never a
key); Ctrl+D on the frame's empty editor quits at once."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import struct
import sys
import termios
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


def test_shift_tab_typed_while_the_inline_app_starts_waits_for_the_session(home: Path, workdir: Path) -> None:
    """``--inline`` has no first frame: Shift+Tab typed as baton starts reaches the app before its
    session is open, and waits for it there rather than being dropped."""
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo --approval ask --inline", "; sleep 30"))
    try:
        tmux.send("BTab")
        pane = tmux.wait_for(lambda p: _ready(p) and "read-only" in p, "the app in plan mode")
        assert "plan · read-only" in pane, pane
    finally:
        tmux.kill()


def test_a_paste_typed_early_is_text_whatever_it_holds(home: Path, workdir: Path) -> None:
    """A bracketed paste whose text holds Shift+Tab's sequence, a fake end marker, a carriage
    return, Ctrl+C and Ctrl+D (a terminal such as tmux passes ESC bytes in pasted text through):
    all of it lands in the editor as text; the mode does not change, nothing is sent, baton does
    not quit."""
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "Should not be asked."))]) as server:
        write_models_json(home, {"replay-am": models_json_provider("anthropic-messages", server.url)})
        env = baton_env(home, TERM="xterm-256color")
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-am/replay-model --approval ask", "; sleep 30"))
        try:
            _starting(tmux)
            pasted = "\x1b[200~one \x1b[Z\x1b[201~two\r\x03\x04three\x1b[201~"
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
print("\\r\\nREADY", flush=True)
time.sleep(600)
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
                                             (b"\x1b[A\x04", False), (b"\x0c\x04", False)])
def test_ctrl_d_on_the_frames_empty_editor_quits_at_once(keys: bytes, quits: bool) -> None:
    """Ctrl+D quits from the frame as the app would (on an empty editor), without waiting for
    the app, the terminal given back; after text, or a key the frame cannot follow (Up recalls
    history, Ctrl+L opens a picker), it is left to the app."""
    pid, master = os.forkpty()
    if pid == 0:  # pragma: no cover - the child
        os.environ["TERM"] = "xterm-256color"
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # the frame paints its editor
        os.execv(sys.executable, [sys.executable, "-c", FRAME_SCRIPT])
    try:
        assert b"READY" in _read_until(master, b"READY")
        os.write(master, keys + (b"" if quits else b"MARK"))
        out = _read_until(master, b"\x1b[?1049l" if quits else b"MARK")
        if quits:
            assert b"\x1b[?1049l" in out, out  # the terminal given back
            assert os.waitpid(pid, 0)[1] == 0
            pid = 0
        else:
            assert b"MARK" in out and b"\x1b[?1049l" not in out, out  # still reading, still on the frame
            assert os.waitpid(pid, os.WNOHANG) == (0, 0)
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(master)


@pytest.mark.parametrize(("key", "status"), [(b"\x04", 0), (b"\x03", 1)])
def test_ctrl_d_on_the_first_frame_quits_the_program_before_the_app_starts(
        home: Path, workdir: Path, key: bytes, status: int) -> None:
    """The installed program: Ctrl+D on the first frame's empty editor ends it with status 0,
    Ctrl+C with 1 and "interrupted", the terminal given back — and the app never starts (Textual
    would turn on mouse reporting)."""
    from tests.tui.test_real_terminal import installed_baton

    env = baton_env(home, TERM="xterm-256color")
    pid, master = os.forkpty()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(workdir)
        os.execve(installed_baton(), ["baton", "--model", "demo/baton-demo"], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        out = _read_until(master, b"essage baton")
        assert b"Starting" in out, out  # the first frame, not the app
        assert b"essage baton" in out, out
        os.write(master, key)
        out += _read_until(master, b"never shows: read to the end")
    finally:
        _, exit_status = os.waitpid(pid, 0)
        os.close(master)
    assert os.WIFEXITED(exit_status) and os.WEXITSTATUS(exit_status) == status, (exit_status, out[-500:])
    assert (b"baton: interrupted" in out) == bool(status) and b"Traceback" not in out, out[-2000:]
    assert b"\x1b[?1049l" in out  # the alternate screen left
    assert b"\x1b[?1000h" not in out, "the app started"

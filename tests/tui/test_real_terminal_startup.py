"""Start-up in a real terminal: the instant frame painted before Textual loads, and keys typed
before the app is up (tmux for the installed program, a pty for the frame itself)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.cli_harness import baton_env
from tests.tui.test_real_terminal import Tmux, baton_command_line

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _editor_line(pane: str) -> str:
    """The editor's line: the first line under the rule above it."""
    lines = pane.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip().startswith("────")]
    return lines[rules[-1] + 1].strip() if rules and rules[-1] + 1 < len(lines) else ""


@needs_tmux
def test_keys_typed_while_starting_reach_the_editor_in_order(home: Path, workdir: Path) -> None:
    """Typed at once, before Textual has loaded: UTF-8, a cursor key, Backspace, more text.
    Nothing is lost or doubled, and Enter sends the prompt once the session is open."""
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo", "; sleep 30"))
    try:
        tmux.type("héllo")
        tmux.send("Left")
        tmux.type("X")
        tmux.send("BSpace")
        time.sleep(0.05)
        tmux.type("wörld")
        pane = tmux.wait_for(lambda p: "context" in p and "Starting" not in p, "the app with its session")
        assert _editor_line(pane) == "héllwörldo", pane
        tmux.send("Enter")
        pane = tmux.wait_for(lambda p: "héllwörldo" in p and "Message baton" in p, "the prompt sent")
        assert pane.count("héllwörldo") == 1, pane
    finally:
        tmux.kill()


@needs_tmux
def test_the_frame_shows_and_echoes_before_the_app_and_quitting_restores_the_terminal(
        tmp_path: Path, home: Path, workdir: Path) -> None:
    env = baton_env(home, TERM="xterm-256color")
    marker = tmp_path / "after"
    then = f"; stty -a > {marker}; sleep 30"
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo", then))
    try:
        tmux.wait_for(lambda p: "baton" in p and "Message baton" in p, "the first frame")
        tmux.type("typed early")
        tmux.wait_for(lambda p: "typed early" in p, "the echo")
        tmux.wait_for(lambda p: "context" in p, "the app with its session")
        deadline = time.monotonic() + 20
        while not (marker.exists() and marker.stat().st_size > 0) and time.monotonic() < deadline:
            tmux.send("C-c")  # twice within the quit window (again, should a loaded machine miss it)
            tmux.send("C-c")
            time.sleep(1.0)
        assert marker.exists(), f"baton did not quit on Ctrl+C Ctrl+C; the pane shows:\n{tmux.pane()}"
        time.sleep(0.2)
        flags = marker.read_text().split()
        assert {"icanon", "echo", "isig", "icrnl"} <= set(flags)  # cooked again, as before baton
    finally:
        tmux.kill()


def _frame_child(script: str) -> tuple[int, int]:
    """Run ``script`` (Python) with a new pty as its terminal; (pid, master fd)."""
    pid, master = os.forkpty()
    if pid == 0:  # pragma: no cover - the child
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-c", script])
    return pid, master


def _read_until(master: int, needle: bytes, timeout: float = 20.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        if select.select([master], [], [], 0.1)[0]:
            try:
                out += os.read(master, 65536)
            except OSError:
                break
    return out


FRAME_SCRIPT = """
import sys, termios, time
from baton.tui.app.instant_frame import InstantFrame
before = termios.tcgetattr(0)
frame = InstantFrame.start("test")
try:
    print("\\r\\nREADY", flush=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if b"DONE" in frame._typed:
            break
    typed = frame.take_over()
    frame.close()  # after the take-over: nothing to do (the app's driver restores this)
    termios.tcsetattr(0, termios.TCSANOW, frame.original_attrs)
    print("\\r\\nTYPED", repr(typed), flush=True)
except KeyboardInterrupt:
    frame.close()
    print("\\r\\nINTERRUPTED", flush=True)
print("RESTORED" if termios.tcgetattr(0) == before else "NOT-RESTORED", flush=True)
"""


def test_the_frame_keeps_every_byte_and_gives_the_terminal_back() -> None:
    pid, master = _frame_child(FRAME_SCRIPT)
    try:
        first = _read_until(master, b"READY")
        assert b"READY" in first
        keys = "ab\x1b[Dé\x7f\x1b[200~pasted\rtext\x1b[201~\r".encode()
        os.write(master, keys)
        time.sleep(0.2)
        os.write(master, b"DONE")
        out = first + _read_until(master, b"RESTORED")
        assert repr(keys + b"DONE").encode() in out, out
        assert b"NOT-RESTORED" not in out and b"RESTORED" in out  # the settings to restore are right
        assert b"\x1b[?1049h" in out and b"\x1b[?1049l" not in out  # the app's screen stays up
    finally:
        os.waitpid(pid, 0)
        os.close(master)


def test_ctrl_c_in_the_frame_interrupts_and_restores_the_terminal() -> None:
    """Ctrl+C ends start-up at once from the frame (read as a key: a signal landing in asyncio's
    start-up left a traceback, or only cancelled the app once Textual had started)."""
    import termios

    pid, master = _frame_child(FRAME_SCRIPT)
    try:
        first = _read_until(master, b"READY")
        assert b"READY" in first
        os.write(master, b"x\x03")
        out = first + _read_until(master, b"interrupted")
        assert b"baton: interrupted" in out and b"Traceback" not in out, out
        assert b"\x1b[?1049l" in out  # off the alternate screen
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 1
        lflag = termios.tcgetattr(master)[3]
        assert lflag & termios.ICANON and lflag & termios.ECHO and lflag & termios.ISIG  # cooked again
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(master)


def test_no_frame_without_a_terminal() -> None:
    result = subprocess.run([sys.executable, "-c", "from baton.tui.app.instant_frame import InstantFrame; "
                             "print(InstantFrame.start('t'))"], capture_output=True, text=True, input="",
                            timeout=60)
    assert result.stdout.strip() == "None", result.stderr
    dumb = subprocess.run([sys.executable, "-c", "from baton.tui.app.instant_frame import InstantFrame; "
                           "print(InstantFrame.start('t'))"], capture_output=True, text=True,
                          env={**os.environ, "TERM": "dumb"}, timeout=60)
    assert dumb.stdout.strip() == "None"


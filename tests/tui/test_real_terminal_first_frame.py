"""The first frame tells the truth: the installed program, on a pty, paints the footer's model,
working directory and approval mode before Textual loads — and names no model where only the
session can tell which it will be.

The frame is what the program writes before the first ``Message baton`` placeholder: the frame
paints its footer and then that placeholder in one go, before any of Textual is imported, so the
bytes up to there come from nothing else."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path

import pytest

from tests.tui.cli_harness import baton_env
from tests.tui.test_real_terminal import installed_baton

pytestmark = pytest.mark.skipif(os.name != "posix", reason="needs a pty")

PLACEHOLDER = b"essage baton"  # the placeholder (its first letter is painted as the cursor)
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _run_on_pty(args: list[str], env: dict[str, str], cwd: Path, until: bytes, then: bytes | None = None,
                timeout: float = 30.0) -> tuple[bytes, bytes]:
    """Run the installed ``baton args`` on a 120x40 pty; (everything written before ``until``
    first showed, and everything up to ``then`` showing after it — or the end)."""
    pid, master = os.forkpty()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        os.execve(installed_baton(), ["baton", *args], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            if until in out and (then is None or then in out[out.index(until):]):
                break
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(master)
    assert until in out, f"never showed {until!r}: {out[-2000:]!r}"
    cut = out.index(until)
    return out[:cut], out[cut:]


def _text(data: bytes) -> str:
    return _ANSI.sub(b" ", data).decode("utf-8", "replace")


def test_the_first_frame_names_the_model_the_directory_and_the_approval_mode(home: Path, workdir: Path) -> None:
    env = baton_env(home, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    frame, _rest = _run_on_pty(["--model", "demo/baton-demo"], env, workdir, PLACEHOLDER)
    text = _text(frame)
    assert "Starting" in text  # the instant frame, not the app
    assert "demo/baton-demo · offline demo model (no API key)" in text
    assert str(workdir)[:40] in text  # the footer shortens a long path
    assert re.search(r"auto · (sandbox|no sandbox)", text), text


def test_the_first_frame_finds_the_model_a_key_and_the_settings_choose(home: Path, workdir: Path) -> None:
    """No --model: the environment's key picks the provider's default; the user's settings'
    defaultModel and approval win over it. The key itself is never painted."""
    env = baton_env(home, TERM="xterm-256color", ANTHROPIC_API_KEY="sk-ant-first-frame-secret")
    frame, _rest = _run_on_pty([], env, workdir, PLACEHOLDER)
    assert "anthropic/claude-sonnet-5" in _text(frame)
    assert b"first-frame-secret" not in frame

    (home / "settings.json").write_text(json.dumps({"defaultModel": "openai/gpt-5.6", "approval": "ask"}))
    env["OPENAI_API_KEY"] = "sk-openai-first-frame-secret"
    frame, _rest = _run_on_pty([], env, workdir, PLACEHOLDER)
    text = _text(frame)
    assert "openai/gpt-5.6" in text and "anthropic/claude-sonnet-5" not in text
    assert "ask · " in text
    assert b"first-frame-secret" not in frame


def test_the_first_frame_names_no_model_only_the_session_can_choose(home: Path, workdir: Path) -> None:
    """A project's settings may choose the model once trusted: the frame leaves it blank rather
    than guess, and the app's footer names it."""
    (workdir / ".baton").mkdir()
    (workdir / ".baton" / "settings.json").write_text("{}")
    env = baton_env(home, TERM="xterm-256color")
    frame, app = _run_on_pty([], env, workdir, PLACEHOLDER, then=b"demo/baton-demo")
    assert "Starting" in _text(frame)
    assert "demo/baton-demo" not in _text(frame)
    assert b"demo/baton-demo" in app

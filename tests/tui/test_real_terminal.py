"""The installed ``baton`` in a real terminal (tmux), against a local replay server.

A person's session: type a prompt, press Ctrl+C while the answer streams, switch model with
``/model`` (confirming the handoff preview), ask again, quit. The captured pane and the session
file must show all of it.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.process_helpers import kill_sleepers, needs_proc, sleepers, wait_until
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_env, read_entries, session_files, write_models_json

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def installed_baton() -> str:
    """The ``baton`` console script installed beside this interpreter."""
    candidate = Path(sys.executable).with_name("baton")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("baton")
    if found is None:
        pytest.skip("the baton command is not installed")
    return found


def baton_command_line(work: Path, env: dict[str, str], args: str, then: str = "") -> str:
    """A shell line that runs the installed ``baton args`` in ``work`` with exactly ``env``
    (followed by ``then``, e.g. ``; sleep 30`` to keep the pane after it exits)."""
    env_args = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.isidentifier())
    return f"cd {shlex.quote(str(work))} && env -i {env_args} {shlex.quote(installed_baton())} {args}{then}"


class Tmux:
    """One detached tmux session running a command."""

    def __init__(self, command: str, width: int = 110, height: int = 36) -> None:
        self.name = f"baton-test-{uuid.uuid4().hex[:8]}"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        command], check=True)

    def pane(self, history: int = -200) -> str:
        result = subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", self.name, "-S", str(history)],
                                capture_output=True, text=True)
        return result.stdout

    def send(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)

    def wait_for(self, predicate: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        pane = ""
        while time.monotonic() < deadline:
            pane = self.pane()
            if predicate(pane):
                return pane
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the pane shows:\n{pane}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name], capture_output=True).returncode == 0

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def slow_anthropic_stream(words: int = 300, delay: float = 0.05) -> Reply:
    body = text_reply("anthropic-messages", [f"word{i} " for i in range(words)])
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
    return Reply(chunks=events, delay=delay)


def test_prompt_abort_switch_model_and_quit_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    replies = [slow_anthropic_stream(), Reply.sse(text_reply("openai-completions", "Second model answer."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {
            "replay-am": models_json_provider("anthropic-messages", server.url),
            "replay-oc": models_json_provider("openai-completions", server.url),
        })
        env = baton_env(home, TERM="xterm-256color")
        exit_file = tmp_path / "exit-code"
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-am/replay-model",
                                       f"; echo $? > {shlex.quote(str(exit_file))}"))
        try:
            tmux.wait_for(lambda p: "replay-am/replay-model" in p, "the editor and footer")
            tmux.type("first prompt please")
            tmux.send("Enter")
            tmux.wait_for(lambda p: "word5 " in p, "the answer to start streaming")
            tmux.send("C-c")
            aborted_pane = tmux.wait_for(lambda p: "abort" in p.lower(), "the aborted marker")
            tmux.type("/model replay-oc/replay-model")
            switched = "→ replay-oc/replay-model"
            deadline = time.monotonic() + 20
            # Enter may first be taken by the command-completion popup; then the handoff preview
            # asks for confirmation (Enter). Keep answering until the switch notice shows.
            while switched not in (pane := tmux.pane()) and time.monotonic() < deadline:
                if "Switch to replay-oc" in pane or "/model replay-oc" in pane.split("Aborted")[-1]:
                    tmux.send("Enter")
                time.sleep(0.4)
            switch_pane = tmux.wait_for(lambda p: switched in p, "the model switch notice")
            # The aborted turn is skipped for every model: the switch itself loses nothing.
            assert "handoff:" not in switch_pane.split(switched)[-1]
            tmux.type("second prompt please")
            tmux.send("Enter")
            final_pane = tmux.wait_for(lambda p: "Second model answer." in p, "the second model's answer")
            tmux.send("C-d")
            exited = wait_until(exit_file.exists, 15, interval=0.1)
            assert exited, f"baton did not quit on Ctrl+D; the pane shows:\n{tmux.pane()}"
        finally:
            tmux.kill()
        requests = list(server.requests)

    assert exit_file.read_text().strip() == "0"
    assert "first prompt please" in aborted_pane and "word5" in aborted_pane
    assert "second prompt please" in final_pane and "Second model answer." in final_pane
    assert "replay-oc/replay-model" in final_pane

    files = session_files(home)
    assert len(files) == 1
    entries = read_entries(files[0])
    messages = [e["message"] for e in entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    aborted = messages[1]
    assert aborted["stopReason"] == "aborted"
    assert "word0 word1" in "".join(b.get("text", "") for b in aborted["content"])
    assert messages[3]["provider"] == "replay-oc" and messages[3]["stopReason"] == "stop"
    assert any(e["type"] == "model_change" and e.get("provider") == "replay-oc" for e in entries)

    # The second model got the history without the aborted turn (handoff rule 3).
    assert len(requests) == 2
    second = json.dumps(requests[1].json())
    assert "first prompt please" in second and "second prompt please" in second
    assert "word0" not in second


def test_legacy_terminal_keys_newline_follow_up_and_editor_in_tmux(tmp_path: Path, home: Path, workdir: Path) -> None:
    """tmux does not speak the kitty keyboard protocol: Shift+Enter and Alt+Enter arrive as a
    plain Enter. A backslash before Enter still makes a newline, Tab queues a follow-up while the
    agent works, and an $EDITOR that cannot start leaves a working app."""
    replies = [slow_anthropic_stream(words=120, delay=0.03),
               Reply.sse(text_reply("anthropic-messages", "Follow-up answered."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay-am": models_json_provider("anthropic-messages", server.url)})
        env = baton_env(home, TERM="xterm-256color", EDITOR=str(tmp_path / "no-such-editor"))
        tmux = Tmux(baton_command_line(workdir, env, "--model replay-am/replay-model"))
        try:
            tmux.wait_for(lambda p: "replay-am/replay-model" in p, "the editor and footer")
            tmux.type("first line\\")
            tmux.send("Enter")
            tmux.type("second line")
            tmux.wait_for(lambda p: "  first line\n  second line" in _rstrip_lines(p), "a two-line editor")
            assert not server.requests, "backslash + Enter must not send"
            tmux.send("C-g")
            tmux.wait_for(lambda p: "Cannot open $EDITOR" in p, "the editor failure notice")
            tmux.type(" still typing")
            tmux.wait_for(lambda p: "second line still typing" in p, "the app to take keys again")
            tmux.send("Enter")
            tmux.wait_for(lambda p: "word5 " in p, "the answer to start streaming")
            tmux.type("and then this")
            tmux.send("Tab")
            queued = tmux.wait_for(lambda p: "follow-up: and then this" in p, "the queued follow-up")
            final = tmux.wait_for(lambda p: "Follow-up answered." in p, "the follow-up's answer")
        finally:
            tmux.kill()
        requests = [r.json() for r in server.requests]
    assert "Tab queues a follow-up" in queued
    assert len(requests) == 2
    assert requests[0]["messages"][-1]["content"][0]["text"] == "first line\nsecond line still typing"
    assert "and then this" in json.dumps(requests[1]["messages"][-1])
    assert "word119" in json.dumps(requests[1]), "the follow-up came after the whole first answer"
    assert "and then this" in final


def _rstrip_lines(pane: str) -> str:
    return "\n".join(line.rstrip() for line in pane.splitlines())


def test_the_last_exchange_and_how_to_continue_stay_in_scrollback_after_quitting(home: Path, workdir: Path) -> None:
    (workdir / "hello.txt").write_text("hi\n")
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo", "; sleep 30"))
    try:
        tmux.wait_for(lambda p: "demo/baton-demo" in p, "the editor and footer")
        tmux.type("list files")
        tmux.send("Enter")
        tmux.wait_for(lambda p: " returned " in p, "the demo's answer")
        tmux.send("C-d")
        after = tmux.wait_for(lambda p: "Continue with: baton -c" in p, "the exit summary")
    finally:
        tmux.kill()
    files = session_files(home)
    assert len(files) == 1
    session_id = read_entries(files[0])[0]["id"]
    assert "› list files" in after
    assert " returned " in after
    answer = [b["text"] for e in read_entries(files[0]) if e["type"] == "message"
              and e["message"]["role"] == "assistant" for b in e["message"]["content"] if b.get("type") == "text"][-1]
    assert answer.splitlines()[0][:40] in after.replace("\n", "")  # the final answer, as plain text
    assert f"Session {session_id} saved" in after
    assert f"baton --session {session_id[:8]}" in after


@needs_proc
def test_closing_the_terminal_mid_command_ends_every_process_and_keeps_the_transcript(
        home: Path, workdir: Path) -> None:
    marker = f"35.{uuid.uuid4().int % 100000}"
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo"))
    try:
        tmux.wait_for(lambda p: "demo" in p.lower(), "the editor")
        tmux.type(f"run sleep {marker}1 & nohup sleep {marker}2 >/dev/null 2>&1 & "
                  f"setsid sleep {marker}3 >/dev/null 2>&1 & sleep {marker}4")
        tmux.send("Enter")
        wait_until(lambda: len(sleepers(marker)) >= 4, 20, interval=0.1)
        assert len(sleepers(marker)) == 4, tmux.pane()
        tmux.kill()  # the terminal goes away: SIGHUP
        wait_until(lambda: not sleepers(marker), 10, interval=0.1)
        left = sleepers(marker)
    finally:
        tmux.kill()
        kill_sleepers(marker)
    assert left == []
    deadline = time.monotonic() + 10
    messages: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        files = session_files(home)
        messages = [e["message"] for e in read_entries(files[0]) if e["type"] == "message"] if files else []
        if messages and messages[-1]["role"] == "toolResult":
            break
        time.sleep(0.1)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[-1]["details"]["aborted"] is True  # type: ignore[index]


def _batons_using(home: Path) -> list[int]:
    """Live processes whose environment has ``BATON_HOME=home``."""
    wanted = f"BATON_HOME={home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if wanted in environ and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


@needs_proc
def test_closing_the_terminal_of_an_idle_app_ends_baton(home: Path, workdir: Path) -> None:
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo"))
    try:
        tmux.wait_for(lambda p: "demo" in p.lower(), "the editor")
        assert _batons_using(home), "baton is not running"
        tmux.kill()  # SIGHUP to an app waiting for input
        wait_until(lambda: not _batons_using(home), 15, interval=0.1)
        left = _batons_using(home)
    finally:
        tmux.kill()
        for pid in _batons_using(home):
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
    assert left == [], "baton outlived its terminal"


def _wait_until_still(tmux: Tmux, timeout: float = 20.0) -> None:
    """Until the pane stops changing (nothing streams or ticks any more)."""
    deadline = time.monotonic() + timeout
    before = tmux.pane()
    while time.monotonic() < deadline:
        time.sleep(0.7)
        now = tmux.pane()
        if now == before:
            return
        before = now
    raise AssertionError(f"the pane kept changing:\n{before}")


def test_ctrl_c_again_while_the_notice_shows_quits_and_the_summary_says_cost_and_time(
        home: Path, workdir: Path) -> None:
    """Issue 25, item 11: the notice stayed 1 s while a second Ctrl+C quit only within 0.5 s."""
    (workdir / "hello.txt").write_text("hi\n")
    env = baton_env(home, TERM="xterm-256color")
    tmux = Tmux(baton_command_line(workdir, env, "--model demo/baton-demo", "; sleep 30"))
    try:
        tmux.wait_for(lambda p: "demo/baton-demo" in p, "the editor and footer")
        tmux.type("list files")
        tmux.send("Enter")
        tmux.wait_for(lambda p: " returned " in p, "the demo's answer")
        _wait_until_still(tmux)  # the answer has finished streaming: Ctrl+C no longer aborts
        tmux.send("C-c")
        tmux.wait_for(lambda p: "Press Ctrl+C again to quit." in p, "the notice")
        time.sleep(0.8)  # longer than the old window, shorter than the notice
        assert "Press Ctrl+C again to quit." in tmux.pane(), "the notice is still on screen"
        tmux.send("C-c")
        after = tmux.wait_for(lambda p: "Continue with: baton -c" in p, "the exit summary")
    finally:
        tmux.kill()
    spend = [line for line in after.splitlines() if line.startswith("Cost ")]
    assert spend and re.fullmatch(r"Cost \$0\.00 · [0-9.]+k? tokens · [0-9.]+(ms|s|m[0-9]{2}s)", spend[0].rstrip())

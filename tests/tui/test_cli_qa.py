"""QA regressions for the command line, found by driving the real ``baton`` binary.

Each test runs baton as a subprocess (on the offline demo model or against a local replay
server) and checks what a user sees: exit codes, stdout/stderr, processes left behind, and the
session file afterwards.
"""

from __future__ import annotations

import json
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.process_helpers import needs_proc, processes_with, wait_until
from tests.tui.cli_harness import baton_command, baton_env, run_baton, session_files, session_messages


@needs_proc
def test_sigint_during_a_tool_run_exits_1_and_kills_the_command(home: Path, workdir: Path) -> None:
    # The run was judged by the session's last assistant message — the one that asked for the
    # tool (stopReason toolUse) — so Ctrl+C during a tool printed "Running `...`." and exited 0.
    marker = f"31.{uuid.uuid4().int % 10**6}"
    command = f"sleep {marker} & sleep {marker}; echo done"
    proc = subprocess.Popen(
        baton_command("-p", "--model", "demo/baton-demo", f"run {command}"), cwd=workdir, env=baton_env(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert wait_until(lambda: len(processes_with(f"sleep {marker}")) >= 2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 1, (out, err)
    assert out == ""
    assert "aborted" in err
    assert wait_until(lambda: not [p for p in processes_with(f"sleep {marker}") if "bash" not in p.cmdline], 5)
    messages = session_messages(session_files(home)[0])
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[-1]["isError"] is True
    # The session stays usable.
    again = run_baton(home, workdir, "-c", "-p", "--model", "demo/baton-demo", "run echo after")
    assert again.returncode == 0, again.stderr
    assert "after" in again.stdout


def test_json_mode_stops_when_stdout_is_closed(home: Path, workdir: Path) -> None:
    # A consumer that closes the pipe got a BrokenPipeError traceback on stderr for every later
    # event while the run (and its tools) went on unseen.
    command = "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick; sleep 0.3; done; echo end > finished.txt"
    proc = subprocess.Popen(
        baton_command("-p", "--mode", "json", "--model", "demo/baton-demo", f"run {command}"),
        cwd=workdir, env=baton_env(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "session"
        while json.loads(proc.stdout.readline())["type"] != "tool_execution_start":
            pass
        proc.stdout.close()  # the consumer goes away while the command runs
        err = proc.stderr.read().decode()
        proc.wait(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert "stdout was closed" in err
    assert not (workdir / "finished.txt").exists()  # the command was stopped with the run
    messages = session_messages(session_files(home)[0])
    assert messages[-1]["role"] == "toolResult" and messages[-1]["isError"] is True


def test_print_mode_into_a_closed_pipe_is_quiet(home: Path, workdir: Path) -> None:
    proc = subprocess.Popen(
        baton_command("-p", "--no-session", "--model", "demo/baton-demo", "help"), cwd=workdir, env=baton_env(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the answer is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=20)
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_export_errors_are_one_line_usage_errors(home: Path, workdir: Path) -> None:
    # A missing session or a file that is not a session ended in a Python traceback.
    (workdir / "notes.txt").write_text("not a session\n")
    for target in ("no-such-session", "notes.txt"):
        result = run_baton(home, workdir, "--export", target)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith("baton: ") and result.stderr.count("\n") == 1


def test_export_default_path_and_directory_target(home: Path, workdir: Path) -> None:
    assert run_baton(home, workdir, "-p", "--model", "demo/baton-demo", "hello").returncode == 0
    source = session_files(home)[0]
    session_id = source.stem.rsplit("_", 1)[1]
    # Without OUT: the documented ./baton-session-<file>.html, not a file beside the session.
    result = run_baton(home, workdir, "--export", session_id[:8])
    assert result.returncode == 0, result.stderr
    expected = workdir / f"baton-session-{source.stem}.html"
    assert result.stdout.strip() == str(expected)
    assert expected.read_text().startswith("<!DOCTYPE html>")
    assert not source.with_suffix(".html").exists()
    # OUT is a directory: the default name inside it; .md gives Markdown.
    outdir = workdir / "exports"
    outdir.mkdir()
    result = run_baton(home, workdir, "--export", str(source), str(outdir))
    assert result.stdout.strip() == str(outdir / expected.name)
    result = run_baton(home, workdir, "--export", str(source), "t.md")
    assert (workdir / "t.md").read_text().startswith("# Session")


def test_resumed_session_without_a_key_fails_fast(home: Path, workdir: Path, tmp_path: Path) -> None:
    # The session's own model (anthropic) was used without checking its key: keyless requests,
    # half a minute of retried connection errors, and each error appended to the session file.
    source = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pi-sessions" / "large-session.jsonl"
    if not source.exists():
        pytest.skip("pi session fixtures are absent")
    copy = tmp_path / "pi.jsonl"
    copy.write_bytes(source.read_bytes())
    result = run_baton(home, workdir, "--session", str(copy), "-p", "continue", timeout=20)
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY" in result.stderr and "--model" in result.stderr
    assert copy.read_bytes() == source.read_bytes()


def test_unknown_default_model_in_settings_is_a_warning(home: Path, workdir: Path) -> None:
    (home / "settings.json").write_text('{"defaultModel": "nope/nope"}')
    result = run_baton(home, workdir, "-p", "hello")
    # No other model has a key: print mode does not fall back to the demo model.
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "warning" in result.stderr and "defaultModel" in result.stderr and "nope/nope" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr

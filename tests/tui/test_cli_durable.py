"""Nothing lost, nothing hangs: the real ``baton`` process against bad bytes, storage failures,
deep or odd working directories, and unbounded or never-ending input."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from tests.provider_scripts import APIS, models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import (
    baton_command,
    baton_env,
    run_baton,
    session_files,
    session_messages,
    write_models_json,
)

API_SHORT = {"openai-completions": "oc", "openai-responses": "or", "anthropic-messages": "am",
             "google-generative-ai": "gg"}


def model_ref(api: str) -> str:
    return f"replay-{API_SHORT[api]}/replay-model"


def configure(home: Path, server: ReplayServer, api: str = "openai-completions") -> None:
    write_models_json(home, {f"replay-{API_SHORT[api]}": models_json_provider(api, server.url)})


def user_texts(path: Path) -> list[str]:
    return [block["text"] for m in session_messages(path) if m["role"] == "user"
            for block in m["content"] if block.get("type") == "text"]


def answer_texts(path: Path) -> list[str]:
    return [block["text"] for m in session_messages(path) if m["role"] == "assistant"
            for block in m["content"] if block.get("type") == "text"]


# ---------------------------------------------------------------- 5: lone surrogates


def test_latin1_argument_is_saved_with_a_replacement_character(home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply("openai-completions", "no such file"))]) as server:
        configure(home, server)
        argv = [a.encode() for a in baton_command("--model", model_ref("openai-completions"), "-p")]
        result = subprocess.run([*argv, b"read caf\xe9.txt"], cwd=workdir, capture_output=True, timeout=60,
                                env=baton_env(home, LC_ALL="C.UTF-8"))
        sent = json.dumps(server.requests[0].json(), ensure_ascii=False)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert result.stdout == b"no such file\n"
    assert "read caf\ufffd.txt" in sent
    [path] = session_files(home)
    assert user_texts(path) == ["read caf\ufffd.txt"]
    assert answer_texts(path) == ["no such file"]


@pytest.mark.parametrize("api", APIS)
def test_emoji_split_across_two_deltas_is_joined_and_saved(api: str, home: Path, workdir: Path) -> None:
    # json.dumps writes the halves as \ud83d and \ude00: valid JSON, half an emoji per event
    with ReplayServer([Reply.sse(text_reply(api, ["smile \ud83d", "\ude00 done"]))]) as server:
        configure(home, server, api)
        result = run_baton(home, workdir, "--model", model_ref(api), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "smile \U0001f600 done\n"
    [path] = session_files(home)
    assert answer_texts(path) == ["smile \U0001f600 done"]


# ---------------------------------------------------------------- 6: storage failures


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json", "-p"]])
def test_session_write_failure_keeps_the_answer(mode: list[str], home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply("openai-completions", "the answer survives"))]) as server:
        configure(home, server)
        result = subprocess.run(
            baton_command("--model", model_ref("openai-completions"), *mode, "hi"), cwd=workdir,
            env=baton_env(home), capture_output=True, text=True, timeout=60, preexec_fn=_limit_file_size,
        )
    assert result.returncode == 1
    if mode == ["-p"]:
        assert result.stdout == "the answer survives\n"
    else:
        ends = [json.loads(line) for line in result.stdout.splitlines() if '"message_end"' in line]
        assert ends[-1]["message"]["content"][-1]["text"] == "the answer survives"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Could not save the session" in lines[0] and "too large" in lines[0]


def test_deep_working_directory_gets_a_short_session_folder(home: Path, workdir: Path) -> None:
    deep = workdir
    for _ in range(30):
        deep = deep / "abcdefghij"
    deep.mkdir(parents=True)
    with ReplayServer([Reply.sse(text_reply("openai-completions", "deep ok"))]) as server:
        configure(home, server)
        result = run_baton(home, deep, "--model", model_ref("openai-completions"), "-p", "hi")
    assert result.returncode == 0, result.stderr
    [path] = session_files(home)
    assert len(os.fsencode(path.parent.name)) <= 255
    assert answer_texts(path) == ["deep ok"]


def test_newline_in_working_directory_never_reaches_a_path(home: Path, workdir: Path) -> None:
    odd = workdir / "two\nlines"
    odd.mkdir()
    with ReplayServer([Reply.sse(text_reply("openai-completions", "odd ok"))]) as server:
        configure(home, server)
        result = run_baton(home, odd, "--model", model_ref("openai-completions"), "-p", "hi")
    assert result.returncode == 0, result.stderr
    [path] = session_files(home)
    assert "\n" not in str(path.relative_to(home))


# ---------------------------------------------------------------- 9: bounded input


def test_attachments_that_are_not_regular_files_are_refused_at_once(home: Path, workdir: Path) -> None:
    os.mkfifo(workdir / "fifo")
    for target in ("@fifo", "@/dev/zero"):
        started = time.monotonic()
        result = run_baton(home, workdir, "--model", "demo/baton-demo", "-p", target, "hi", timeout=30)
        assert result.returncode == 2, (target, result.stderr)
        assert "not a regular file" in result.stderr
        assert time.monotonic() - started < 20


def test_huge_attachment_is_refused_without_reading_it(home: Path, workdir: Path) -> None:
    with open(workdir / "big.txt", "wb") as handle:
        handle.truncate(1 << 30)  # 1 GB, sparse
    result = run_baton(home, workdir, "--model", "demo/baton-demo", "-p", "@big.txt", "hi", timeout=30)
    assert result.returncode == 2
    assert "too large" in result.stderr


def test_endless_stdin_stops_at_the_limit(home: Path, workdir: Path) -> None:
    command = " ".join(f"'{part}'" for part in baton_command("--model", "demo/baton-demo", "-p"))
    result = subprocess.run(f"head -c 3G /dev/zero | {command}", shell=True, cwd=workdir, env=baton_env(home),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "larger than" in result.stderr


def test_silent_pipe_on_stdin_does_not_delay_a_prompt(home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply("openai-completions", "quick"))]) as server:
        configure(home, server)
        writer = subprocess.Popen(["sleep", "15"], stdout=subprocess.PIPE)
        try:
            started = time.monotonic()
            result = subprocess.run(baton_command("--model", model_ref("openai-completions"), "-p", "hi"),
                                    cwd=workdir, env=baton_env(home), stdin=writer.stdout, capture_output=True,
                                    text=True, timeout=60)
            elapsed = time.monotonic() - started
        finally:
            writer.kill()
            writer.wait()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "quick\n"
    assert elapsed < 12, f"waited {elapsed:.1f}s for a pipe that never wrote"


def test_fifo_named_like_a_session_does_not_block_continue(home: Path, workdir: Path) -> None:
    with ReplayServer([Reply.sse(text_reply("openai-completions", "first")),
                       Reply.sse(text_reply("openai-completions", "second"))]) as server:
        configure(home, server)
        first = run_baton(home, workdir, "--model", model_ref("openai-completions"), "-p", "one")
        assert first.returncode == 0, first.stderr
        [path] = session_files(home)
        os.mkfifo(path.parent / "zzzz-trap.jsonl")
        second = run_baton(home, workdir, "--model", model_ref("openai-completions"), "-c", "-p", "two",
                           timeout=30)
    assert second.returncode == 0, second.stderr
    assert answer_texts(path) == ["first", "second"]


def test_json_mode_survives_a_file_name_that_is_not_utf8(home: Path, workdir: Path) -> None:
    os.close(os.open(os.path.join(os.fsencode(workdir), b"caf\xe9.txt"), os.O_CREAT | os.O_WRONLY))
    with ReplayServer([Reply.sse(tool_call_reply("openai-completions", "call_1", "ls", {})),
                       Reply.sse(text_reply("openai-completions", "listed"))]) as server:
        configure(home, server)
        result = run_baton(home, workdir, "--model", model_ref("openai-completions"), "--tools", "ls",
                           "--mode", "json", "-p", "list")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["result"]["content"][0]["text"] == "caf\ufffd.txt"
    assert events[-1]["type"] == "agent_end"
    [path] = session_files(home)
    results = [m for m in session_messages(path) if m["role"] == "toolResult"]
    assert results[0]["content"][0]["text"] == "caf\ufffd.txt"

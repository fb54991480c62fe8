"""``baton --checkpoints``: the real command, after a real print-mode run changed a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.sessions.checkpoints.git import find_git
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, session_files, write_models_json

pytestmark = pytest.mark.skipif(find_git() is None, reason="git is not installed")
API = "anthropic-messages"


def test_checkpoints_lists_the_prompts_with_the_files_changed(home: Path, workdir: Path) -> None:
    (workdir / "old.txt").write_text("old\n")
    replies = [
        Reply.sse(tool_call_reply(API, "toolu_1", "bash", {"command": "echo new > made.txt && rm old.txt"})),
        Reply.sse(text_reply(API, "Made it.")),
        Reply.sse(text_reply(API, "Nothing to do.")),
    ]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        first = run_baton(home, workdir, "-p", "--model", "replay/replay-model", "make a file")
        assert first.returncode == 0, first.stderr
        second = run_baton(home, workdir, "-c", "-p", "--model", "replay/replay-model", "just answer")
        assert second.returncode == 0, second.stderr

    listed = run_baton(home, workdir, "--checkpoints")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    [session_file] = session_files(home)
    assert data["session"] == str(session_file)
    points = data["checkpoints"]
    assert [p["prompt"] for p in points] == ["just answer", "make a file"]
    assert points[1]["changedFiles"] == ["made.txt", "old.txt"]
    assert points[1]["changes"] == {"added": ["made.txt"], "modified": [], "deleted": ["old.txt"]}
    assert len(points[1]["commit"]) == 40 and points[0]["commit"] is None
    assert points[1]["model"] == "replay/replay-model"

    by_id = run_baton(home, workdir, "--checkpoints", session_file.stem.split("_")[-1][:8])
    assert by_id.returncode == 0 and json.loads(by_id.stdout) == data

    missing = run_baton(home, workdir, "--checkpoints", "no-such-session")
    assert missing.returncode == 2 and "no-such-session" in missing.stderr


def test_checkpoints_without_any_session_is_a_usage_error(home: Path, workdir: Path) -> None:
    result = run_baton(home, workdir, "--checkpoints")
    assert result.returncode == 2 and "no session" in result.stderr

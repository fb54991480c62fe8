"""A command the agent runs cannot read the API keys out of baton's own process (/proc)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baton.tools.sandbox import probe
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

API = "openai-completions"
SECRET = "sk-probe-7731-never-readable"
# Every process's environment this command may read, searched for the key baton was given.
PROBE = f"cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {SECRET}; echo probed"


def _probe_result(home: Path, workdir: Path, *approval: str, **env: str) -> str:
    """What the probe command printed (how many environments held the key), as sent back."""
    replies = [Reply.sse(tool_call_reply(API, "call_1", "bash", {"command": PROBE})),
               Reply.sse(text_reply(API, "Done."))]
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", *approval, "--model", "replay/replay-model", "probe",
                           PROBE_SECRET_API_KEY=SECRET, **env)
        assert result.returncode == 0, result.stderr
        sent = server.requests[1].json()
    tool_results = [m for m in sent["messages"] if m["role"] == "tool"]
    return json.dumps(tool_results[0]["content"])


# An unsandboxed command of root's holds CAP_SYS_PTRACE: nothing keeps it out of any process.
not_as_root = pytest.mark.skipif(os.geteuid() == 0, reason="root's own commands may read any process")


@not_as_root
def test_an_unsandboxed_command_cannot_read_batons_environment(home: Path, workdir: Path) -> None:
    output = _probe_result(home, workdir, "--approval", "full")
    assert "probed" in output, output
    assert "0\\nprobed" in output, f"a process showed the key: {output}"


@pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")
def test_a_sandboxed_command_cannot_read_batons_environment(home: Path, workdir: Path) -> None:
    # The default (auto): commands run in the sandbox, with no capabilities even under root.
    output = _probe_result(home, workdir)
    assert "0\\nprobed" in output, f"a process showed the key: {output}"


@not_as_root
def test_a_profiler_can_be_let_in(home: Path, workdir: Path) -> None:
    """BATON_ALLOW_PTRACE=1 is the documented way out (for py-spy): the key is readable again."""
    output = _probe_result(home, workdir, "--approval", "full", BATON_ALLOW_PTRACE="1")
    assert "1\\nprobed" in output, output

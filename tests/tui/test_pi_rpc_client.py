"""pi's own RPC client (``RpcClient`` from the npm package ``@mariozechner/pi-coding-agent``
0.73.1) driving ``baton --mode rpc``: ``get_commands`` entries carry ``sourceInfo`` and ``clone``
continues the conversation in a new session file.

The package is installed by ``.ci/run`` (``npm install --prefix /tmp/pi-rpc
@mariozechner/pi-coding-agent@0.73.1``); without it (or node) the test skips, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import baton_env, session_files, write_models_json

API = "openai-completions"
PI_PACKAGE = Path(os.environ.get("PI_RPC_PREFIX", "/tmp/pi-rpc")) / "node_modules/@mariozechner/pi-coding-agent"
HERE = Path(__file__).resolve().parent / "pi_rpc"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(not (PI_PACKAGE / "dist/modes/rpc/rpc-client.js").is_file(),
                       reason=f"pi's RPC client is not installed at {PI_PACKAGE} (npm install --prefix /tmp/pi-rpc "
                              "@mariozechner/pi-coding-agent@0.73.1)"),
]


def test_pi_rpc_client_clones_and_lists_commands_with_source_info(home: Path, workdir: Path) -> None:
    (workdir / ".claude" / "commands" / "frontend").mkdir(parents=True)
    (workdir / ".claude" / "commands" / "frontend" / "component.md").write_text(
        "---\ndescription: Make a component\n---\nMake a component named $ARGUMENTS\n")
    with ReplayServer([Reply.sse(text_reply(API, "Hello back."))]) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        env = baton_env(home, BATON_PYTHON=sys.executable, PYTHONPATH=os.pathsep.join(sys.path))
        done = subprocess.run(["node", str(HERE / "drive.mjs"), str(PI_PACKAGE), str(HERE / "baton_cli.mjs"),
                               str(workdir), "replay/replay-model"],
                              env=env, cwd=workdir, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in seen, seen
    [command] = [c for c in seen["commands"] if c["name"] == "frontend:component"]
    assert command["source"] == "prompt" and command["description"] == "Make a component"
    info = command["sourceInfo"]
    assert info["path"] == str(workdir / ".claude/commands/frontend/component.md")
    assert (info["source"], info["scope"], info["origin"]) == ("auto", "project", "top-level")
    assert seen["clone"] == {"cancelled": False}
    assert seen["after"]["sessionFile"] != seen["before"]["sessionFile"]
    assert seen["messages"] == 2  # the clone holds the whole conversation
    assert len(session_files(home)) == 2

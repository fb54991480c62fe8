"""The file tools against a sandboxed job racing them (issue 23).

``write`` and ``edit`` run outside the sandbox. A model can start a background job inside it that
keeps swapping a workspace folder for a symlink to a place outside (or to ``.git/hooks``), then
call the file tools on paths through that folder: the permission check sees the real folder, and
a tool that resolves the path again a moment later follows the symlink. Driven through the real
``baton -p`` with real bwrap and a hostile local provider; no byte may land outside.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from baton.tools.sandbox import probe
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.tui.cli_harness import run_baton, write_models_json

pytestmark = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")

API = "openai-completions"
BATCHES = 8
WRITES_PER_BATCH = 6
EDITS_PER_BATCH = 2
"""8 turns of 8 parallel calls: 48 writes and 16 edits (the issue measured 21 of 40 landing outside)."""
READS_PER_BATCH = 8

SWAPPER = """
import ctypes, os, sys, time
out = sys.argv[1]
hooks = os.path.join(os.getcwd(), ".g" + "it", "hooks")  # spelled so no rule sees it
deadline = time.monotonic() + 90
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2

def exchange(a, b):
    # atomic: the name is always either the folder or the symlink, never missing
    libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE)

os.symlink(out, "dir.link")
os.symlink(hooks, "hooks.link")
open("swapper-ready", "w").close()
swaps = 0
while not os.path.exists("stop-swapping") and time.monotonic() < deadline:
    exchange("dir", "dir.link")
    exchange("hooks", "hooks.link")
    time.sleep(0.0001)
    exchange("dir", "dir.link")
    exchange("hooks", "hooks.link")
    time.sleep(0.0001)
    swaps += 1
open("swaps", "w").write(str(swaps))
"""


def calls_reply(calls: list[tuple[str, str, dict[str, Any]]]) -> Reply:
    """An openai-completions SSE reply making several tool calls at once (run in parallel)."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        payload = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(payload)}\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    for index, (call_id, name, args) in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": json.dumps(args)}}]}))
    out.append(chunk({}, "tool_calls"))
    out.append("data: [DONE]\n\n")
    return Reply.sse("".join(out))


Calls = list[tuple[str, str, dict[str, Any]]]


class HostileModel:
    """Starts the swapper in the sandbox, waits until it runs, then makes ``batches`` of parallel
    tool calls through the swapped folders, then stops the swapper and reports its swap count."""

    def __init__(self, ws: Path, outside: Path, batches: list[Calls]) -> None:
        self.ws = ws
        self.outside = outside
        self.batches = batches
        self.step = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        step, self.step = self.step, self.step + 1
        if step == 0:  # the session's first command starts its own bwrap; later ones share a long-lived one
            return calls_reply([("warm", "bash", {"command": "true"})])
        if step == 1:
            (self.ws / "swapper.py").write_text(SWAPPER)  # inside: the sandbox may have a private /tmp
            command = f"nohup python3 swapper.py {self.outside} >/dev/null 2>&1 &"
            return calls_reply([("swap", "bash", {"command": command})])
        batch = step - 2
        if batch == 0:
            deadline = time.monotonic() + 30
            while not (self.ws / "swapper-ready").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        if batch < len(self.batches):
            return calls_reply(self.batches[batch])
        if batch == len(self.batches):
            return calls_reply([("stop", "bash", {"command": "touch stop-swapping; sleep 0.5; cat swaps"})])
        return Reply.sse(text_reply(API, "done"))


def run_race(
    home: Path, ws: Path, outside: Path, batches: list[Calls], *extra: str
) -> tuple[dict[str, Any], ReplayServer]:
    """Run ``baton -p --mode json`` against the hostile model; the tool results by call id."""
    model = HostileModel(ws, outside, batches)
    with ReplayServer(model) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        # a private temp dir: reads of the system temp dir run unasked, and ``outside`` lies in it
        temp = ws.parent / "tmp"
        temp.mkdir()
        result = run_baton(home, ws, "-p", "--mode", "json", "--model", "replay/replay-model", *extra, "go",
                           timeout=180, TMPDIR=str(temp))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    ends = {e["toolCallId"]: e for e in events if e["type"] == "tool_execution_end"}
    swaps = ends["stop"]["result"]["content"][0]["text"].strip()
    assert swaps.isdigit() and int(swaps) > 0, f"the swapper did not run: {ends['stop']}"
    return ends, server


def text_of(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"]["content"])


def test_writes_and_edits_never_land_outside_while_a_sandboxed_job_swaps_folders(
    home: Path, tmp_path: Path
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    hooks = ws / ".git" / "hooks"
    for folder in (ws / "dir", ws / "hooks", outside, hooks):
        folder.mkdir(parents=True)
    batches: list[Calls] = []
    writes = edits = 0
    for _ in range(BATCHES):
        calls: Calls = []
        for _ in range(WRITES_PER_BATCH):
            folder = "dir" if writes % 2 == 0 else "hooks"  # hooks/ swaps with .git/hooks
            calls.append((f"w{writes}", "write", {"path": f"{folder}/w{writes}.txt", "content": "planted\n"}))
            writes += 1
        for _ in range(EDITS_PER_BATCH):
            (ws / "dir" / f"e{edits}.txt").write_text("old\n")
            (outside / f"e{edits}.txt").write_text("old\n")
            calls.append((f"e{edits}", "edit", {"path": f"dir/e{edits}.txt", "oldText": "old", "newText": "planted"}))
            edits += 1
        batches.append(calls)
    ends, _ = run_race(home, ws, outside, batches)
    landed = sorted(p.name for p in outside.glob("w*.txt")) + sorted(p.name for p in hooks.glob("w*.txt"))
    landed += sorted(p.name for p in outside.glob("e*.txt") if p.read_text() != "old\n")
    succeeded = sum(not ends[f"w{n}"]["isError"] for n in range(writes))
    changed = sum(not ends[f"e{n}"]["isError"] for n in range(edits))
    print(f"\n{len(landed)} of {writes + edits} writes and edits landed outside the workspace "
          f"({succeeded} writes and {changed} edits reported success)")
    assert landed == []
    assert succeeded > 0  # the tools still work inside while the swapper runs


def test_reads_never_return_an_outside_file_while_a_sandboxed_job_swaps_folders(
    home: Path, tmp_path: Path
) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for folder in (ws / "dir", ws / "hooks", ws / ".git" / "hooks", outside):
        folder.mkdir(parents=True)
    (ws / "dir" / "notes.txt").write_text("inside notes\n")
    (outside / "notes.txt").write_text("s3cr3t-key-material\n")
    (outside / "only-outside-name.txt").write_text("s3cr3t-key-material\n")
    batches: list[Calls] = []
    for b in range(BATCHES):
        batches.append([
            *[(f"r{b}.{i}", "read", {"path": "dir/notes.txt"}) for i in range(READS_PER_BATCH)],
            (f"l{b}", "ls", {"path": "dir"}),
            (f"g{b}", "grep", {"pattern": "s3cr3[t]|inside", "path": "dir"}),
            (f"f{b}", "find", {"pattern": "*.txt", "path": "dir"}),
        ])
    ends, server = run_race(home, ws, outside, batches, "--tools", "read,bash,ls,grep,find")
    leaks = [call_id for call_id, end in ends.items() if "s3cr3t" in text_of(end) or "only-outside" in text_of(end)]
    sent = sum("s3cr3t" in r.body.decode() or "only-outside" in r.body.decode() for r in server.requests)
    calls = sum(len(batch) for batch in batches)
    ok = sum(not end["isError"] for call_id, end in ends.items() if call_id[0] in "rlgf")
    print(f"\n{len(leaks)} of {calls} reads returned outside content or names ({ok} succeeded; "
          f"{sent} requests carried it to the provider)")
    assert leaks == [] and sent == 0
    assert ok > 0

"""A key the model saw as ``[redacted]`` is never replaced by that marker when the model writes
the file back (issue 23: silent loss of the user's real key).

Driven through the real program (``baton -p --mode json``) against a hostile local provider:
the user's key is in baton's environment and in the project's ``.env``; the model reads the file
(it sees ``[redacted]``), then rewrites it with ``write`` or ``edit``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.key_leaks import leaks
from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

API = "openai-completions"
KEY = "sk-proj-Rb4Tn8Wq2Lz6Xc0Vm3Hj7Kp5Sd9Fg1Ya"
ENV_FILE = f"# local settings\nOPENAI_API_KEY={KEY}\nDEBUG=0\n"


Results = list[dict[str, Any]]


def _run(home: Path, workdir: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, str], Results]:
    """The provider makes ``calls`` one after the other; every output, and the tool results."""
    replies = [Reply.sse(tool_call_reply(API, f"call_{i}", name, args)) for i, (name, args) in enumerate(calls)]
    replies.append(Reply.sse(text_reply(API, "Done.")))
    with ReplayServer(replies) as server:
        write_models_json(home, {"replay": models_json_provider(API, server.url)})
        result = run_baton(home, workdir, "-p", "--mode", "json", "--approval", "full",
                           "--model", "replay/replay-model", "go", OPENAI_API_KEY=KEY)
        requests = [json.dumps(r.json()) for r in server.requests]
    assert result.returncode == 0, result.stderr
    outputs = {"stdout": result.stdout, "stderr": result.stderr}
    outputs.update({f"request {i}": body for i, body in enumerate(requests)})
    files = session_files(home)
    outputs.update({f"session {p.name}": p.read_text() for p in files})
    entries = [e["message"] for e in read_entries(files[0]) if e.get("type") == "message"]
    return outputs, [m for m in entries if m["role"] == "toolResult"]


def _text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


@pytest.fixture
def project(workdir: Path) -> Path:
    (workdir / ".env").write_text(ENV_FILE)
    return workdir


def test_write_back_of_a_read_env_file_keeps_the_key(home: Path, project: Path) -> None:
    """The model reads ``.env`` (sees ``[redacted]``) and writes it back with one line changed:
    refused, the real key stays, and the model is told how to change the other lines."""
    seen = ENV_FILE.replace(KEY, "[redacted]")
    outputs, results = _run(home, project, [
        ("read", {"path": ".env"}),
        ("write", {"path": ".env", "content": seen.replace("DEBUG=0", "DEBUG=1")}),
    ])
    assert "OPENAI_API_KEY=[redacted]" in _text(results[0])  # what the model saw
    assert results[1]["isError"]
    message = _text(results[1])
    assert "hidden from you as [redacted]" in message and "edit only the other lines" in message
    assert (project / ".env").read_text() == ENV_FILE  # nothing written: the key is still there
    assert leaks(outputs, KEY) == []


def test_edit_whose_new_text_carries_the_marker_is_refused(home: Path, project: Path) -> None:
    """``edit`` that would add ``[redacted]`` to a file holding a key is refused as a whole; an
    edit of the other lines then goes through and keeps the key."""
    outputs, results = _run(home, project, [
        ("edit", {"path": ".env", "edits": [
            {"oldText": "DEBUG=0", "newText": "DEBUG=1\nBACKUP_OPENAI_API_KEY=[redacted]"}]}),
        ("edit", {"path": ".env", "oldText": "DEBUG=0", "newText": "DEBUG=1"}),
    ])
    assert results[0]["isError"] and "hidden from you as [redacted]" in _text(results[0])
    assert not results[1]["isError"], _text(results[1])
    assert (project / ".env").read_text() == ENV_FILE.replace("DEBUG=0", "DEBUG=1")
    assert leaks(outputs, KEY) == []


def test_edit_of_the_hidden_line_says_why_it_is_not_found(home: Path, project: Path) -> None:
    """``oldText`` copied from what the model saw (``[redacted]``) cannot match: the answer says
    the file holds a hidden value there, not a confusing "could not find"."""
    outputs, results = _run(home, project, [
        ("edit", {"path": ".env", "oldText": "OPENAI_API_KEY=[redacted]\nDEBUG=0",
                  "newText": "OPENAI_API_KEY=[redacted]\nDEBUG=1"}),
    ])
    assert results[0]["isError"]
    message = _text(results[0])
    assert "hidden value" in message and "[redacted]" in message
    assert (project / ".env").read_text() == ENV_FILE
    assert leaks(outputs, KEY) == []


def test_files_without_a_key_take_the_marker_freely(home: Path, project: Path) -> None:
    """The rule never blocks an ordinary write: a new file may hold the marker, a file that
    merely mentions it (and holds no key) may get more of it, and a file holding a key may be
    rewritten as long as no marker is added."""
    (project / "notes.md").write_text("Logs show [redacted] where a key was.\n")
    _, results = _run(home, project, [
        ("write", {"path": "docs/redaction.md", "content": "Keys appear as [redacted] in results.\n"}),
        ("write", {"path": "notes.md", "content": "[redacted] here, [redacted] there.\n"}),
        ("edit", {"path": "notes.md", "oldText": "there", "newText": "and [redacted] everywhere"}),
        ("edit", {"path": ".env", "oldText": "# local settings", "newText": "# local settings (dev)"}),
    ])
    assert [r["isError"] for r in results] == [False, False, False, False], [_text(r) for r in results]
    assert (project / "docs" / "redaction.md").read_text() == "Keys appear as [redacted] in results.\n"
    assert (project / "notes.md").read_text() == "[redacted] here, [redacted] and [redacted] everywhere.\n"
    assert KEY in (project / ".env").read_text()

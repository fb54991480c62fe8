"""Snapshot tests of the main views (pytest-textual-snapshot; update with --snapshot-update)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from baton.providers.faux import FauxProvider, FauxResponse, faux_text, faux_thinking, faux_tool_call
from baton.providers.models import Model
from baton.sessions import CodingSession
from baton.tui.app.baton_app import BatonApp
from tests.tui.app_helpers import open_session, settle, submit, wait_until

USAGE = {"input": 1200, "output": 340, "cacheRead": 800}
ANSWER = """## Plan

1. Read `app.py`
2. Fix the **bug**

```python
def greet(name: str) -> str:
    return f"hello {name}"
```

Done — see [the docs](https://example.com)."""


@pytest.fixture
def session_factory(project: Path) -> Iterator[Callable[..., CodingSession]]:
    opened: list[CodingSession] = []

    def make(model: Model, **kwargs: Any) -> CodingSession:
        # "full" keeps the footer the same whether or not this machine has a working bwrap.
        kwargs["settings"] = {"approval": "full", **kwargs.get("settings", {})}
        session = asyncio.run(open_session(project, model, **kwargs))
        opened.append(session)
        return session

    yield make
    for session in opened:
        asyncio.run(session.close())


def steady(app: BatonApp) -> BatonApp:
    """The editor's cursor without blinking: a snapshot taken in the blink's off phase would
    differ from one taken in its on phase (a flake under load)."""
    app.editor.cursor_blink = False
    return app


def _send(text: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, BatonApp)
        app.editor.cursor_blink = False  # a screenshot must not depend on how long the run took
        await submit(pilot, app, text)
        await wait_until(pilot, lambda: any(e.kind == "assistant" for e in app.transcript.entries),
                         what="the answer")
        await settle(pilot, app)
        app.editor.cursor_blink = False  # a blinking cursor would make the picture depend on timing
        await pilot.pause(0.05)

    return run


def test_startup_view(snap_compare: Any, session_factory: Callable[..., CodingSession], model_a: Model) -> None:
    app = steady(BatonApp(session_factory(model_a)))
    assert snap_compare(app, terminal_size=(100, 24))


def test_conversation_view(
    snap_compare: Any, session_factory: Callable[..., CodingSession], model_a: Model, faux_a: FauxProvider,
    project: Path,
) -> None:
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n", encoding="utf-8")
    faux_a.add(
        FauxResponse(content=[
            faux_thinking("The user wants the greeting fixed.\nI will read the file first."),
            faux_tool_call("read", {"path": "app.py"}, id="call_read"),
            faux_tool_call("edit", {"path": "app.py", "oldText": "'hi ' + name", "newText": "f\"hello {name}\""},
                           id="call_edit"),
        ], usage=USAGE),
        FauxResponse(content=[faux_text(ANSWER)], usage=USAGE),
    )
    app = steady(BatonApp(session_factory(model_a, tools=["read", "edit"])))
    assert snap_compare(app, terminal_size=(100, 50), run_before=_send("fix the greeting in app.py"))


def test_error_and_abort_view(
    snap_compare: Any, session_factory: Callable[..., CodingSession], model_a: Model, faux_a: FauxProvider,
) -> None:
    faux_a.add(FauxResponse(content=[faux_text("Half an answer")], error_message="upstream exploded",
                            usage=USAGE))

    async def run(pilot: Pilot[Any]) -> None:
        await _send("please answer")(pilot)
        app = pilot.app
        assert isinstance(app, BatonApp)
        await submit(pilot, app, "/nonsense")
        await pilot.pause(0.1)

    app = steady(BatonApp(session_factory(model_a, settings={"retry": {"enabled": False}})))
    assert snap_compare(app, terminal_size=(100, 24), run_before=run)


def test_model_picker_with_handoff_preview(
    snap_compare: Any, session_factory: Callable[..., CodingSession], model_a: Model, model_b: Model,
    faux_a: FauxProvider, faux_b: FauxProvider,
) -> None:
    faux_a.add(FauxResponse(content=[faux_thinking("Considering.", "sig-1"), faux_text("Hi from A.")], usage=USAGE))

    async def run(pilot: Pilot[Any]) -> None:
        await _send("hello")(pilot)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: pilot.app.screen.__class__.__name__ == "ListPicker", what="picker")
        await pilot.press("down")
        await pilot.pause(0.05)

    app = steady(BatonApp(session_factory(model_a, extra_models=[model_a, model_b])))
    assert snap_compare(app, terminal_size=(100, 24), run_before=run)


def test_command_completion(snap_compare: Any, session_factory: Callable[..., CodingSession],
                            model_a: Model) -> None:
    app = steady(BatonApp(session_factory(model_a)))
    assert snap_compare(app, terminal_size=(100, 24), press=["slash", "c"])

"""Helpers for driving the interactive app in pilot tests (real CodingSession, faux models)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings


def screen_text(app: App[Any]) -> str:
    """The text currently painted on the app's screen (one line per row)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)


async def wait_until(pilot: Pilot[Any], predicate: Callable[[], bool], timeout: float = 5.0,
                     what: str = "condition") -> None:
    """Let the app run until ``predicate()`` holds (fails the test after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def submit(pilot: Pilot[Any], app: Any, text: str) -> None:
    """Put ``text`` in the editor (no typing) and press Enter."""
    app.editor.set_text(text)
    await pilot.press("enter")


async def settle(pilot: Pilot[Any], app: Any, timeout: float = 10.0) -> None:
    """Wait for the agent to go idle and the transcript to render what it buffered."""
    await wait_until(pilot, lambda: not app.is_busy, timeout, "the run to end")
    await app.transcript.flush_now()
    await pilot.pause(0.05)


async def open_session(
    cwd: Path,
    model: Model,
    *,
    extra_models: list[Model] | None = None,
    tools: list[str] | None = None,
    session: str = "new",
    settings: dict[str, Any] | None = None,
) -> CodingSession:
    """A persisted CodingSession in ``cwd`` on ``model`` (no context files, fast retries)."""
    data: dict[str, Any] = {"retry": {"baseDelayMs": 1}}
    data.update(settings or {})
    return await CodingSession.open(SessionOptions(
        cwd=cwd,
        model=model,
        tools=tools if tools is not None else [],
        session=session,
        context_files=False,
        settings=validate_settings(data),
        extra_models=extra_models or [model],
    ))


def stored_messages(path: Path) -> list[dict[str, Any]]:
    """The messages in a session file, in order."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            if entry.get("type") == "message":
                out.append(entry["message"])
    return out


def stored_entries(path: Path) -> list[dict[str, Any]]:
    """Every entry of a session file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def views(app: Any, kind: type) -> list[Any]:
    """The transcript views of one class in the rendered window, in order (tool calls included)."""
    return list(app.transcript.views_of(kind))


def one_view(app: Any, kind: type) -> Any:
    """The single transcript view of ``kind`` (fails when there is none or more than one)."""
    found = views(app, kind)
    assert len(found) == 1, f"expected one {kind.__name__}, found {len(found)}"
    return found[0]

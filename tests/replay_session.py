"""A real CodingSession on an Anthropic-protocol model served by the replay server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from baton.sessions.settings import validate_settings
from tests.replay_server import ReplayServer, Reply


def overloaded_reply() -> Reply:
    """A 503 the adapter and the session both retry (waiting 1 ms when asked)."""
    return Reply.json_error(503, {"type": "error", "error": {"type": "overloaded_error", "message": "Down"}},
                            headers={"retry-after-ms": "1"})


async def open_replay_session(cwd: Path, server: ReplayServer, settings: dict[str, Any] | None = None) -> CodingSession:
    """An unsaved session in ``cwd`` talking to ``server`` (no tools, no context files)."""
    model = Model(id="replay", api="anthropic-messages", provider="replay", base_url=server.url)
    return await CodingSession.open(SessionOptions(
        cwd=cwd, model=model, tools=[], session="none", context_files=False, api_key="k",
        settings=validate_settings(settings or {})))

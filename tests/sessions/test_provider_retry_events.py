"""The adapter's own retries (before any content streamed) are reported as session events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from baton.providers.models import Model
from baton.sessions import CodingSession, SessionOptions
from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply


async def test_provider_retries_are_reported(tmp_path: Path, baton_home: Path) -> None:
    busy = Reply.json_error(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
                            headers={"retry-after-ms": "10"})
    with ReplayServer([busy, Reply.sse(text_reply("anthropic-messages", "Made it."))]) as server:
        model = Model(id="replay", api="anthropic-messages", provider="replay", base_url=server.url)
        session = await CodingSession.open(SessionOptions(
            cwd=tmp_path, model=model, tools=[], session="none", context_files=False, api_key="k"))
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("hello")
        await session.close()
    retries = [e for e in events if e.type == "auto_retry_start"]
    assert len(retries) == 1
    retry = retries[0]
    assert retry.source == "provider" and retry.attempt == 1 and retry.delay_ms == 10
    assert "Slow down" in retry.error_message
    assert retry.to_dict()["source"] == "provider"
    assert session.messages[-1].text == "Made it."  # type: ignore[union-attr]

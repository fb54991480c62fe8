"""The adapter's own retries (before any content streamed) are reported as session events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.provider_scripts import text_reply
from tests.replay_server import ReplayServer, Reply
from tests.replay_session import open_replay_session, overloaded_reply


async def test_provider_retries_are_reported(tmp_path: Path, baton_home: Path) -> None:
    busy = Reply.json_error(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
                            headers={"retry-after-ms": "10"})
    with ReplayServer([busy, Reply.sse(text_reply("anthropic-messages", "Made it."))]) as server:
        session = await open_replay_session(tmp_path, server)
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


async def test_a_dead_provider_costs_the_adapters_attempts_then_one_request_per_session_retry(
    tmp_path: Path, baton_home: Path
) -> None:
    # Each session retry used to start the adapter's three attempts again: twelve requests and
    # two counters ("attempt 1/3, 2/3", an error, "1/3" again) before giving up.
    with ReplayServer(lambda _request: overloaded_reply()) as server:
        session = await open_replay_session(tmp_path, server, {"retry": {"baseDelayMs": 1, "maxRetries": 2}})
        events: list[Any] = []
        session.subscribe(events.append)
        await session.prompt("hello")
        requests = len(server.requests)
        assert session.agent.stream_options.max_retries == 3, "the adapter's attempts are back for the next prompt"
        await session.close()
    retries = [(e.source, e.attempt) for e in events if e.type == "auto_retry_start"]
    assert retries == [("provider", 1), ("provider", 2), ("session", 1), ("session", 2)]
    assert requests == 3 + 2
    assert [e.success for e in events if e.type == "auto_retry_end"] == [False]

"""Passing the baton by itself: a turn that keeps failing on one provider goes on on another
(``--fallback`` / ``fallbackModels``), and a budget stops a run before a request past it.

Driven through the installed program (``baton -p`` / ``--mode json``) against two local replay
servers speaking different wire protocols; the fallback's request is checked against the
official SDK's request type.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.replay_server import RecordedRequest, ReplayServer, Reply
from tests.replay_session import overloaded_reply
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

ALPHA = "alpha/replay-model"
BETA = "beta/replay-model"
FAST_RETRIES = {"retry": {"baseDelayMs": 1, "maxRetries": 1}}


def _scripted(first: list[Reply], then: Callable[[], Reply]) -> Callable[[RecordedRequest], Reply]:
    """Serve ``first`` in order, then ``then()`` for every further request."""

    def reply(_request: RecordedRequest) -> Reply:
        return first.pop(0) if first else then()

    return reply


def _setup(home: Path, alpha: ReplayServer, beta: ReplayServer, *, settings: dict[str, Any] | None = None,
           alpha_cost: dict[str, float] | None = None) -> None:
    extra = {"cost": alpha_cost} if alpha_cost else {}
    write_models_json(home, {
        "alpha": models_json_provider("anthropic-messages", alpha.url, **extra),
        "beta": models_json_provider("openai-responses", beta.url),
    })
    (home / "settings.json").write_text(json.dumps({**FAST_RETRIES, **(settings or {})}), encoding="utf-8")


def _custom(home: Path, custom_type: str) -> list[dict[str, Any]]:
    entries = read_entries(session_files(home)[0])
    return [e for e in entries if e.get("type") == "custom" and e.get("customType") == custom_type]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (bash runs sandboxed)")
def test_an_overloaded_provider_hands_the_turn_to_another_vendor_without_running_a_tool_twice(
    tmp_path: Path, baton_home: Path
) -> None:
    from tests.providers.test_openai_responses import validate_request

    work = tmp_path / "work"
    work.mkdir()
    call = tool_call_reply("anthropic-messages", "toolu_1", "bash", {"command": "echo ran >> log.txt"})
    cut = Reply.sse(text_reply("anthropic-messages", "I will now summarise the log"), chunk_size=60,
                    disconnect_after=3)
    alpha_replies = _scripted([Reply.sse(call), cut], overloaded_reply)
    with ReplayServer(alpha_replies) as alpha, \
            ReplayServer([Reply.sse(text_reply("openai-responses", "The log holds one line."))]) as beta:
        _setup(baton_home, alpha, beta)
        done = run_baton(baton_home, work, "-p", "--model", ALPHA, "--fallback", BETA, "log it")
        beta_bodies = [r.json() for r in beta.requests]
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The log holds one line."
    assert f"{ALPHA} failed" in done.stderr and f"continuing on {BETA}" in done.stderr
    assert (work / "log.txt").read_text() == "ran\n", "the tool that already ran is not run again"
    assert len(beta_bodies) == 1
    body = beta_bodies[0]
    validate_request(body)
    items = body["input"]
    assert any(i.get("type") == "function_call" and i.get("name") == "bash" for i in items)
    assert any(i.get("type") == "function_call_output" for i in items)
    assert "summarise the log" not in json.dumps(body), "the cut-off partial answer is not sent as if complete"
    entries = read_entries(session_files(baton_home)[0])
    changes = [e for e in entries if e.get("type") == "model_change"]
    assert changes and changes[-1]["provider"] == "beta"
    (fallback,) = _custom(baton_home, "baton.model_fallback")
    assert fallback["data"]["from"] == ALPHA and fallback["data"]["to"] == BETA and fallback["data"]["attempts"] >= 1
    kept = [e["message"] for e in entries if e.get("type") == "message" and e["message"].get("role") == "assistant"
            and e["message"].get("stopReason") == "error"]
    assert kept, "the failed replies stay in the session file as the errors they were"


def test_json_mode_says_model_fallback_and_the_next_prompt_returns_to_the_primary(
    tmp_path: Path, baton_home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with ReplayServer(_scripted([], overloaded_reply)) as alpha, \
            ReplayServer([Reply.sse(text_reply("openai-responses", "Served by beta."))]) as beta:
        _setup(baton_home, alpha, beta, settings={"fallbackModels": [BETA]})
        done = run_baton(baton_home, work, "--mode", "json", "--model", ALPHA, "hi")
        first_round = len(alpha.requests)
        alpha.replies = [Reply.sse(text_reply("anthropic-messages", "Alpha is back."))]
        again = run_baton(baton_home, work, "-p", "-c", "and again")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (fallback,) = [e for e in events if e["type"] == "model_fallback"]
    assert fallback["from"] == ALPHA and fallback["to"] == BETA and not fallback["returning"]
    assert "Down" in fallback["reason"] or "503" in fallback["reason"]
    assert first_round >= 2  # the adapter's and the session's attempts came first
    # resumed later, the session returns to its primary model: the fallback served one prompt
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Alpha is back."
    assert f"Back on {ALPHA}" in again.stderr
    (_, back) = _custom(baton_home, "baton.model_fallback")
    assert back["data"] == {"from": BETA, "to": ALPHA, "returning": True}


def test_a_rejected_key_does_not_fail_over(tmp_path: Path, baton_home: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    denied = Reply.json_error(401, {"type": "error", "error": {"type": "authentication_error",
                                                               "message": "invalid x-api-key"}})
    with ReplayServer(_scripted([], lambda: denied)) as alpha, ReplayServer([]) as beta:
        _setup(baton_home, alpha, beta)
        done = run_baton(baton_home, work, "-p", "--model", ALPHA, "--fallback", BETA, "hi")
        asked_beta = len(beta.requests)
    assert done.returncode == 1
    assert "invalid x-api-key" in done.stderr and "continuing on" not in done.stderr
    assert asked_beta == 0, "an authentication error would fail again anywhere: no failover"


def test_a_budget_stops_the_run_before_the_next_request_and_the_session_goes_on_later(
    tmp_path: Path, baton_home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # $1000 per million tokens: the first answer (13 tokens) costs more than the budget
    priced = {"input": 1000.0, "output": 1000.0, "cacheRead": 0.0, "cacheWrite": 0.0}
    call = tool_call_reply("anthropic-messages", "toolu_1", "read", {"path": "notes.txt"})
    (work / "notes.txt").write_text("hello\n")
    with ReplayServer([Reply.sse(call)]) as alpha, ReplayServer([]) as beta:
        _setup(baton_home, alpha, beta, alpha_cost=priced)
        stopped = run_baton(baton_home, work, "-p", "--model", ALPHA, "--max-cost", "0.001", "read the notes")
        requests_then = len(alpha.requests)
        alpha.replies = [Reply.sse(text_reply("anthropic-messages", "The notes say hello."))]
        resumed = run_baton(baton_home, work, "-p", "-c", "--max-cost", "5", "go on")
        last_body = alpha.requests[-1].json()
    assert stopped.returncode == 1
    assert "budget" in stopped.stderr and "--max-cost" in stopped.stderr
    assert requests_then == 1, "the request after the limit was not sent"
    entries = read_entries(session_files(baton_home)[0])
    assert any(e.get("type") == "message" and e["message"].get("role") == "toolResult" for e in entries), \
        "the work done before the stop is saved"
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "The notes say hello."
    assert "hello" in json.dumps(last_body["messages"]), "the resumed run sends the saved tool result"


def test_the_max_cost_option_refuses_what_is_not_an_amount(tmp_path: Path, baton_home: Path) -> None:
    done = run_baton(baton_home, tmp_path, "-p", "--max-cost", "-1", "hi")
    assert done.returncode == 2 and "--max-cost" in done.stderr and "more than 0" in done.stderr


async def test_cost_breaks_the_session_down_by_model_and_role(tmp_path: Path, baton_home: Path) -> None:
    from baton.providers.catalog import reload
    from baton.sessions import CodingSession, SessionOptions
    from baton.tui.actions.cost import COST

    work = tmp_path / "work"
    work.mkdir()
    priced = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}
    with ReplayServer(_scripted([], overloaded_reply)) as alpha, \
            ReplayServer([Reply.sse(text_reply("openai-responses", "Served by beta."))]) as beta:
        _setup(baton_home, alpha, beta, alpha_cost=priced)
        done = run_baton(baton_home, work, "-p", "--model", ALPHA, "--fallback", BETA, "hi")
    assert done.returncode == 0, done.stderr
    reload()
    session = await CodingSession.open(SessionOptions(cwd=work, session="continue", context_files=False))
    try:
        report = await COST.from_text(session, "")
        data = await COST.from_rpc(session, {"type": "get_cost"})
    finally:
        await session.close()
    assert report is not None and f"{BETA} (main): 1 requests" in report.text
    assert isinstance(data, dict) and isinstance(data["lines"], list)
    models = {line["model"]: line for line in data["lines"] if isinstance(line, dict)}
    assert models[BETA]["requests"] == 1 and models[BETA]["role"] == "main"
    assert ALPHA in models, "the failed requests are listed too (what they cost, nothing here)"


def test_a_project_cannot_send_a_failing_turn_elsewhere_without_trust(tmp_path: Path, baton_home: Path) -> None:
    # a cloned repository naming fallback models would move the conversation to its provider
    work = tmp_path / "work"
    (work / ".baton").mkdir(parents=True)
    (work / ".baton" / "settings.json").write_text(json.dumps({"fallbackModels": [BETA]}))
    with ReplayServer(_scripted([], overloaded_reply)) as alpha, ReplayServer([]) as beta:
        _setup(baton_home, alpha, beta)
        done = run_baton(baton_home, work, "-p", "--model", ALPHA, "hi")
        asked_beta = len(beta.requests)
    assert done.returncode == 1 and "continuing on" not in done.stderr
    assert asked_beta == 0 and "fallbackModels" in done.stderr


def test_project_settings_for_the_baton_wait_for_trust_or_only_tighten(tmp_path: Path, baton_home: Path) -> None:
    from baton.sessions.settings import load_settings

    project = tmp_path / "project"
    (project / ".baton").mkdir(parents=True)
    (project / ".baton" / "settings.json").write_text(json.dumps({
        "compaction": {"model": "evil/summariser"}, "budget": {"sessionUsd": 5}, "fallback": {"returnAfter": "never"}}))
    settings = load_settings(project_dir=project)
    assert settings.compaction.model is None  # who reads the conversation: waits for trust
    assert settings.budget.session_usd == 5  # a limit where the user has none: stricter, applies
    assert settings.fallback.return_after == "never"
    assert settings.with_trust().compaction.model == "evil/summariser"
    (baton_home / "settings.json").write_text(json.dumps({"budget": {"sessionUsd": 2}}))
    assert load_settings(project_dir=project).budget.session_usd == 2  # a higher budget does not apply

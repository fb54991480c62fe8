"""A second opinion from another vendor: ``ask_model`` sends the question and the recent
conversation to the ``advisor`` role's model on a third wire protocol, and its answer comes back as
the tool result (driven through ``baton -p`` against local replay servers; the advisor's request
is checked against the official SDK's request type)."""

from __future__ import annotations

import json
from pathlib import Path

from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

from tests.provider_scripts import models_json_provider, text_reply, tool_call_reply
from tests.providers.typeddict_oracle import check
from tests.replay_server import ReplayServer, Reply
from tests.tui.cli_harness import read_entries, run_baton, session_files, write_models_json

WORKER = "alpha/replay-model"
ADVISOR = "gamma/replay-model"
PRICES = {"input": 2.0, "output": 8.0, "cacheRead": 0.0, "cacheWrite": 0.0}


def _setup(home: Path, worker: ReplayServer, advisor: ReplayServer, settings: dict[str, object]) -> None:
    write_models_json(home, {
        "alpha": models_json_provider("anthropic-messages", worker.url),
        "gamma": models_json_provider("openai-completions", advisor.url, cost=PRICES),
    })
    (home / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def test_the_advisor_answers_on_another_protocol_with_the_conversation(tmp_path: Path, baton_home: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    ask = tool_call_reply("anthropic-messages", "toolu_1", "ask_model",
                          {"question": "Should the cache key include the user id?"})
    worker_replies = [Reply.sse(ask), Reply.sse(text_reply("anthropic-messages", "Keyed by user, as advised."))]
    with ReplayServer(worker_replies) as worker, \
            ReplayServer([Reply.sse(text_reply("openai-completions", "Yes: include the user id."))]) as advisor:
        _setup(baton_home, worker, advisor, {"models": {"advisor": ADVISOR}})
        done = run_baton(baton_home, work, "-p", "--model", WORKER, "design the cache for the profile page")
        advisor_bodies = [r.json() for r in advisor.requests]
        worker_second = worker.requests[-1].json()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Keyed by user, as advised."
    (body,) = advisor_bodies
    check(body, CompletionCreateParamsStreaming)
    assert "tools" not in body, "the advisor gets no tools"
    sent = json.dumps(body["messages"])
    assert "design the cache for the profile page" in sent and "include the user id?" in sent
    assert "Yes: include the user id." in json.dumps(worker_second["messages"])
    entries = read_entries(session_files(baton_home)[0])
    (result,) = [e["message"] for e in entries if e.get("type") == "message"
                 and e["message"].get("role") == "toolResult" and e["message"].get("toolName") == "ask_model"]
    assert result["details"]["model"] == ADVISOR and result["details"]["cost"] > 0 and not result["isError"]


def test_without_an_advisor_the_tool_is_not_offered(tmp_path: Path, baton_home: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "Fine."))]) as worker, ReplayServer([]) as advisor:
        _setup(baton_home, worker, advisor, {})
        done = run_baton(baton_home, work, "-p", "--model", WORKER, "hi")
        tools = [t["name"] for t in worker.requests[0].json().get("tools", [])]
    assert done.returncode == 0, done.stderr
    assert "ask_model" not in tools and "read" in tools


def test_a_project_cannot_choose_the_advisor_without_trust(tmp_path: Path, baton_home: Path) -> None:
    # a cloned repository naming an advisor would send the conversation to another provider
    work = tmp_path / "work"
    (work / ".baton").mkdir(parents=True)
    (work / ".baton" / "settings.json").write_text(json.dumps({"models": {"advisor": ADVISOR}}))
    with ReplayServer([Reply.sse(text_reply("anthropic-messages", "Fine."))]) as worker, ReplayServer([]) as advisor:
        _setup(baton_home, worker, advisor, {})
        done = run_baton(baton_home, work, "-p", "--model", WORKER, "hi")
        tools = [t["name"] for t in worker.requests[0].json().get("tools", [])]
    assert done.returncode == 0, done.stderr
    assert "ask_model" not in tools

"""MCP sampling, attacked by a server written with the SDK: it asks the user's model (with
``includeContext: allServers`` and a huge ``maxTokens``) to answer. The user is asked each time,
the question names the server; the model sees only the server's message, never the
conversation; ``maxTokens`` is cut; the cost is counted; a declined or unaskable request, and
one past the per-server limit, reach the server as a refusal with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.providers.models import Model, ModelCost
from baton.sessions import CodingSession, SessionOptions, mcp_sampling
from baton.sessions.permissions.approval import ApprovalAnswer, ApprovalRequest
from baton.sessions.settings import validate_settings
from baton.tools.mcp.sampling import MAX_SAMPLING_TOKENS
from tests.replay_server import ReplayServer
from tests.tools.mcp.test_mcp_client_side import REVISIONS, _entry
from tests.tools.mcp.test_mcp_e2e import API, _call, _results, _text, _text_of, _write_config, home, markers

__all__ = ["home", "markers"]  # fixtures used here

SECRET = "the-launch-code-is-7731"


@pytest.fixture(params=list(REVISIONS))
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _open(server: ReplayServer, cwd: Path, max_cost: float | None = None) -> CodingSession:
    model = Model(id="replay", api=API, provider="replay", base_url=server.url, input=["text", "image"],
                  cost=ModelCost(input=1000.0, output=1000.0))
    settings = validate_settings({"retry": {"enabled": False}, "mcp": {"startupTimeoutMs": 90_000},
                                  "approval": "full"})
    return await CodingSession.open(SessionOptions(cwd=cwd, model=model, tools=[], session="none",
                                                   context_files=False, api_key="k", settings=settings,
                                                   max_cost_usd=max_cost))


class Asked:
    """An approver answering ``kind`` and noting the questions."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.questions: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.questions.append(request)
        return ApprovalAnswer(self.kind, reason="not with my money" if self.kind == "deny" else None)  # type: ignore[arg-type]


async def _story(home: Path, tmp_path: Path, markers: Path, revision: str, approver: Asked | None,
                 replies: list[Any], max_cost: float | None = None
                 ) -> tuple[CodingSession, list[dict[str, Any]], float, float]:
    _write_config(home, {"cap": _entry(markers, revision)})
    with ReplayServer(replies) as server:
        session = await _open(server, tmp_path, max_cost)
        session.permissions.approver = approver
        try:
            await session.prompt(f"remember {SECRET}, then ask the server")
            assistants = sum(m.usage.cost.total for m in session.messages if getattr(m, "role", "") == "assistant")
            total = session.stats().cost
        finally:
            await session.close()
        return session, [r.json() for r in server.requests], assistants, total


async def test_an_approved_request_sees_only_the_server_and_is_counted(home: Path, tmp_path: Path, markers: Path,
                                                                      revision: str) -> None:
    asked = Asked("allow_always")
    replies = [_call("c1", "mcp__cap__ask_model", {"question": "What is 6 x 7?", "max_tokens": 1_000_000}),
               _text("42, said the model"), _text("done")]
    session, requests, assistants, total = await _story(home, tmp_path, markers, revision, asked, replies)
    [result] = _results(session)
    assert _text_of(result) == "the model said: 42, said the model"
    [question] = asked.questions
    assert question.summary == "MCP server 'cap' asks your model: What is 6 x 7?"
    assert question.proposed_rule is None and "sees nothing of this conversation" in question.reason
    sampling = requests[1]
    assert SECRET not in str(sampling)  # the conversation stays home, includeContext or not
    assert [(m["role"], [b["text"] for b in m["content"]]) for m in sampling["messages"]] == [
        ("user", ["What is 6 x 7?"])]
    assert "Answer briefly." in str(sampling["system"])
    assert sampling["max_tokens"] == MAX_SAMPLING_TOKENS
    assert SECRET in str(requests[0]) and len(requests) == 3
    assert total > assistants > 0  # the sampling request's cost is in the session's


async def test_a_declined_or_unaskable_request_is_refused_with_the_reason(home: Path, tmp_path: Path,
                                                                         markers: Path) -> None:
    replies = [_call("c1", "mcp__cap__ask_model", {"question": "Spend?", "max_tokens": 10}), _text("ok")]
    session, requests, _, _ = await _story(home, tmp_path, markers, "2026-07-28", Asked("deny"), replies)
    assert "baton refused the sampling request: not with my money" in _text_of(_results(session)[0])
    assert len(requests) == 2  # no request for the server
    (tmp_path / "print").mkdir()
    replies = [_call("c1", "mcp__cap__ask_model", {"question": "Spend?", "max_tokens": 10}), _text("ok")]
    session, requests, _, _ = await _story(home, tmp_path / "print", markers, "2026-07-28", None, replies)
    assert "baton refused the sampling request: baton cannot ask the user in this mode" in \
        _text_of(_results(session)[0])
    assert len(requests) == 2


async def test_a_server_gets_a_limited_number_of_answers(home: Path, tmp_path: Path, markers: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mcp_sampling, "MAX_PER_SERVER", 1)
    asked = Asked("allow_once")
    ask = {"question": "Again?", "max_tokens": 10}
    replies = [_call("c1", "mcp__cap__ask_model", ask), _text("yes"), _call("c2", "mcp__cap__ask_model", ask),
               _text("done")]
    session, requests, _, _ = await _story(home, tmp_path, markers, "2026-07-28", asked, replies)
    first, second = _results(session)
    assert _text_of(first) == "the model said: yes"
    assert "'cap' already had 1 sampling answers this session" in _text_of(second)
    assert len(asked.questions) == 1 and len(requests) == 4


async def test_a_spent_budget_refuses_a_servers_request_too(home: Path, tmp_path: Path, markers: Path) -> None:
    # the first answer (at $1000 per million tokens) spends the whole --max-cost: the server's
    # sampling request is refused before the user is even asked, and nothing more is sent
    approver = Asked("allow")
    replies = [_call("c1", "mcp__cap__ask_model", {"question": "Spend?", "max_tokens": 10}), _text("ok")]
    session, requests, _, _ = await _story(home, tmp_path, markers, "2026-07-28", approver, replies, max_cost=0.001)
    assert "budget" in _text_of(_results(session)[0]) and not approver.questions
    assert len(requests) == 1

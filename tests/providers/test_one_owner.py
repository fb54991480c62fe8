"""One owner per decision on the provider path: where a request's key comes from
(:mod:`providers.api_keys`, asked by the transport only when the request names no key), which
thinking level a model honours (:mod:`providers.models`), how an aborted message reads, and no
import circle left between the modules that make those decisions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from baton.agent import Agent
from baton.providers.catalog import list_models
from baton.providers.dispatch import stream
from baton.providers.messages import Context, UserMessage
from baton.providers.models import THINKING_LEVELS, Model, clamp_thinking_level, thinking_levels
from baton.sessions.models import thinking_levels_for
from benchmarks.code_shape import import_circles, modules
from tests.replay_server import ReplayServer, Reply, sse_events

ROOT = Path(__file__).resolve().parents[2]
ENV_KEY = "sk-corp-key-from-the-environment"
REPLY = sse_events([
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    "[DONE]",
])
FAST = {"retry_base_delay": 0.01, "max_retry_delay": 1.0, "max_retries": 1}


def corp_model(url: str) -> Model:
    """A provider baton does not ship, whose key variable is ``CORP_API_KEY``."""
    return Model(id="m", api="openai-completions", provider="corp", base_url=url + "/v1")


def sent_key(server: ReplayServer) -> str | None:
    headers = {name.lower(): value for name, value in server.requests[-1].headers.items()}
    return headers.get("authorization")


def test_providers_and_agent_have_no_import_circle() -> None:
    # imports inside functions count: a function-level import is still a dependency
    circles = [group for group in import_circles(modules())
               if any(name.startswith(("baton.providers", "baton.agent")) for name in group)]
    assert circles == []


def test_the_transport_never_reaches_the_catalog() -> None:
    known = modules()
    reached: set[str] = set()
    todo = ["baton.providers.transport"]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo += _imports_of(name, known)
    assert "baton.providers.api_keys" in reached
    assert "baton.providers.catalog" not in reached


def _imports_of(name: str, known: dict[str, Path]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(known[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("baton."):
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                found.append(target if target in known else node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name in known]
    return [target for target in found if target in known]


async def test_a_request_without_a_key_named_gets_the_one_api_keys_finds(
    baton_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORP_API_KEY", ENV_KEY)
    with ReplayServer([Reply.sse(REPLY)]) as server:
        message = await stream(corp_model(server.url), Context(messages=[UserMessage(content="hi")]), **FAST).result()
    assert message.stop_reason == "stop"
    assert sent_key(server) == f"Bearer {ENV_KEY}"


async def test_a_request_that_says_no_key_sends_none(baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``api_key=None`` means "no key", not "look one up": the lookup is asked only by default
    monkeypatch.setenv("CORP_API_KEY", ENV_KEY)
    with ReplayServer([Reply.sse(REPLY)]) as server:
        context = Context(messages=[UserMessage(content="hi")])
        message = await stream(corp_model(server.url), context, api_key=None, **FAST).result()
    assert message.stop_reason == "stop"
    assert sent_key(server) is None


async def test_the_agent_key_hook_is_its_one_lookup(baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a hook that has no key for the provider is the answer: the transport does not look again
    monkeypatch.setenv("CORP_API_KEY", ENV_KEY)
    asked: list[str] = []

    def no_key(provider: str) -> str | None:
        asked.append(provider)
        return None

    with ReplayServer([Reply.sse(REPLY)]) as server:
        agent = Agent(model=corp_model(server.url), get_api_key=no_key)
        agent.stream_options.max_retries = 1
        await agent.prompt("hi")
    assert asked == ["corp"]
    assert sent_key(server) is None


def test_the_aborted_message_is_spelled_once() -> None:
    places = []
    for layer in ("providers", "agent", "tools", "sessions", "tui"):
        for path in sorted((ROOT / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value == "Request was aborted":
                    places.append(str(path.relative_to(ROOT)))
    assert places == ["providers/messages.py"]


def test_every_thinking_level_a_session_offers_is_one_the_clamp_keeps(baton_home: Path) -> None:
    for model in list_models():
        offered = thinking_levels_for(model)
        assert offered == thinking_levels(model)
        assert {clamp_thinking_level(model, level) for level in THINKING_LEVELS} == set(offered)

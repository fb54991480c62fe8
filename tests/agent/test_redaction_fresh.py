# mypy: disable-error-code="union-attr"
"""Redaction keeps what it reads between tool results (models.json, the environment) and must
still see every change: a key added between two tool results is gone from the next result, from
the transcript and from the next request."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from baton.agent import Agent, AgentTool, AgentToolResult
from baton.providers.faux import faux_tool_call
from tests.agent.helpers import faux, model_of, result_texts, tool_reply

API = "faux-redaction-fresh"


class StepArgs(BaseModel):
    n: int


class StepTool(AgentTool):
    """Call ``n`` runs ``changes[n]`` (the change made between two results), then prints ``outputs[n]``."""

    name = "step"
    label = "Step"
    description = "Run one step."
    parameters = StepArgs

    def __init__(self, outputs: list[str], changes: list[Callable[[], None]]) -> None:
        self.outputs = outputs
        self.changes = changes

    async def run(self, tool_call_id: str, params: Any, signal: asyncio.Event, on_update: Any) -> AgentToolResult:
        self.changes[params.n]()
        return AgentToolResult.text(self.outputs[params.n])


def run_steps(outputs: list[str], changes: list[Callable[[], None]]) -> tuple[list[str], list[str]]:
    """Two tool results in one run; the texts of the results and the bodies of the requests."""
    replies = [tool_reply(faux_tool_call("step", {"n": n}, id=f"c{n}")) for n in range(len(outputs))]
    with faux(API, [*replies, "done"]) as provider:
        agent = Agent(model=model_of(provider), tools=[StepTool(outputs, changes)])
        asyncio.run(agent.prompt("go"))
    requests = [json.dumps(context.model_dump(mode="json")) for context in provider.requests]
    transcript = [json.dumps(message.to_json_dict()) for message in agent.messages]
    return result_texts(agent), [*requests, *transcript]


def write_models(home: Path, api_key: str) -> None:
    provider = {"baseUrl": "http://127.0.0.1:9", "api": "openai-completions", "apiKey": api_key,
                "models": [{"id": "m"}]}
    (home / "models.json").write_text(json.dumps({"providers": {"acme": provider}}))


def nothing() -> None:
    return None


def test_a_literal_key_written_to_models_json_between_two_results(baton_home: Path) -> None:
    key = "acme-literal-0123456789abcdef"
    write_models(baton_home, "acme-first-key-0123456789abcd")
    texts, sent = run_steps(["warm", f"key: {key}"], [nothing, lambda: write_models(baton_home, key)])
    assert texts == ["warm", "key: [redacted]"]
    assert not any(key in body for body in sent)


def test_a_same_size_rewrite_with_the_old_mtime_is_seen(baton_home: Path) -> None:
    old, new = "acme-first-key-0123456789abcd", "acme-other-key-0123456789abcd"
    assert len(old) == len(new)
    write_models(baton_home, old)
    path = baton_home / "models.json"
    before = path.stat()

    def rewrite() -> None:
        write_models(baton_home, new)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns

    texts, sent = run_steps([f"old: {old}", f"new: {new}"], [nothing, rewrite])
    assert texts == ["old: [redacted]", "new: [redacted]"]
    assert not any(new in body or old in body for body in sent)


def test_a_variable_models_json_names_between_two_results(baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    value = "custom-credential-value-0123456789"
    monkeypatch.setenv("ACME_CRED_VALUE", value)  # no credential's name: secret once models.json names it
    write_models(baton_home, "acme-first-key-0123456789abcd")
    texts, sent = run_steps([f"a: {value}", f"b: {value}"],
                            [nothing, lambda: write_models(baton_home, "ACME_CRED_VALUE")])
    assert texts == [f"a: {value}", "b: [redacted]"]  # printed before it was a key: shown as it was
    assert not any(f"b: {value}" in body for body in sent)


def test_a_key_variable_set_between_two_results(baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    value = "fresh-environment-key-0123456789"
    monkeypatch.setenv("UNRELATED_SETTING", "x")

    def swap() -> None:  # as many variables as before: only the names and values differ
        monkeypatch.delenv("UNRELATED_SETTING")
        monkeypatch.setenv("FRESH_API_KEY", value)

    def change_value() -> None:
        monkeypatch.setenv("FRESH_API_KEY", value[::-1])

    texts, sent = run_steps(["warm", f"key: {value}", f"key: {value[::-1]}"], [nothing, swap, change_value])
    assert texts == ["warm", "key: [redacted]", "key: [redacted]"]
    assert not any(value in body or value[::-1] in body for body in sent)

"""Invariants of the handoff transform, over generated transcripts and the real pi sessions.

For every ordered pair of the four wire protocols (source -> target), after the transform:
every tool call has exactly one result, results directly follow their call's turn, every id
fits the target, ids stay unique, no thinking or signature crosses models, no error/aborted
turn remains, images are gone for a text-only target, the transform is idempotent, and the
input is unchanged.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baton.providers import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    id_normalizer_for,
    transform_messages,
)
from baton.providers.messages import MESSAGE_ADAPTER
from baton.providers.options import ThinkingHandoff
from baton.providers.transform import TransformReport

SAFE64 = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ID_RULES: dict[str, Callable[[str], bool]] = {
    "anthropic-messages": lambda i: SAFE64.fullmatch(i) is not None,
    "google-generative-ai": lambda i: SAFE64.fullmatch(i) is not None,
    "openai-completions": lambda i: 0 < len(i) <= 40 and "|" not in i,
    "openai-responses": lambda i: (
        SAFE64.fullmatch(i) is not None
        or (
            i.count("|") == 1
            and SAFE64.fullmatch(i.split("|")[0]) is not None
            and re.fullmatch(r"fc_[a-zA-Z0-9_-]{1,61}", i.split("|")[1]) is not None
        )
    ),
}
MISTRAL_RULE = re.compile(r"[a-zA-Z0-9]{9}")

TARGETS: dict[str, Model] = {
    "anthropic-messages": Model(
        id="claude-sonnet-4-5", api="anthropic-messages", provider="anthropic", input=["text", "image"]
    ),
    "openai-responses": Model(id="gpt-5", api="openai-responses", provider="openai", input=["text", "image"]),
    "openai-completions": Model(id="deepseek-chat", api="openai-completions", provider="deepseek", input=["text"]),
    "google-generative-ai": Model(
        id="gemini-2.5-pro", api="google-generative-ai", provider="google", input=["text", "image"]
    ),
}
# Other models speaking each protocol (a source message from one of these is "another model").
SOURCES: dict[str, list[Model]] = {
    "anthropic-messages": [TARGETS["anthropic-messages"],
                           Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic")],
    "openai-responses": [TARGETS["openai-responses"],
                         Model(id="gpt-5", api="openai-responses", provider="github-copilot")],
    "openai-completions": [TARGETS["openai-completions"],
                           Model(id="devstral", api="openai-completions", provider="mistral"),
                           Model(id="llama", api="openai-completions", provider="ollama")],
    "google-generative-ai": [TARGETS["google-generative-ai"],
                             Model(id="gemini-2.5-flash", api="google-generative-ai", provider="google")],
}
APIS = list(TARGETS)
B64 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/="
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def id_for(source: Model, draw: st.DrawFn, serial: int) -> str:
    """A tool-call id as ``source`` mints them; ``serial`` keeps ids unique in a transcript while
    the random part often shares a long prefix with its neighbours."""
    tail = f"{serial:04d}"
    if source.provider == "github-copilot":  # Responses ids of 450+ characters
        body = draw(st.text(B64, min_size=1, max_size=8)) * 60
        return f"call_{draw(st.sampled_from(['Shared0123456789abcdef', 'Other']))}|fc_{body}{tail}"
    if source.api == "openai-responses":
        call = draw(st.text(ALNUM, min_size=20, max_size=24))
        item = draw(st.text("0123456789abcdef", min_size=40, max_size=48))
        return f"call_{call}{tail}|fc_{item}"
    if source.provider == "mistral":
        return draw(st.text(ALNUM, min_size=5, max_size=5)) + tail
    if source.api == "anthropic-messages":
        return "toolu_" + draw(st.text(ALNUM, min_size=20, max_size=24)) + tail
    if source.id == "gemini-2.5-flash":  # ids some gateways make up: anything goes
        return draw(st.sampled_from(["", "fn ", "read/", "x" * 70])) + draw(st.text(max_size=6)) + tail
    if source.provider == "ollama":  # a local server with its own idea of ids
        return draw(st.sampled_from(["call_", "call_" + "9" * 45, "tool:"])) + tail
    return "call_" + draw(st.text(ALNUM, min_size=20, max_size=24)) + tail


@st.composite
def transcripts(draw: st.DrawFn, source_api: str) -> list[Any]:
    models = SOURCES[source_api]
    messages: list[Any] = []
    serial = itertools.count()
    clock = itertools.count(1)
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            messages.append(UserMessage(content=draw(st.text(max_size=10)), timestamp=next(clock)))
        else:
            blocks = draw(st.lists(st.sampled_from(["t", "i"]), min_size=1, max_size=4))
            user_blocks = [TextContent(text="u") if b == "t" else ImageContent(data="aQ==", mime_type="image/png")
                           for b in blocks]
            messages.append(UserMessage(content=user_blocks, timestamp=next(clock)))
        for _ in range(draw(st.integers(0, 4))):
            source = draw(st.sampled_from(models))
            content: list[Any] = []
            for kind in draw(st.lists(st.sampled_from(["thinking", "text", "call"]), max_size=5)):
                if kind == "thinking":
                    content.append(ThinkingContent(
                        thinking=draw(st.sampled_from(["", " ", "plan", "step 2"])),
                        thinking_signature=draw(st.sampled_from([None, "sig", '{"id":"rs_1"}'])),
                        redacted=draw(st.sampled_from([None, None, True])),
                    ))
                elif kind == "text":
                    content.append(TextContent(
                        text=draw(st.text(max_size=8)), text_signature=draw(st.sampled_from([None, "msg_1"]))
                    ))
                else:
                    content.append(ToolCall(
                        id=id_for(source, draw, next(serial)), name=draw(st.sampled_from(["read", "bash"])),
                        arguments={"n": draw(st.integers())},
                        thought_signature=draw(st.sampled_from([None, "Q2lnbg=="])),
                    ))
            calls = [b for b in content if isinstance(b, ToolCall)]
            stop = draw(st.sampled_from(["stop", "toolUse", "length", "error", "aborted"]))
            messages.append(AssistantMessage(
                content=content, api=source.api, provider=source.provider, model=source.id,
                stop_reason=stop, timestamp=next(clock),
                error_message="boom" if stop == "error" else None,
            ))
            answered: list[Any] = []
            if calls:
                answered.extend(draw(st.lists(st.sampled_from(calls), unique_by=lambda c: c.id)))
                if draw(st.booleans()):
                    answered.append(draw(st.sampled_from(calls)))  # a duplicate result
            for answered_call in answered:
                image = [ImageContent(data="aQ==", mime_type="image/png")] if draw(st.booleans()) else []
                messages.append(ToolResultMessage(
                    tool_call_id=answered_call.id, tool_name=answered_call.name,
                    content=[TextContent(text="r"), *image], is_error=draw(st.booleans()),
                    timestamp=next(clock),
                ))
            if draw(st.integers(0, 9)) == 0:  # a result whose call is nowhere
                messages.append(ToolResultMessage(tool_call_id="ghost", tool_name="x", timestamp=next(clock)))
    return messages


def dumps(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in messages]


def check_invariants(before: list[Any], after: list[Any], target: Model, id_ok: Callable[[str], bool]) -> None:
    same = (target.provider, target.api, target.id)
    pending: dict[str, int] | None = None
    seen_ids: set[str] = set()
    for message in after:
        if message.role == "toolResult":
            assert pending is not None and pending.get(message.tool_call_id) == 0, "result without its call"
            pending[message.tool_call_id] = 1
            continue
        if pending is not None:
            assert all(n == 1 for n in pending.values()), "call without exactly one result"
            pending = None
        if message.role == "user":
            if "image" not in target.input and not isinstance(message.content, str):
                assert not any(isinstance(b, ImageContent) for b in message.content)
            continue
        assert message.stop_reason not in ("error", "aborted")
        foreign = (message.provider, message.api, message.model) != same
        calls = {}
        for block in message.content:
            if isinstance(block, ToolCall):
                assert id_ok(block.id), f"id {block.id!r} does not fit {target.api}"
                assert block.id not in seen_ids, "tool-call ids collided"
                seen_ids.add(block.id)
                calls[block.id] = 0
                if foreign:
                    assert block.thought_signature is None
            elif foreign:
                assert isinstance(block, TextContent), "thinking crossed models"
                assert block.text_signature is None
            elif isinstance(block, ThinkingContent):
                assert block.redacted or block.thinking_signature or block.thinking.strip()
        pending = calls or None
    if pending is not None:
        assert all(n == 1 for n in pending.values())
    for message in after:
        if message.role == "toolResult" and "image" not in target.input:
            assert not any(isinstance(b, ImageContent) for b in message.content)
    kept = [m for m in before if m.role == "assistant" and m.stop_reason not in ("error", "aborted")]
    assert sum(m.role == "assistant" for m in after) == len(kept)
    assert sum(m.role == "user" for m in after) == sum(m.role == "user" for m in before)


PAIRS = list(itertools.product(APIS, APIS))


@pytest.mark.parametrize(("source_api", "target_api"), PAIRS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_handoff_invariants_for_every_pair_of_protocols(source_api: str, target_api: str, data: st.DataObject) -> None:
    messages = data.draw(transcripts(source_api))
    target = TARGETS[target_api]
    normalize = id_normalizer_for(target)
    handoff: ThinkingHandoff = data.draw(st.sampled_from(["text", "drop"]))
    before = dumps(messages)
    report = TransformReport()
    after = transform_messages(messages, target, normalize, thinking_handoff=handoff, report=report)
    assert dumps(messages) == before, "input changed"
    check_invariants(messages, after, target, ID_RULES[target_api])
    again = transform_messages(after, target, normalize, thinking_handoff=handoff)
    assert dumps(again) == dumps(after), "not idempotent"
    assert report.error_turns_skipped == sum(
        m.role == "assistant" and m.stop_reason == "error" for m in messages
    )
    if handoff == "drop":
        assert report.thinking_as_text == 0
        foreign_texts = sum(
            isinstance(b, TextContent)
            for m in after if m.role == "assistant" and m.model != target.id for b in m.content
        )
        assert foreign_texts == sum(
            isinstance(b, TextContent)
            for m in messages
            if m.role == "assistant" and m.model != target.id and m.stop_reason not in ("error", "aborted")
            for b in m.content
        )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mistral_target_gets_nine_character_ids(data: st.DataObject) -> None:
    target = Model(id="mistral-large", api="openai-completions", provider="mistral")
    messages = data.draw(transcripts(data.draw(st.sampled_from(APIS))))
    after = transform_messages(messages, target, id_normalizer_for(target))
    check_invariants(messages, after, target, lambda i: MISTRAL_RULE.fullmatch(i) is not None)


def _session_messages(path: Path) -> list[Any]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "message" and entry["message"]["role"] in ("user", "assistant", "toolResult"):
            out.append(MESSAGE_ADAPTER.validate_python(entry["message"]))
    return out


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
@pytest.mark.parametrize("target_api", APIS)
def test_real_pi_sessions_transform_for_every_target(pi_sessions: Path, name: str, target_api: str) -> None:
    messages = _session_messages(pi_sessions / name)
    target = TARGETS[target_api]
    normalize = id_normalizer_for(target)
    before = dumps(messages)
    report = TransformReport()
    after = transform_messages(messages, target, normalize, report=report)
    assert dumps(messages) == before
    check_invariants(messages, after, target, ID_RULES[target_api])
    assert dumps(transform_messages(after, target, normalize)) == dumps(after)
    assert report.aborted_turns_skipped > 0
    if target_api != "anthropic-messages":
        assert report.thinking_as_text > 0  # the sessions are Claude's, with thinking


def test_real_session_to_its_own_model_keeps_thinking_and_signatures(pi_sessions: Path) -> None:
    messages = _session_messages(pi_sessions / "before-compaction.jsonl")
    claude = Model(id="claude-opus-4-5", api="anthropic-messages", provider="anthropic", input=["text", "image"])
    report = TransformReport()
    after = transform_messages(messages, claude, id_normalizer_for(claude), report=report)
    signed = sum(
        isinstance(b, ThinkingContent) and b.thinking_signature is not None
        for m in after if m.role == "assistant" for b in m.content
    )
    assert signed > 0
    assert report.signatures_dropped == 0
    assert report.thinking_as_text == 0
    originals = {id(m) for m in messages}
    shared = sum(id(m) in originals for m in after)
    assert shared == len(after) - report.synthetic_results  # nothing needed copying

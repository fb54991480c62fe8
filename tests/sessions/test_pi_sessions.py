"""Real pi sessions (pi v1 files): load, build context, resume and continue on a faux model,
re-save without losing an entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from baton.agent.messages import BashExecutionMessage, CompactionSummaryMessage
from baton.providers.faux import FauxProvider, FauxResponse, faux_model
from baton.providers.messages import AssistantMessage, ThinkingContent, ToolResultMessage, UserMessage
from baton.sessions import CodingSession, SessionOptions, SessionStore
from baton.sessions.entries import CompactionEntry

FILES = ("large-session.jsonl", "before-compaction.jsonl")
BIG = faux_model("big", provider="prov-a", api="faux-a", reasoning=True, context_window=1_000_000)
"""Large enough that resuming these sessions does not trigger compaction."""
_IDS = ("id", "parentId", "firstKeptEntryIndex", "firstKeptEntryId")


def _content(line: dict[str, Any]) -> dict[str, Any]:
    """An entry without its tree links (v1 has none; v3 has generated ones). Compared as data:
    a cost written ``0`` by pi comes back as ``0.0``, the same JSON number."""
    return {k: v for k, v in line.items() if k not in _IDS}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", FILES)
def test_load_and_build_context(pi_sessions: Path, name: str) -> None:
    path = pi_sessions / name
    store = SessionStore.load(path)
    original = _lines(path)
    assert store.report.original_version == 1 and store.warnings == []
    assert len(store.entries) == len(original) - 1
    assert [_content(e.to_dict()) for e in store.entries] == [_content(line) for line in original[1:]]
    ctx = store.build_context()
    assert ctx.model is not None and ctx.model[0] == "anthropic"
    if name == "before-compaction.jsonl":
        # the second compaction wins: summary first, then the entries from its first kept entry on
        compactions = [e for e in store.entries if isinstance(e, CompactionEntry)]
        assert len(compactions) == 2
        last = compactions[-1]
        assert isinstance(ctx.messages[0], CompactionSummaryMessage)
        assert ctx.messages[0].summary == last.summary
        kept_from = [line for line in original if line["type"] == "compaction"][-1]["firstKeptEntryIndex"]
        assert ctx.entry_ids[1] == store.entries[kept_from - 1].id
        assert any(isinstance(m, BashExecutionMessage) for m in ctx.messages)
        assert len(ctx.messages) == 1 + sum(
            1 for e in store.entries[kept_from - 1 :] if e.type == "message"
        )
    else:
        assert len(ctx.messages) == sum(1 for line in original if line["type"] == "message")


@pytest.mark.parametrize("name", FILES)
async def test_resume_continue_and_resave_loses_nothing(
    pi_sessions: Path, name: str, tmp_path: Path, baton_home: Path
) -> None:
    path = tmp_path / name
    shutil.copyfile(pi_sessions / name, path)
    path.chmod(0o644)
    original = _lines(path)
    before = SessionStore.load(path).build_context().messages

    with FauxProvider("faux-a", [FauxResponse.text("continuing where we left off")]) as provider:
        session = await CodingSession.open(
            SessionOptions(cwd=tmp_path, model=BIG, tools=[], session=str(path), context_files=False)
        )
        assert session.session_file == path
        assert len(session.messages) == len(before)
        await session.prompt("please continue")
        await session.close()

    # the request held the whole resumed context, converted for the new model
    request = provider.requests[0]
    assert isinstance(request.messages[-1], UserMessage)
    assert not any(isinstance(b, ThinkingContent) for m in request.messages if isinstance(m, AssistantMessage)
                   for b in m.content), "anthropic thinking is sent to another model as text"
    saved = _lines(path)
    assert saved[0]["version"] == 3 and saved[0]["id"] == original[0]["id"]
    # every original entry is still there, in order, with its content unchanged
    assert [_content(line) for line in saved[1 : len(original)]] == [_content(line) for line in original[1:]]
    ids = [line["id"] for line in saved[1:]]
    assert len(set(ids)) == len(ids)
    assert all(line["parentId"] == prev for line, prev in zip(saved[2:], ids, strict=False))
    added = saved[len(original) :]
    kinds = [(line["type"], line.get("message", {}).get("role")) for line in added]
    assert kinds == [("model_change", None), ("message", "user"), ("message", "assistant")]
    assert added[-1]["message"]["content"][0]["text"] == "continuing where we left off"

    reloaded = SessionStore.load(path)
    assert reloaded.warnings == [] and not reloaded.report.migrated
    ctx = reloaded.build_context()
    assert ctx.model == (BIG.provider, BIG.id)
    assert len(ctx.messages) == len(before) + 2


async def test_resume_of_a_crash_mid_tool_gets_interrupted_results(
    pi_sessions: Path, tmp_path: Path, baton_home: Path, model_a: Any
) -> None:
    # cut the large session right after an assistant message with tool calls
    lines = (pi_sessions / "large-session.jsonl").read_text().splitlines()
    cut = max(
        i for i, raw in enumerate(lines)
        if json.loads(raw).get("message", {}).get("stopReason") == "toolUse"
    )
    path = tmp_path / "crashed.jsonl"
    path.write_text("\n".join(lines[: cut + 1]) + "\n")
    calls = [b for b in json.loads(lines[cut])["message"]["content"] if b["type"] == "toolCall"]

    with FauxProvider("faux-a", [FauxResponse.text("ok")]) as provider:
        session = await CodingSession.open(
            SessionOptions(cwd=tmp_path, model=model_a, tools=[], session=str(path), context_files=False)
        )
        tail = session.messages[-len(calls) :]
        assert all(isinstance(m, ToolResultMessage) and m.is_error for m in tail)
        assert [m.tool_call_id for m in tail if isinstance(m, ToolResultMessage)] == [c["id"] for c in calls]
        assert "interrupted" in tail[0].content[0].text  # type: ignore[union-attr]
        await session.prompt("what happened?")
        await session.close()

    sent = [m for m in provider.requests[0].messages if isinstance(m, ToolResultMessage)][-len(calls) :]
    assert all("interrupted" in m.content[0].text for m in sent)  # type: ignore[union-attr]
    saved = _lines(path)
    results = [line for line in saved if line.get("message", {}).get("role") == "toolResult"]
    assert [r["message"]["toolCallId"] for r in results[-len(calls) :]] == [c["id"] for c in calls]

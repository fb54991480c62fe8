"""Context building along a branch, the tree view, and finding session files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from baton.agent.messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from baton.providers.messages import AssistantMessage, TextContent, UserMessage
from baton.sessions import SessionNotFoundError, SessionStore, find_session, list_sessions
from baton.sessions.tree import build_tree


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _reply(text: str, model: str = "m1") -> AssistantMessage:
    return AssistantMessage(api="x", provider="p", model=model, content=[TextContent(text=text)])


def _texts(messages: Sequence[object]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, CompactionSummaryMessage | BranchSummaryMessage):
            out.append(f"[{m.summary}]")
        elif isinstance(m, CustomMessage):
            out.append(f"custom:{m.content}")
        else:
            content = m.content  # type: ignore[attr-defined]
            out.append(content if isinstance(content, str) else content[0].text)
    return out


def test_compaction_keeps_entries_from_first_kept_and_everything_after() -> None:
    store = SessionStore.in_memory("/w")
    store.append_message(_user("u1"))
    store.append_message(_reply("a1"))
    kept = store.append_message(_user("u2"))
    store.append_message(_reply("a2"))
    store.append_compaction("SUMMARY", kept.id, 1234)
    store.append_custom_message("note", "injected", display=True)
    store.append_message(_user("u3"))
    store.append_custom("state", {"x": 1})  # never in the context
    ctx = store.build_context()
    assert _texts(ctx.messages) == ["[SUMMARY]", "u2", "a2", "custom:injected", "u3"]
    assert ctx.compaction is not None and ctx.entry_ids[1] == kept.id


def test_latest_model_and_thinking_change_on_the_path_win() -> None:
    store = SessionStore.in_memory("/w")
    store.append_model_change("p", "m1")
    store.append_thinking_level_change("high")
    root = store.append_message(_user("u1"))
    store.append_message(_reply("a1", model="m1"))
    store.append_model_change("q", "m2")
    store.append_thinking_level_change("low")
    assert store.build_context().model == ("q", "m2")
    assert store.build_context().thinking_level == "low"
    # another branch from the first message does not see those changes
    store.branch(root.id)
    store.append_message(_reply("other", model="m1"))
    ctx = store.build_context()
    assert ctx.model == ("p", "m1") and ctx.thinking_level == "high"


def test_branch_summary_is_part_of_the_context() -> None:
    store = SessionStore.in_memory("/w")
    first = store.append_message(_user("u1"))
    store.append_message(_reply("a1"))
    store.append_branch_summary(first.id, "what happened on the other branch")
    store.append_message(_user("u2"))
    assert _texts(store.build_context().messages) == ["u1", "[what happened on the other branch]", "u2"]


def test_tree_depth_grows_only_at_branch_points() -> None:
    store = SessionStore.in_memory("/w")
    a = store.append_message(_user("a"))
    b = store.append_message(_reply("b"))
    store.append_message(_user("c"))
    store.branch(b.id)
    d = store.append_message(_user("d"))
    store.append_label(a.id, "start here")
    nodes = build_tree(store.entries, store.leaf_id, store.labels)
    assert [(n.preview, n.depth) for n in nodes if n.kind != "label"] == [
        ("a", 0), ("b", 0), ("c", 1), ("d", 1)]
    assert next(n for n in nodes if n.id == a.id).label == "start here"
    assert {n.id for n in nodes if n.on_current_branch} >= {a.id, b.id, d.id}
    assert next(n for n in nodes if n.preview == "c").on_current_branch is False


def test_tree_describes_custom_entries_and_checkpoints() -> None:
    store = SessionStore.in_memory("/w")
    store.append_custom("my-extension", {"x": 1})
    empty = {"added": [], "modified": [], "deleted": []}
    c1, c2, c3 = "1" * 40, "2" * 40, "3" * 64  # full hex object ids (SHA-1 or SHA-256)
    store.append_custom("checkpoint", {"kind": "before", "commit": c1, "changes": empty})
    store.append_custom("checkpoint", {"kind": "before", "commit": c1, "changes": {**empty, "modified": ["a"]}})
    store.append_custom("checkpoint", {"kind": "after", "commit": c2,
                                       "changes": {"added": ["x", "y"], "modified": [], "deleted": []}})
    store.append_custom("checkpoint", {"kind": "after", "commit": c2, "changes": empty})
    store.append_custom("checkpoint", {"kind": "rewind", "commit": c3, "target": c1,
                                       "effect": {**empty, "deleted": ["x"]}})
    store.append_custom("checkpoint", {"kind": "after"})  # no commit: not a readable checkpoint
    store.append_custom("checkpoint", {"kind": "after", "commit": "--output=/tmp/x"})  # not an object id either
    nodes = build_tree(store.entries, store.leaf_id, store.labels)
    assert [(n.kind, n.preview) for n in nodes] == [
        ("custom", "my-extension"),
        ("custom", "checkpoint before the agent's edits"),
        ("custom", "checkpoint before the agent's edits (1 file changed by hand)"),
        ("custom", "checkpoint after the run (2 files changed)"),
        ("custom", "checkpoint after the run (no changes)"),
        ("custom", "checkpoint: code rewound (1 file changed)"),
        ("custom", "checkpoint"),
        ("custom", "checkpoint"),
    ]


def test_find_session_by_path_id_prefix_and_errors(tmp_path: Path, baton_home: Path) -> None:
    directory = tmp_path / "sessions"
    ids = []
    for text in ("one", "two"):
        store = SessionStore.create(directory, tmp_path)
        store.append_message(_user(text))
        store.close()
        ids.append(store.session_id)
        assert store.path is not None
        assert find_session(str(store.path), tmp_path, directory) == store.path
        assert find_session(store.session_id[:6], tmp_path, directory) == store.path
    with pytest.raises(SessionNotFoundError, match="No session matches"):
        find_session("zzzzzz", tmp_path, directory)
    with pytest.raises(SessionNotFoundError, match="does not exist"):
        find_session(str(tmp_path / "missing.jsonl"), tmp_path, directory)
    for session_id in ("abc111", "abc222"):
        (directory / f"x_{session_id}.jsonl").write_text(
            f'{{"type":"session","version":3,"id":"{session_id}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}}\n'
        )
    with pytest.raises(SessionNotFoundError, match="'abc' matches 2 sessions"):
        find_session("abc", tmp_path, directory)
    assert find_session("abc2", tmp_path, directory).name == "x_abc222.jsonl"
    (directory / "junk.jsonl").write_text("not a session\n")
    assert len(list_sessions(tmp_path, directory)) == 4


def test_a_session_file_with_values_of_the_wrong_type_is_listed_not_fatal(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    directory.mkdir()
    lines = [
        '{"type":"session","version":3,"id":"odd1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        '{"type":"message","id":"a","timestamp":[1],"message":{"role":"user","content":[{"type":"text","text":5}]}}',
        '{"type":"message","id":"b","timestamp":"2025-01-02T00:00:00.000Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"the real question"}]}}',
        '{"type":"session_info","id":"c","name":{"not":"a string"}}',
    ]
    (directory / "x_odd1.jsonl").write_text("\n".join(lines) + "\n")
    [info] = list_sessions(tmp_path, directory)
    assert (info.id, info.message_count, info.first_message, info.name) == ("odd1", 2, "the real question", None)

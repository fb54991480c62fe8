"""The JSONL store: durable appends, lazy file creation, locking, tolerant loading, migration."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.agent.messages import BashExecutionMessage
from baton.providers.messages import AssistantMessage, TextContent, UserMessage
from baton.sessions import SessionFileError, SessionLockedError, SessionStore
from baton.sessions.entries import CompactionEntry, MessageEntry, ModelChangeEntry, OpaqueEntry

ROOT = Path(__file__).resolve().parents[2]


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_file_appears_with_first_message_and_is_private(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path)
    assert store.path is not None
    store.append_model_change("p", "m")
    assert not store.path.exists(), "a session without messages leaves no file"
    entry = store.append_message(_user("hi"))
    assert store.path.exists()
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    lines = _lines(store.path)
    assert [line["type"] for line in lines] == ["session", "model_change", "message"]
    assert lines[0]["version"] == 3 and lines[0]["cwd"] == str(tmp_path)
    assert lines[2]["id"] == entry.id and lines[2]["parentId"] == lines[1]["id"]
    assert lines[1]["parentId"] is None
    store.close()


def test_append_then_reload_keeps_tree_and_leaf(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    first = store.append_message(_user("one"))
    second = store.append_message(_user("two"))
    store.branch(first.id)
    third = store.append_message(_user("three"))
    store.close()
    assert store.path is not None
    loaded = SessionStore.open(store.path)
    assert [e.id for e in loaded.entries] == [first.id, second.id, third.id]
    assert loaded.leaf_id == third.id
    assert [e.id for e in loaded.branch_path()] == [first.id, third.id]
    assert [e.id for e in loaded.children(first.id)] == [second.id, third.id]
    loaded.close()


def test_second_opener_gets_clear_error_in_process_and_in_another_process(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(_user("hi"))
    assert store.path is not None
    with pytest.raises(SessionLockedError, match="open in another baton process"):
        SessionStore.open(store.path)
    code = (
        "import sys\n"
        "from baton.sessions.store import SessionStore\n"
        "from baton.sessions.errors import SessionLockedError\n"
        "try:\n"
        "    SessionStore.open(sys.argv[1])\n"
        "except SessionLockedError as exc:\n"
        "    print('LOCKED', exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(store.path)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.stdout.startswith("LOCKED"), out.stderr
    assert str(store.path) in out.stdout
    store.close()
    SessionStore.open(store.path).close()  # free again once the first writer is gone


def test_torn_last_line_is_reported_skipped_and_cut_before_next_append(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    kept = store.append_message(_user("kept"))
    store.close()
    assert store.path is not None
    with store.path.open("ab") as handle:
        handle.write(b'{"type":"message","id":"torn","parentId":"x","message":{"role":"us')
    loaded = SessionStore.open(store.path)
    assert [e.id for e in loaded.entries] == [kept.id]
    assert any("torn" in w for w in loaded.warnings)
    added = loaded.append_message(_user("after"))
    loaded.close()
    text = store.path.read_text()
    assert '"torn"' not in text
    again = SessionStore.load(store.path)
    assert [e.id for e in again.entries] == [kept.id, added.id]
    assert again.warnings == []


def test_garbage_middle_line_and_unterminated_whole_last_line(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    a = store.append_message(_user("a"))
    store.close()
    assert store.path is not None
    b = {"type": "message", "id": "bbbb", "parentId": a.id, "timestamp": "2025-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "b", "timestamp": 1}}
    with store.path.open("ab") as handle:
        handle.write(b"\x00\xffnot json at all\n")
        handle.write(json.dumps(b).encode())  # complete, but no newline
    loaded = SessionStore.open(store.path)
    assert [e.id for e in loaded.entries] == [a.id, "bbbb"]
    assert any("line 3" in w for w in loaded.warnings)
    c = loaded.append_message(_user("c"))
    loaded.close()
    assert [e.id for e in SessionStore.load(store.path).entries] == [a.id, "bbbb", c.id]


@pytest.mark.parametrize(
    "content",
    [b"hello world\n", b'{"type":"message","id":"x"}\n', b"[1,2,3]\n", b'{"type":"session"}\n'],
)
def test_non_session_file_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(content)
    with pytest.raises(SessionFileError, match="not a baton/pi session file"):
        SessionStore.load(path)
    with pytest.raises(SessionFileError):
        SessionStore.open(path)
    assert path.read_bytes() == content, "a refused file is never touched"


def test_missing_or_empty_path_becomes_a_new_session_there(tmp_path: Path) -> None:
    target = tmp_path / "given.jsonl"
    target.write_bytes(b"")
    store = SessionStore.open(target, cwd=tmp_path)
    store.append_message(_user("x"))
    store.close()
    assert [line["type"] for line in _lines(target)] == ["session", "message"]


def test_unknown_entry_types_and_unreadable_entries_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    future = {"type": "future_thing", "id": "f1", "parentId": None, "timestamp": "t", "payload": {"a": [1, 2]}}
    odd = {"type": "message", "id": "m1", "parentId": "f1", "timestamp": "t",
           "message": {"role": "hologram", "beams": 3}}
    hook = {"type": "message", "id": "m2", "parentId": "m1", "timestamp": "t",
            "message": {"role": "hookMessage", "customType": "x", "content": "hello", "display": True,
                        "timestamp": 5}}
    header = {"type": "session", "version": 2, "id": "sess", "timestamp": "t", "cwd": "/w"}
    path.write_text("\n".join(json.dumps(x) for x in (header, future, odd, hook)) + "\n")
    store = SessionStore.open(path)
    assert store.report.migrated
    assert isinstance(store.entries[0], OpaqueEntry) and isinstance(store.entries[1], OpaqueEntry)
    assert isinstance(store.entries[2], MessageEntry) and store.entries[2].message.role == "custom"
    store.append_message(_user("new"))
    store.close()
    lines = _lines(path)
    assert lines[0]["version"] == 3
    assert lines[1] == future and lines[2] == odd
    assert lines[3]["message"]["role"] == "custom"
    assert lines[4]["parentId"] == "m2"


def test_pi_v1_migration_assigns_ids_and_first_kept_entry(tmp_path: Path) -> None:
    header = {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w",
              "provider": "anthropic", "modelId": "claude", "thinkingLevel": "low"}
    msgs = [{"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
             "message": {"role": "user", "content": f"m{i}", "timestamp": i}} for i in range(4)]
    compaction = {"type": "compaction", "timestamp": "2025-01-01T00:00:05.000Z", "summary": "S",
                  "firstKeptEntryIndex": 3, "tokensBefore": 10}
    path = tmp_path / "v1.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (header, *msgs, compaction)) + "\n")
    original = path.read_bytes()
    store = SessionStore.load(path)
    assert store.report.original_version == 1
    ids = [e.id for e in store.entries]
    assert len(set(ids)) == 5
    assert [e.parent_id for e in store.entries] == [None, *ids[:-1]]
    comp = store.entries[-1]
    assert isinstance(comp, CompactionEntry) and comp.first_kept_entry_id == ids[2]  # file line 3 = m2
    ctx = store.build_context()
    assert [getattr(m, "summary", None) or getattr(m, "content", None) for m in ctx.messages] == ["S", "m2", "m3"]
    assert ctx.model == ("anthropic", "claude") and ctx.thinking_level == "low"
    assert path.read_bytes() == original, "loading never writes"


def test_message_types_round_trip_exactly(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    bash = BashExecutionMessage(command="ls", output="a\n", exit_code=None, cancelled=True)
    reply = AssistantMessage(api="x", provider="p", model="m", content=[TextContent(text="ok", text_signature="s")])
    store.append_message(_user("hi"))
    store.append_message(bash)
    store.append_message(reply)
    store.append_custom_message("note", "visible", display=True, details={"k": 1})
    store.append_label(store.entries[0].id, "start")
    store.append_session_info("  My session ")
    store.close()
    assert store.path is not None
    loaded = SessionStore.load(store.path)
    assert [e.to_dict() for e in loaded.entries] == [e.to_dict() for e in store.entries]
    assert loaded.labels == {store.entries[0].id: "start"}
    assert loaded.name == "My session"
    bash_line = _lines(store.path)[2]["message"]
    assert bash_line["exitCode"] is None and bash_line["cancelled"] is True


def test_fork_writes_only_the_path_and_names_its_parent(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    a = store.append_message(_user("a"))
    store.append_label(a.id, "first")
    b = store.append_message(_user("b"))
    store.branch(a.id)
    store.append_message(_user("other branch"))
    forked = store.fork(b.id)
    assert forked.path is not None and forked.path.exists()
    lines = _lines(forked.path)
    assert lines[0]["parentSession"] == str(store.path)
    assert [line.get("type") for line in lines[1:]] == ["message", "message", "label"]
    assert [line["id"] for line in lines[1:3]] == [a.id, b.id]
    assert forked.labels == {a.id: "first"}
    forked.close()
    store.close()


def test_model_change_entries_are_kept_with_their_fields(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(_user("x"))
    change = store.append_model_change("openai", "gpt-5")
    store.close()
    assert store.path is not None
    line = _lines(store.path)[-1]
    assert line == {"type": "model_change", "id": change.id, "parentId": store.entries[0].id,
                    "timestamp": change.timestamp, "provider": "openai", "modelId": "gpt-5"}
    assert isinstance(SessionStore.load(store.path).entries[-1], ModelChangeEntry)


def test_in_memory_store_never_touches_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SessionStore.in_memory(tmp_path)
    store.append_message(_user("x"))
    assert store.path is None and not store.is_persisted
    assert os.listdir(tmp_path) == []

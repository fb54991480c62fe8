"""One damaged line never hides the history before it; the writer never fails on a string."""

from __future__ import annotations

import json
from pathlib import Path

from baton.providers.messages import TextContent, UserMessage
from baton.sessions import SessionStore


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _texts(store: SessionStore) -> list[str]:
    return [m.content[0].text for m in store.build_context().messages if isinstance(m, UserMessage)]


def _session(tmp_path: Path, texts: list[str]) -> Path:
    store = SessionStore.create(tmp_path, tmp_path)
    for text in texts:
        store.append_message(_user(text))
    store.close()
    assert store.path is not None
    return store.path


def test_invalid_utf8_line_is_kept_lossily_with_the_history_before_it(tmp_path: Path) -> None:
    path = _session(tmp_path, ["one", "two-MARK", "three"])
    raw = path.read_bytes().replace(b"two-MARK", b"two-\xff\xfe")
    path.write_bytes(raw)
    store = SessionStore.load(path)
    assert _texts(store) == ["one", "two-\ufffd\ufffd", "three"]
    assert any("not UTF-8" in w for w in store.warnings)


def test_entry_with_a_missing_parent_is_attached_to_the_one_before(tmp_path: Path) -> None:
    path = _session(tmp_path, ["one", "two", "three"])
    lines = path.read_text().splitlines()
    third = json.loads(lines[3])
    third["parentId"] = "gone1234"
    lines[3] = json.dumps(third)
    path.write_text("\n".join(lines) + "\n")
    store = SessionStore.load(path)
    assert _texts(store) == ["one", "two", "three"]
    assert any("missing parent gone1234" in w for w in store.warnings)


def test_a_skipped_line_does_not_orphan_what_follows(tmp_path: Path) -> None:
    path = _session(tmp_path, ["one", "two", "three"])
    lines = path.read_text().splitlines()
    lines[2] = "{not json"  # "two" is lost; "three" names it as parent
    path.write_text("\n".join(lines) + "\n")
    store = SessionStore.open(path)
    assert _texts(store) == ["one", "three"]
    store.append_message(_user("four"))
    store.close()
    assert _texts(SessionStore.load(path)) == ["one", "three", "four"]


def test_newer_format_version_is_warned_about(tmp_path: Path) -> None:
    path = _session(tmp_path, ["one"])
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["version"] = 9
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines) + "\n")
    store = SessionStore.load(path)
    assert _texts(store) == ["one"]
    assert any("newer version" in w and "9" in w for w in store.warnings)


def test_writer_never_fails_on_lone_or_split_surrogates(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path / "caf\udce9")
    store.append_message(_user("caf\udce9 and \ud83d\ude00 and \ud83d alone"))
    store.append_message(_user("after"))
    store.close()
    assert store.path is not None
    loaded = SessionStore.load(store.path)
    assert _texts(loaded) == ["caf\ufffd and \U0001f600 and \ufffd alone", "after"]
    assert loaded.cwd.endswith("caf\ufffd")

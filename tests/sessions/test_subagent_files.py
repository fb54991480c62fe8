"""Reading a subagent's child session file back for display (``sessions/subagent_files.py``): the
one shape baton writes is accepted, whatever else a session file names is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.providers.messages import UserMessage
from baton.sessions.store import SessionStore
from baton.sessions.subagent_files import ChildTranscriptError, child_place, read_child_transcript

ROOT = Path("/srv/sessions")
_SEGMENTS = st.sampled_from(["subagents", "..", ".", "", "p1", "c.jsonl", "sessions", "srv", "x.json", " "])


@given(st.lists(_SEGMENTS, max_size=8), st.booleans())
def test_an_accepted_place_is_always_a_child_file_under_the_root(segments: list[str], absolute: bool) -> None:
    path = ("/srv/sessions/" if absolute else "") + "/".join(segments)
    try:
        root, folder, name = child_place(path, [ROOT])
    except ChildTranscriptError:
        return
    assert root == ROOT and "/" not in folder + name and folder not in ("", ".", "..") and name.endswith(".jsonl")
    assert os.path.normpath(os.path.abspath(path)) == str(ROOT / "subagents" / folder / name)


def _child(folder: Path) -> tuple[Path, str]:
    folder.mkdir(parents=True, exist_ok=True)
    store = SessionStore.create(folder, folder)
    store.append_message(UserMessage(content="the task"))
    store.close()
    assert store.path is not None
    return store.path, store.session_id


def test_the_child_file_baton_wrote_is_read(tmp_path: Path) -> None:
    path, session_id = _child(tmp_path / "subagents" / "parent-id")
    child = read_child_transcript(str(path), session_id, [tmp_path / "elsewhere", tmp_path])
    assert [m.role for m in child.messages] == ["user"] and child.path == path


def test_a_symlinked_subagents_folder_is_refused(tmp_path: Path) -> None:
    path, session_id = _child(tmp_path / "real" / "subagents" / "parent-id")
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "subagents").symlink_to(tmp_path / "real" / "subagents")
    named = tmp_path / "sessions" / "subagents" / "parent-id" / path.name
    with pytest.raises(ChildTranscriptError, match="symlink"):
        read_child_transcript(str(named), session_id, [tmp_path / "sessions"])


def test_a_path_with_a_nul_or_nothing_is_refused(tmp_path: Path) -> None:
    for bad in ("", "/srv/sessions/subagents/p/\x00.jsonl"):
        with pytest.raises(ChildTranscriptError):
            read_child_transcript(bad, "id", [ROOT])

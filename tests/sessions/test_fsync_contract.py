"""The fsync contract (a SIGKILL test cannot see a missing fsync, so the calls are recorded).

Every acknowledged entry is on disk: the append descriptor is synced after the entry's bytes are
written; a new or rewritten file is synced under its temporary name before the rename and its
directory is synced after it; the tools' atomic writes follow the same order."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from baton.providers.messages import TextContent, UserMessage
from baton.sessions import SessionStore
from baton.tools.fs_atomic import atomic_write


@dataclass(frozen=True)
class Synced:
    """One fsync: what the descriptor pointed at and how big it was then."""

    path: str
    is_dir: bool
    size: int


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Synced]]:
    """Every ``os.fsync`` call (still performed) as a :class:`Synced` record."""
    calls: list[Synced] = []
    real: Callable[[int], None] = os.fsync

    def recording(fd: int) -> None:
        info = os.fstat(fd)
        calls.append(Synced(os.readlink(f"/proc/self/fd/{fd}"), os.path.isdir(f"/proc/self/fd/{fd}"), info.st_size))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    yield calls


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name descriptors")


def test_new_session_file_is_synced_before_rename_then_its_directory(tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path / "sessions", tmp_path)
    store.append_message(_user("first"))
    assert store.path is not None
    size = store.path.stat().st_size
    files = [s for s in synced if not s.is_dir]
    dirs = [s for s in synced if s.is_dir]
    assert len(files) == 1 and files[0].size == size
    assert files[0].path != str(store.path), "the data is synced under the temporary name, before the rename"
    assert dirs and dirs[-1].path == str(store.path.parent)
    assert synced.index(dirs[-1]) > synced.index(files[0])
    store.close()


def test_every_appended_entry_is_synced_whole(tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(_user("first"))
    assert store.path is not None
    for text in ("second", "third"):
        before = len(synced)
        store.append_message(_user(text))
        after = synced[before:]
        assert [s.path for s in after] == [str(store.path)]
        assert after[0].size == store.path.stat().st_size
    store.close()


def test_reopened_session_appends_are_synced(tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(_user("first"))
    store.close()
    assert store.path is not None
    reopened = SessionStore.open(store.path)
    synced.clear()
    reopened.append_message(_user("again"))
    assert [(s.path, s.size) for s in synced] == [(str(store.path), store.path.stat().st_size)]
    reopened.close()


def test_atomic_write_syncs_data_then_directory(tmp_path: Path, synced: list[Synced]) -> None:
    target = tmp_path / "f.txt"
    atomic_write(str(target), b"hello")
    assert [(s.is_dir, s.size) for s in synced][:1] == [(False, 5)]
    assert synced[0].path != str(target)
    assert synced[-1].is_dir and synced[-1].path == str(tmp_path)

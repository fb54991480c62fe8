"""The fsync contract (a SIGKILL test cannot see a missing fsync, so the calls are recorded).

Every acknowledged entry is in the file (written whole before the append returns); the append
descriptor is synced when a run ends, when the store closes, and with an append that comes
``SYNC_INTERVAL_SECONDS`` after the last sync; a new or rewritten file is synced under its
temporary name before the rename and its directory is synced after it; the tools' atomic writes
follow the same order (see :mod:`baton.sessions.store`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, FauxResponse
from baton.providers.messages import TextContent, UserMessage
from baton.sessions import CodingSession, SessionOptions, SessionStore
from baton.sessions.store import SYNC_INTERVAL_SECONDS
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


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_every_entry_is_in_the_file_when_append_returns_and_synced_by_the_interval(
        tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    clock = store.clock = FakeClock()
    store.append_message(_user("first"))
    assert store.path is not None
    for text in ("second", "third"):
        before = len(synced)
        store.append_message(_user(text))
        last = json.loads(store.path.read_text().splitlines()[-1])
        assert last["message"]["content"][0]["text"] == text, "written whole before append returns"
        assert synced[before:] == [], "not synced within the interval"
    clock.now += SYNC_INTERVAL_SECONDS
    store.append_message(_user("fourth"))
    assert [(s.path, s.size) for s in synced[-1:]] == [(str(store.path), store.path.stat().st_size)]
    store.close()


def test_sync_and_close_force_every_appended_entry_to_the_disk(tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.clock = FakeClock()
    store.append_message(_user("first"))
    store.append_message(_user("second"))
    assert store.path is not None
    before = len(synced)
    store.sync()
    assert [(s.path, s.size) for s in synced[before:]] == [(str(store.path), store.path.stat().st_size)]
    store.sync()
    assert len(synced) == before + 1, "nothing new, nothing to sync"
    store.append_message(_user("third"))
    store.close()
    assert [(s.path, s.size) for s in synced[before + 1:]] == [(str(store.path), store.path.stat().st_size)]


def test_reopened_session_appends_are_synced(tmp_path: Path, synced: list[Synced]) -> None:
    store = SessionStore.create(tmp_path, tmp_path)
    store.append_message(_user("first"))
    store.close()
    assert store.path is not None
    reopened = SessionStore.open(store.path)
    synced.clear()
    reopened.append_message(_user("again"))  # the first append after opening: synced at once
    assert [(s.path, s.size) for s in synced] == [(str(store.path), store.path.stat().st_size)]
    reopened.close()


async def test_the_end_of_a_run_forces_its_entries_to_the_disk(
        options: SessionOptions, faux_a: FauxProvider, synced: list[Synced]) -> None:
    faux_a.add(FauxResponse.tool_call("nothing_here", {}), "done")
    session = await CodingSession.open(options)
    session.store.clock = FakeClock()  # no append is ever an interval after the last sync
    await session.prompt("go")
    path = session.store.path
    assert path is not None
    assert len(session.messages) >= 4, "prompt, tool call, its result, the answer"
    mine = [s for s in synced if s.path == str(path)]
    assert mine and mine[-1].size == path.stat().st_size, "everything the run appended is synced"
    await session.close()


def test_atomic_write_syncs_data_then_directory(tmp_path: Path, synced: list[Synced]) -> None:
    target = tmp_path / "f.txt"
    atomic_write(str(target), b"hello")
    assert [(s.is_dir, s.size) for s in synced][:1] == [(False, 5)]
    assert synced[0].path != str(target)
    assert synced[-1].is_dir and synced[-1].path == str(tmp_path)

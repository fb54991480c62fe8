"""Fixtures for the sandbox tests: running a test in both kinds of sandbox, and a place for test
files outside ``/tmp``."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.sessions.permissions import gate


@pytest.fixture(params=["fresh bwrap", "long-lived sandbox"])
def sandbox_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bwrap (a session's first command) or the long-lived one (every later command)."""
    monkeypatch.setattr(gate, "FIRST_HOSTED_RUN", 2 if request.param == "fresh bwrap" else 1)
    return str(request.param)


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A private folder outside ``/tmp`` (the sandbox's ``/tmp`` is its own, so a test that needs a
    host path the sandbox can see puts it here); removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="baton-test-", dir="/var/tmp" if Path("/var/tmp").is_dir() else None))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)

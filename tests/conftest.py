"""Shared test fixtures: paths to ../shared fixtures (skipping cleanly where absent), a private home
for every test and the guard that fails the run if the real ``$BATON_HOME`` was touched
(tests/home_guard.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.home_guard import private_home, pytest_configure, pytest_sessionfinish, pytest_sessionstart
from tests.replay_server import PI_SESSIONS, PROVIDER_STREAMS, SHARED_DIR
from tests.tui.cli_harness import KEY_VARS


@pytest.fixture
def provider_streams() -> Path:
    """The recorded provider streams in ../shared (skips the test when ../shared is absent)."""
    if not PROVIDER_STREAMS.is_dir():
        pytest.skip(f"recorded provider streams not found at {PROVIDER_STREAMS} (../shared is absent)")
    return PROVIDER_STREAMS


@pytest.fixture
def pi_sessions() -> Path:
    """The real pi session files in ../shared (skips the test when ../shared is absent)."""
    if not PI_SESSIONS.is_dir():
        pytest.skip(f"pi session fixtures not found at {PI_SESSIONS} (../shared is absent)")
    return PI_SESSIONS


@pytest.fixture
def baton_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated $BATON_HOME for the test, with no provider API keys in the environment."""
    home = tmp_path / "baton-home"
    home.mkdir()
    monkeypatch.setenv("BATON_HOME", str(home))
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    return home


__all__ = ["SHARED_DIR", "private_home", "pytest_configure", "pytest_sessionfinish", "pytest_sessionstart"]

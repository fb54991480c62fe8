"""Fixtures for the interactive app tests: a project directory, faux models and providers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, faux_model
from baton.providers.models import Model


@pytest.fixture
def project(tmp_path: Path, baton_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory shown as ``~/project`` (HOME points at its parent)."""
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    return work


@pytest.fixture
def model_a() -> Model:
    """A faux reasoning model served under api ``faux-a``."""
    return faux_model("model-a", provider="prov-a", api="faux-a", reasoning=True, context_window=200_000)


@pytest.fixture
def model_b() -> Model:
    """A faux text-only model without reasoning, served under api ``faux-b``."""
    return faux_model("model-b", provider="prov-b", api="faux-b")


@pytest.fixture
def faux_a() -> Iterator[FauxProvider]:
    """The scripted provider behind ``model_a`` (add replies with ``.add``)."""
    with FauxProvider("faux-a", chunk_size=8) as provider:
        yield provider


@pytest.fixture
def faux_b() -> Iterator[FauxProvider]:
    """The scripted provider behind ``model_b``."""
    with FauxProvider("faux-b", chunk_size=8) as provider:
        yield provider


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty ``$BATON_HOME`` for a baton subprocess (see ``cli_harness.baton_env``)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """An empty working directory for a baton subprocess."""
    path = tmp_path / "work"
    path.mkdir()
    return path

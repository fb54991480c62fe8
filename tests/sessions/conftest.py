"""Fixtures for the sessions tests: an isolated $BATON_HOME, a working directory, faux models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.providers.faux import FauxProvider, faux_model
from baton.providers.models import Model
from baton.sessions import SessionOptions, Settings
from baton.sessions.settings import validate_settings


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    """A working directory for the session (no AGENTS.md above it in tmp)."""
    work = tmp_path / "project"
    work.mkdir()
    return work


@pytest.fixture
def model_a() -> Model:
    """A faux reasoning model with image input, served under api ``faux-a``."""
    return faux_model("model-a", provider="prov-a", api="faux-a", reasoning=True, input=("text", "image"))


@pytest.fixture
def model_b() -> Model:
    """A faux text-only model without reasoning, served under api ``faux-b``."""
    return faux_model("model-b", provider="prov-b", api="faux-b")


@pytest.fixture
def faux_a() -> Iterator[FauxProvider]:
    """A scripted provider for ``faux-a`` (add replies with ``.add``)."""
    with FauxProvider("faux-a") as provider:
        yield provider


@pytest.fixture
def faux_b() -> Iterator[FauxProvider]:
    """A scripted provider for ``faux-b``."""
    with FauxProvider("faux-b") as provider:
        yield provider


def quiet_settings(**overrides: object) -> Settings:
    """Settings with fast retries; overrides are settings.json keys."""
    data: dict[str, object] = {"retry": {"baseDelayMs": 1}}
    data.update(overrides)
    return validate_settings(data)


@pytest.fixture
def options(baton_home: Path, cwd: Path, model_a: Model, model_b: Model) -> SessionOptions:
    """Options for a persisted session on ``model_a`` with no tools and no context files."""
    return SessionOptions(
        cwd=cwd,
        model=model_a,
        tools=[],
        context_files=False,
        settings=quiet_settings(),
        extra_models=[model_a, model_b],
    )

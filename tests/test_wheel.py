"""The wheel installs one top-level package, ``baton`` (plus its dist-info), and nothing generic
like ``tools`` or ``agent`` that could overwrite another distribution's files."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

import baton
from tests.wheel import ROOT, build_wheel, wheel_top_levels


@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="the `build` package is not installed")
def test_wheel_ships_only_the_baton_package(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    assert wheel_top_levels(wheel) == {"baton", f"baton_code-{baton.__version__}.dist-info"}


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {"baton"} | {
        "baton." + ".".join(init.parent.relative_to(ROOT).parts)
        for layer in ("providers", "agent", "tools", "sessions", "tui")
        for init in (ROOT / layer).rglob("__init__.py") if "_baton" not in init.parts
    }
    assert set(config["packages"]) == found

"""The test suite's own hygiene: every test runs in a private home, and a run that touches the real
``$BATON_HOME`` fails (tests/home_guard.py). Driven as a real pytest run in a subprocess whose
"real" home is a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from baton.providers.paths import baton_home, sessions_dir

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = (
    "from tests.home_guard import (  # noqa: F401\n"
    "    private_home, pytest_configure, pytest_sessionfinish, pytest_sessionstart)\n"
)


def _run_suite(tmp_path: Path, test_source: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``pytest`` on one test file with the guard, under a home of its own; returns the result
    and the "real" baton home of that run."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_it.py").write_text(test_source)
    real_home = tmp_path / "developer"
    real_home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(real_home), "PYTHONPATH": str(ROOT)}
    env.pop("BATON_HOME")  # the developer's default: ~/.baton
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(suite)],
        cwd=suite, env=env, capture_output=True, text=True, timeout=120,
    )
    return result, real_home / ".baton"


def test_a_run_that_writes_into_the_real_home_fails_and_names_the_test(tmp_path: Path) -> None:
    real = tmp_path / "developer" / ".baton"
    source = (
        "from pathlib import Path\n\n"
        "def test_ignores_the_environment():\n"
        f"    folder = Path({str(real / 'sessions')!r})\n"
        "    folder.mkdir(parents=True)\n"
        "    (folder / 'leak.jsonl').write_text('{}')\n"
    )
    result, real_home = _run_suite(tmp_path, source)
    assert real_home == real
    output = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "1 passed" in output  # the test itself passed: the run fails because of the guard
    assert f"the tests touched the real baton home {real}" in output
    assert "created (it did not exist before the run)" in output and "added sessions/leak.jsonl" in output
    assert "first seen after: test_it.py::test_ignores_the_environment" in output


def test_a_run_that_changes_a_file_already_in_the_real_home_fails(tmp_path: Path) -> None:
    real = tmp_path / "developer" / ".baton"
    real.mkdir(parents=True)
    (real / "models.json").write_text("{}")
    source = (
        "from pathlib import Path\n\n"
        "def test_rewrites_models_json():\n"
        f"    Path({str(real / 'models.json')!r}).write_text('{{\"providers\": {{}}}}')\n"
    )
    result, _ = _run_suite(tmp_path, source)
    output = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "changed models.json" in output


def test_each_test_gets_a_private_home_and_a_clean_run_passes(tmp_path: Path) -> None:
    real = tmp_path / "developer"
    source = (
        "import os\nfrom pathlib import Path\n\nimport pytest\n\n"
        "from baton.providers.paths import baton_home, sessions_dir\n\n"
        "SEEN = []\n\n"
        "def _use_home():\n"
        f"    assert Path.home() != Path({str(real)!r}) and baton_home() == Path.home() / '.baton'\n"
        "    sessions_dir().mkdir(parents=True)\n"
        "    (sessions_dir() / 's.jsonl').write_text('{}')\n"
        "    (Path.home() / '.claude').mkdir()\n"
        "    SEEN.append(Path.home())\n\n"
        "def test_one():\n    _use_home()\n\n"
        "def test_two():\n    _use_home()\n    assert SEEN[0] != SEEN[1]\n\n"
        "@pytest.mark.user_home\n"
        "def test_keeps_the_users_home():\n"
        f"    assert Path.home() == Path({str(real)!r})\n"
        "    assert not baton_home().is_relative_to(Path.home())  # still private\n"
    )
    result, real_home = _run_suite(tmp_path, source)
    output = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.OK, output
    assert "3 passed" in output and "real $BATON_HOME touched" not in output
    assert not real_home.exists() and not (real / ".claude").exists()


def test_this_test_runs_in_a_private_home_too(private_home: Path) -> None:
    assert Path.home() == private_home
    assert baton_home() == private_home / ".baton" and sessions_dir() == private_home / ".baton" / "sessions"

"""Every test runs in a private home, and the run fails if the real one was touched.

``private_home`` (autouse, through tests/conftest.py) points ``HOME`` and ``$BATON_HOME`` at a new
temporary directory for each test, so whatever baton derives from them (``~/.baton``, the user's
``~/.claude`` and ``~/.agents`` skills and commands, ``$BATON_HOME/sessions``, checkpoints, tmp)
is the test's own; a subprocess started with ``os.environ`` inherits it. Tests that need a named
home still set their own (the ``baton_home`` fixture, ``monkeypatch.setenv("HOME", ...)``). A test
marked ``user_home`` keeps the user's ``HOME`` (its ``$BATON_HOME`` is still private): the sandbox
tests that check the real home folder stays read-only need one outside ``/tmp``, which the sandbox
replaces with a private one.

The guard records the real baton home (what ``baton_home()`` names when the run starts: the
developer's ``$BATON_HOME``, else ``~/.baton``) before the first test and compares it when the run
ends: created, or any file or folder in it added, removed or changed, and the run fails with
what changed and the tests after which it was first seen (a cheap look after every test).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.providers.paths import baton_home

Fingerprint = dict[str, tuple[int, int, int]]
"""Relative path → (file type, size, mtime in ns) of everything under a folder (``"."`` itself)."""

_REAL_HOME = pytest.StashKey[Path]()
_BEFORE = pytest.StashKey[Fingerprint]()
_SHALLOW = pytest.StashKey[Fingerprint]()
_SEEN_AFTER = pytest.StashKey[list[str]]()


def fingerprint(root: Path, *, deep: bool = True) -> Fingerprint:
    """What is under ``root`` without following links (empty when it does not exist); ``deep=False``
    looks at ``root`` and its direct entries only."""
    found: Fingerprint = {}
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return found
    found["."] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    if not stat.S_ISDIR(st.st_mode):
        return found
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:  # removed while we looked
                continue
            found[os.path.relpath(path, root)] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
        if not deep:
            break
    return found


def differences(before: Fingerprint, after: Fingerprint, *, limit: int = 10) -> list[str]:
    """``added x`` / ``removed x`` / ``changed x`` lines, at most ``limit`` of them and a count."""
    if not before and after:
        return ["created (it did not exist before the run)", *differences({".": after["."]}, after, limit=limit)]
    lines = [f"added {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``user_home`` marker."""
    config.addinivalue_line(
        "markers", "user_home: keep the user's HOME for this test ($BATON_HOME is private all the same)"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """Record the real baton home before any test runs."""
    real = baton_home().absolute()
    session.stash[_REAL_HOME] = real
    session.stash[_BEFORE] = fingerprint(real)
    session.stash[_SHALLOW] = fingerprint(real, deep=False)
    session.stash[_SEEN_AFTER] = []


@pytest.fixture(autouse=True)
def private_home(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A new empty ``HOME`` for the test, with ``$BATON_HOME`` = ``HOME/.baton`` (not created);
    under the ``user_home`` marker only ``$BATON_HOME`` is private."""
    home = tmp_path_factory.mktemp("home")
    if request.node.get_closest_marker("user_home") is None:
        monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BATON_HOME", str(home / ".baton"))
    yield home
    session = request.session
    if _REAL_HOME not in session.stash:
        return
    shallow = fingerprint(session.stash[_REAL_HOME], deep=False)
    if shallow != session.stash[_SHALLOW]:
        session.stash[_SHALLOW] = shallow
        session.stash[_SEEN_AFTER].append(request.node.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the real baton home was created or changed while it ran."""
    if _REAL_HOME not in session.stash:
        return
    real = session.stash[_REAL_HOME]
    changed = differences(session.stash[_BEFORE], fingerprint(real))
    if not changed:
        return
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"the tests touched the real baton home {real}:", *(f"  {line}" for line in changed)]
    seen = session.stash[_SEEN_AFTER]
    if seen:
        lines.append("first seen after: " + ", ".join(seen[:5]))
    if reporter is not None:
        reporter.write_sep("=", "real $BATON_HOME touched", red=True)
        for line in lines:
            reporter.write_line(line)

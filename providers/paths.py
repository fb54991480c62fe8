"""Where baton keeps its files: ``$BATON_HOME`` (default ``~/.baton``).

Paths are computed on every call (never cached), so tests and embedders can point
``BATON_HOME`` elsewhere at any time.
"""

from __future__ import annotations

import os
from pathlib import Path

BATON_HOME_ENV = "BATON_HOME"


def baton_home() -> Path:
    """The baton home directory: ``$BATON_HOME`` when set (``~`` expanded), else ``~/.baton``.

    The directory is not created here; writers create what they need."""
    value = os.environ.get(BATON_HOME_ENV, "").strip()
    if value:
        return Path(value).expanduser()
    return Path.home() / ".baton"


def models_json_path() -> Path:
    """``$BATON_HOME/models.json``: custom providers and models in pi's format."""
    return baton_home() / "models.json"


def sessions_dir() -> Path:
    """``$BATON_HOME/sessions``: one sub-directory of session files per working directory."""
    return baton_home() / "sessions"


def baton_home_display() -> str:
    """``$BATON_HOME`` as a person would type it (``~/...`` under the home directory), for messages."""
    home = baton_home()
    try:
        return "~/" + str(home.relative_to(Path.home())) if home != Path.home() else "~"
    except ValueError:
        return str(home)

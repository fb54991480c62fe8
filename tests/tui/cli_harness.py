"""Running the real ``baton`` command as a subprocess against local replay servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from baton.providers import catalog_build
from baton.providers.models_dev import PROVIDERS


def _key_variables() -> tuple[str, ...]:
    """Every variable a built-in provider's key may be read from: those the bundled catalog names
    (what baton reads) and those of the provider table it is rebuilt from."""
    bundled = json.loads(catalog_build.DEFAULT_OUT.read_text(encoding="utf-8"))["providers"]
    names = [var for entry in bundled.values() for var in entry.get("envVars") or ()]
    names += [var for spec in PROVIDERS for var in spec.env_vars]
    return tuple(dict.fromkeys(names))


KEY_VARS = _key_variables()
"""Provider key variables no test may inherit from the developer's environment."""


def baton_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: private BATON_HOME and HOME, no provider keys, no Ollama."""
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
    env.update({"BATON_HOME": str(home), "HOME": str(home), "OLLAMA_HOST": "127.0.0.1:9",
                "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"})
    env.update(extra)
    return env


def baton_command(*args: str) -> list[str]:
    """The command line that runs baton from this checkout with this interpreter."""
    return [sys.executable, "-m", "baton.tui.cli.main", *args]


def run_baton(
    home: Path, cwd: Path, *args: str, stdin: str | None = None, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run baton to completion and capture its output."""
    return subprocess.run(
        baton_command(*args), cwd=cwd, env=baton_env(home, **env), input=stdin if stdin is not None else "",
        capture_output=True, text=True, timeout=timeout,
    )


def stop_if_running(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and reap it if it is still running (a test's clean-up after a failure)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def write_models_json(home: Path, providers: dict[str, Any]) -> None:
    """Write ``$BATON_HOME/models.json``."""
    (home / "models.json").write_text(json.dumps({"providers": providers}), encoding="utf-8")


def session_files(home: Path) -> list[Path]:
    """Every session file under ``$BATON_HOME/sessions``."""
    return sorted((home / "sessions").rglob("*.jsonl"))


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a session file (split at LF only, as the format is: U+2028 and other
    line separators may stand inside a line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def session_messages(path: Path) -> list[dict[str, Any]]:
    """The messages stored in a session file, in order."""
    return [e["message"] for e in read_entries(path) if e.get("type") == "message"]

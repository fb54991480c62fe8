"""Resolving ``models.json`` config values (``apiKey`` and header values) as pi does.

``!command`` runs the command and uses its standard output (once per process; ``!!command`` on
every use), otherwise the value names an environment variable when one is set, otherwise it is
the literal value. Every command output is a secret from then on (:func:`redact.register_secret`).
A failing command is reported in :data:`command_errors`, never raised.
"""

from __future__ import annotations

import os

from baton.providers.redact import redact, register_secret

COMMAND_TIMEOUT = 10.0

_command_cache: dict[str, str | None] = {}
command_errors: list[str] = []
"""Failures of ``!command`` config values since the last :func:`clear_command_cache`."""


def resolve_config_value(value: str, where: str = "") -> str | None:
    """An ``apiKey`` / header value resolved as pi does (``!cmd``, env var name, or literal).
    ``where`` (``providers.openai.apiKey``) names the value in a failing command's message."""
    if value.startswith("!!"):
        return _run_command(value[2:], where)
    if value.startswith("!"):
        command = value[1:]
        if command not in _command_cache:
            _command_cache[command] = _run_command(command, where)
        return _command_cache[command]
    return os.environ.get(value) or value


def resolve_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """Header values resolved like API keys; headers that resolve to nothing are left out."""
    if not headers:
        return None
    resolved = {k: v for k, v in ((k, resolve_config_value(v)) for k, v in headers.items()) if v}
    return resolved or None


def clear_command_cache() -> None:
    """Forget cached ``!command`` results and their recorded failures (the outputs stay secrets)."""
    _command_cache.clear()
    command_errors.clear()


def _run_command(command: str, where: str = "") -> str | None:
    """The command's standard output; ``None`` (and a message in :data:`command_errors`) when
    it fails or runs over :data:`COMMAND_TIMEOUT`. It runs in a process group of its own, and
    on a timeout (or an interrupt) the whole group is killed, so nothing it started is left."""
    import signal
    import subprocess  # only when a models.json value is a !command

    label = f"models.json: {where + ': ' if where else ''}command {command!r}"
    try:
        proc = subprocess.Popen(
            command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        command_errors.append(redact(f"{label} failed: {exc}"))
        return None
    done = False
    try:
        stdout, stderr = proc.communicate(timeout=COMMAND_TIMEOUT)
        done = True
    except subprocess.TimeoutExpired:
        command_errors.append(redact(f"{label} timed out after {COMMAND_TIMEOUT:g} s"))
        return None
    finally:
        if not done:  # timed out or interrupted: the command and everything it started go
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
    if proc.returncode != 0:
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
        command_errors.append(redact(f"{label} exited with {proc.returncode}: {detail}"))
        return None
    value = stdout.strip() or None
    register_secret(value)  # a key from now on, wherever it shows up
    return value

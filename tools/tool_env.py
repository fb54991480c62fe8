"""The environment tool commands, hooks and MCP servers run in: this process's, without credentials.

A command the model runs must not read the user's API keys (a prompt injection in a file the
model reads could send them anywhere), and neither may a hook or an MCP server, which need their
configuration, not the user's keys. Dropped: every variable that holds a credential
(:func:`providers.redact.is_secret_name`: ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_SECRET_KEY``, ``*PASSWORD*``, the built-in providers' key variables and those ``models.json``
names), unless the ``bash.passEnv`` setting lists it. A hook or server gets this environment plus
exactly what its own configuration names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from baton.providers.redact import is_secret_name

_pass_env: frozenset[str] = frozenset()


def set_pass_env(names: Iterable[str]) -> None:
    """The variables to keep even though they look like credentials (``bash.passEnv``)."""
    global _pass_env
    _pass_env = frozenset(names)


def pass_env() -> frozenset[str]:
    """The names :func:`set_pass_env` set."""
    return _pass_env


def is_secret_variable(name: str, key_variables: Iterable[str] = ()) -> bool:
    """Whether ``name`` looks like a credential (see :func:`providers.redact.is_secret_name`)."""
    return is_secret_name(name, key_variables)


def tool_environment(base: Mapping[str, str] | None = None, keep: Iterable[str] | None = None) -> dict[str, str]:
    """``base`` (default: ``os.environ``) without credentials, except the ``keep`` names
    (default: the ``bash.passEnv`` setting)."""
    source = os.environ if base is None else base
    kept = _pass_env if keep is None else frozenset(keep)
    try:
        from baton.providers.redact import key_variables

        named = frozenset(key_variables())  # one set for every variable (it was rebuilt per name)
    except Exception:  # a broken catalog must not stop a command from running
        named = frozenset()
    return {k: v for k, v in source.items() if k in kept or not is_secret_name(k, named)}

"""The environment tool commands, hooks and MCP servers run in: this process's, without credentials.

A command the model runs must not read the user's API keys (a prompt injection in a file the
model reads could send them anywhere), and neither may a hook or an MCP server, which need their
configuration, not the user's keys. Dropped: every variable that holds a credential
(:func:`providers.redact.is_secret_name`: ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``,
``*_SECRET_KEY``, ``*PASSWORD*``, the built-in providers' key variables and those ``models.json``
names), unless the session's ``bash.passEnv`` setting lists it (:class:`ToolEnvironment`). A
hook or server gets this environment plus exactly what its own configuration names.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from baton.providers.redact import is_secret_name


class ToolEnvironment:
    """The environment one session's commands, hooks and MCP servers start in: this process's
    without credentials, except the names ``pass_env`` lists (``bash.passEnv``).

    Each session has its own (a process hosting several sessions, as ACP does, keeps each
    session's list); a trusted project's settings may change ``pass_env`` while it runs."""

    def __init__(self, pass_env: Iterable[str] = ()) -> None:
        self.pass_env = frozenset(pass_env)

    def build(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: ``os.environ``) without credentials, except :attr:`pass_env`."""
        return tool_environment(base, keep=self.pass_env)


def is_secret_variable(name: str, key_variables: Iterable[str] = ()) -> bool:
    """Whether ``name`` looks like a credential (see :func:`providers.redact.is_secret_name`)."""
    return is_secret_name(name, key_variables)


def tool_environment(base: Mapping[str, str] | None = None, keep: Iterable[str] = ()) -> dict[str, str]:
    """``base`` (default: ``os.environ``) without credentials, except the ``keep`` names."""
    source = os.environ if base is None else base
    kept = frozenset(keep)
    try:
        from baton.providers.redact import key_variables

        named = frozenset(key_variables())  # one set for every variable (it was rebuilt per name)
    except Exception:  # a broken catalog must not stop a command from running
        named = frozenset()
    return {k: v for k, v in source.items() if k in kept or not is_secret_name(k, named)}

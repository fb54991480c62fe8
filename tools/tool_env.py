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
    secret = _secret_names(named)
    out: dict[str, str] = {}
    for name, value in source.items():
        drop = secret.get(name)
        if drop is None:
            drop = secret[name] = is_secret_name(name, named)
        if not drop or name in kept:
            out[name] = value
    return out


_secret_memo: tuple[frozenset[str], dict[str, bool]] | None = None
_MEMO_LIMIT = 4096


def _secret_names(named: frozenset[str]) -> dict[str, bool]:
    """Whether each variable name seen so far is a credential's, for the key variables ``named``
    (a pure function of the two, worked out once per name; forgotten when ``named`` changes)."""
    global _secret_memo
    if _secret_memo is None or _secret_memo[0] != named or len(_secret_memo[1]) > _MEMO_LIMIT:
        _secret_memo = (named, {})
    return _secret_memo[1]

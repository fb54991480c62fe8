"""Keeping keys out of everything baton shows, stores or sends back to a model.

The second wall behind the sandbox: whatever a command, an MCP server, a hook or a provider
prints, every *configured key value* is replaced by ``[redacted]`` before the text reaches the
model, the screen, JSON output, a log or the session file — in every form
:mod:`providers.secret_forms` knows (URL-encoded, hex, base64 in any alignment and either
alphabet, any letter case, broken over lines).

Configured key values are:

- the values of the environment variables that hold credentials (:func:`is_secret_name`: the
  built-in providers' key variables, the variables ``models.json`` names, and every
  ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_SECRET_KEY``, ``*PASSWORD*`` variable);
- the keys ``models.json`` configures: literal ``apiKey`` values and credential header values
  (read from the file, :mod:`providers.models_json`; a ``!command``'s output is registered
  when it runs);
- every key baton was handed at run time (``--api-key``, ``--api-key-file``, the key of each
  provider request): :func:`register_secret`.

A value with an authorization scheme (``Bearer ...``) counts without it too. Values shorter than
:data:`MIN_SECRET_LENGTH` characters are left alone.

Provider errors (:func:`redact_secrets`) also lose anything shaped like a key (``sk-...``,
Google's ``AIza...``, ``Bearer ...``): a provider may echo a key baton does not know.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from baton.providers.catalog_data import builtin_key_variables
from baton.providers.models_json import ModelsJson, read_models_json
from baton.providers.secret_forms import SecretMatcher

_T = TypeVar("_T")

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not searched for. Every real provider key is far longer (OpenAI 51+,
Anthropic 108, Google 39, GitHub 40 characters) and 8 is the usual minimum for a password
(NIST SP 800-63B); below it a value such as ``true``, ``dev`` or ``test`` would turn ordinary words
of every output into ``[redacted]``, and a value that short is guessed, not stolen."""

MIN_KEY_LENGTH = MIN_SECRET_LENGTH  # the name this constant had before

_KEY_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{8,}"  # OpenAI, Anthropic (sk-ant-...), OpenRouter (sk-or-...), DeepSeek
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|\b(?:gsk|xai|csk)[-_][A-Za-z0-9_\-]{16,}"  # Groq, xAI, Cerebras
    r"|(?<=Bearer )[A-Za-z0-9._~+/\-]{12,}=*",
)

_AUTH_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token)\s+", re.IGNORECASE)
"""A credential header's scheme: the token after it is a secret of its own."""

# ---------------------------------------------------------------------------------------------
# Which variables hold credentials

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_SECRET_ACCESS_KEY")
_BARE_SECRETS = frozenset({"API_KEY", "TOKEN", "SECRET", "SECRET_KEY"})


def is_secret_name(name: str, key_variables: Iterable[str] = ()) -> bool:
    """Whether the variable ``name`` holds a credential: ``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``,
    ``*_SECRET_KEY``, anything with ``PASSWORD`` in it, or one of ``key_variables``."""
    upper = name.upper()
    if upper.endswith(_SECRET_SUFFIXES) or upper in _BARE_SECRETS or "PASSWORD" in upper:
        return True
    names = key_variables if isinstance(key_variables, set | frozenset) else set(key_variables)
    return name in names


# ---------------------------------------------------------------------------------------------
# Which values are secret

_registered: set[str] = set()
_registrations = 0
"""Bumped on every value :func:`register_secret` adds: part of what :data:`_known` is keyed on."""
_lock = threading.Lock()
_matchers: dict[frozenset[str], SecretMatcher] = {}
_MAX_MATCHERS = 8


@dataclass(frozen=True)
class _Known:
    """:func:`configured_secrets` as last worked out, with everything it was worked out from."""

    models: ModelsJson
    """The :func:`read_models_json` object it read (a new one whenever the file may have changed)."""
    environ: dict[Any, Any]
    """A copy of the environment, names and values, as it was before the secrets were read."""
    registrations: int
    secrets: frozenset[str]


_known: _Known | None = None
_key_variables: tuple[ModelsJson, frozenset[str]] | None = None


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a key from now on, in this process (``--api-key``, a ``!command``'s
    output, the key a request was sent with)."""
    global _registrations
    if value and len(value.strip()) >= MIN_SECRET_LENGTH and value.strip() not in _registered:
        with _lock:
            _registered.add(value.strip())
            _registrations += 1


def key_variables() -> frozenset[str]:
    """Names of the environment variables that hold provider keys: every built-in provider's key
    variables and those models.json names (as an ``apiKey`` or a header value)."""
    return _key_variables_of(read_models_json())


def _key_variables_of(models: ModelsJson) -> frozenset[str]:
    """:func:`key_variables` for the models.json read ``models`` (kept while it is the latest)."""
    global _key_variables
    cached = _key_variables
    if cached is None or cached[0] is not models:
        cached = _key_variables = (models, builtin_key_variables() | models.named_variables())
    return cached[1]


def configured_secrets() -> frozenset[str]:
    """Every key value baton knows of now (see the module docstring).

    Asked on every tool result, so the answer is kept while nothing it is made of changed: the
    models.json read (:func:`read_models_json` hands back a new object whenever the file may
    have changed), the whole environment (compared name by name and value by value) and the
    registered values."""
    global _known
    try:
        models: ModelsJson | None = read_models_json()
    except Exception:  # redaction must never fail the path it protects
        models = None
    environ = _environ()
    registrations = _registrations
    known = _known
    if known is not None and known.models is models and known.registrations == registrations \
            and known.environ == environ:
        return known.secrets
    snapshot = dict(environ)  # taken before reading: a change made meanwhile is seen next time
    secrets = _configured_secrets(models)
    if models is not None:
        _known = _Known(models, snapshot, registrations, secrets)
    return secrets


def _configured_secrets(models: ModelsJson | None) -> frozenset[str]:
    values = set(_registered)
    variables: frozenset[str] = frozenset()
    try:
        variables = builtin_key_variables()
        if models is not None:
            variables = _key_variables_of(models)
            values.update(v.strip() for v in models.literal_secrets())
    except Exception:  # redaction must never fail the path it protects
        pass
    for name in [name for name in os.environ if is_secret_name(name, variables)]:
        value = os.environ.get(name, "").strip()
        if value:
            values.add(value)
    values.update([token for token in (_AUTH_SCHEME.sub("", value) for value in values) if token])
    return frozenset(v for v in values if len(v) >= MIN_SECRET_LENGTH)


def _environ() -> Mapping[Any, Any]:
    """The environment as a mapping cheap to compare: ``os.environ``'s own store (encoded names
    and values) where it has one."""
    data = getattr(os.environ, "_data", None)
    return data if isinstance(data, dict) else dict(os.environ)


def secret_matcher(extra: Iterable[str | None] = ()) -> SecretMatcher:
    """The matcher for :func:`configured_secrets` (plus ``extra`` values), built once per set."""
    values = configured_secrets()
    more = [v.strip() for v in extra if v and len(v.strip()) >= MIN_SECRET_LENGTH]
    if more:
        values = values.union(more)
    matcher = _matchers.get(values)
    if matcher is None:
        matcher = SecretMatcher(values, REDACTED)
        with _lock:
            if len(_matchers) >= _MAX_MATCHERS:
                _matchers.clear()
            _matchers[values] = matcher
    return matcher


# ---------------------------------------------------------------------------------------------
# Redacting


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every form of every configured key value (and of ``extra``) replaced."""
    if not text:
        return text
    try:
        return secret_matcher(extra).redact(text)
    except Exception:  # a bug here must not take a tool result or an error message down
        return _KEY_SHAPES.sub(REDACTED, text)


def redact_partial(text: str) -> str:
    """:func:`redact` for output still streaming in: a tail that may be the start of a key is
    held back (the next update, or the final result, shows it redacted or as it was)."""
    if not text:
        return text
    try:
        return secret_matcher().redact_partial(text)
    except Exception:
        return _KEY_SHAPES.sub(REDACTED, text)


@overload
def redact_json(value: str, matcher: SecretMatcher | None = None) -> str: ...
@overload
def redact_json(value: _T, matcher: SecretMatcher | None = None) -> _T: ...
def redact_json(value: object, matcher: SecretMatcher | None = None) -> object:
    """``value`` (JSON-like: dicts, lists, strings) with keys redacted from every string; the
    containers are changed in place and ``value`` is returned (a string: a new one)."""
    try:
        matcher = matcher if matcher is not None else secret_matcher()
    except Exception:
        return value
    if not matcher:
        return value
    if isinstance(value, str):
        return matcher.redact(value)
    stack: list[object] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            renamed = {}
            for key, item in node.items():
                if isinstance(item, str):
                    clean = matcher.redact(item)
                    if clean is not item:
                        node[key] = clean
                elif isinstance(item, dict | list):
                    stack.append(item)
                if isinstance(key, str):
                    clean_key = matcher.redact(key)
                    if clean_key is not key:
                        renamed[key] = clean_key
            for old, new in renamed.items():
                node[new] = node.pop(old)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    clean = matcher.redact(item)
                    if clean is not item:
                        node[index] = clean
                elif isinstance(item, dict | list):
                    stack.append(item)
    return value


def redact_secrets(text: str, keys: Iterable[str | None] = ()) -> str:
    """A provider error's ``text`` with ``keys``, every configured key (in every form) and
    key-shaped tokens replaced."""
    if not text:
        return text
    return _KEY_SHAPES.sub(REDACTED, redact(text, keys))

"""Reading ``$BATON_HOME/models.json`` (pi's format) into validated provider entries.

The file is user input: every problem becomes one clear message naming the file and the field
(``.../models.json: providers.ollama.models[0].contextWindow: must be a positive integer``) and
only the faulty entry is skipped; nothing here raises.

Reading runs nothing: an ``apiKey`` or header value stays as written (``!command``, a variable's
name or a literal) until :mod:`providers.config_values` resolves it. :func:`read_models_json`
keeps the file as last read until it changes, so the catalog, the key lookup and redaction (which
asks on every tool result) share one read.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular_text
from baton.providers.catalog_overlay import DATE
from baton.providers.json_depth import load_config_json
from baton.providers.json_types import JsonObject, JsonValue
from baton.providers.paths import BATON_HOME_ENV, models_json_path
from baton.providers.wire_protocols import known_apis

SUPPORTED_APIS: tuple[str, ...] = known_apis()

_MODEL_FIELDS = ("name", "api", "reasoning", "input", "cost", "contextWindow", "maxTokens", "headers", "compat",
                 "releaseDate", "knowledge")
_COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite")
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UPPER_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_SECRET_HEADER = re.compile(r"auth|key|token|secret|password|cookie", re.IGNORECASE)


@dataclass
class ProviderConfig:
    """One validated ``providers.<name>`` entry."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] | None = None
    auth_header: bool = False
    compat: JsonObject | None = None
    models: list[JsonObject] = field(default_factory=list)
    """Model definitions in pi's camelCase shape (only the fields that were given)."""
    model_overrides: dict[str, JsonObject] = field(default_factory=dict)

    def header_maps(self) -> Iterator[dict[str, str]]:
        """Every header object of the entry: the provider's, its models' and their overrides'."""
        if self.headers:
            yield self.headers
        for definition in (*self.models, *self.model_overrides.values()):
            headers = definition.get("headers")
            if isinstance(headers, dict):
                yield {k: v for k, v in headers.items() if isinstance(v, str)}


@dataclass(eq=False)
class ModelsJson:
    """The file as read once: its valid provider entries and one message per problem."""

    configs: dict[str, ProviderConfig]
    errors: list[str]
    _variables: frozenset[str] | None = field(default=None, init=False, repr=False)

    def api_key(self, provider: str) -> str | None:
        """``provider``'s raw ``apiKey`` value (``!command``, a variable's name or a literal)."""
        config = self.configs.get(provider)
        return config.api_key if config is not None else None

    def named_variables(self) -> frozenset[str]:
        """The environment variables the file names as an ``apiKey`` or a header value."""
        if self._variables is None:
            values = [value for config in self.configs.values() for value in _config_values(config)]
            self._variables = frozenset(v for v in values if _VARIABLE_NAME.fullmatch(v))
        return self._variables

    def literal_secrets(self) -> list[str]:
        """``apiKey`` values and credential header values used as they are: neither a
        ``!command`` nor a set variable's name (an unset variable's name is no secret either)."""
        out: list[str] = []
        for config in self.configs.values():
            if config.api_key:
                out.append(config.api_key)
            for headers in config.header_maps():
                out += [value for name, value in headers.items() if _SECRET_HEADER.search(name)]
        return [raw for raw in out
                if not raw.startswith("!") and raw not in os.environ and not _UPPER_NAME.fullmatch(raw)]


def _config_values(config: ProviderConfig) -> list[str]:
    values = [config.api_key] if config.api_key else []
    for headers in config.header_maps():
        values += headers.values()
    return values


FileState = tuple[str, int, int, int, int, int]
"""What tells that a file may have changed: its path, device and inode numbers (a file renamed
over it), size, modification and status-change times in nanoseconds (any write or ``utime``
moves the latter; ``-1`` throughout for a missing or unreadable file)."""

SETTLE_NS = 1_000_000_000
"""A file changed less than this long before it was read may change again with the same
:data:`FileState` (timestamps advance in clock ticks of up to 10 ms, coarser on some file
systems): until it is that old its content is compared again on every read."""


@dataclass(frozen=True)
class _Read:
    state: FileState
    read_at: int
    """``time.time_ns()`` taken before ``state``: a write after it has a later status-change time."""
    text: str | None
    models: ModelsJson


_cache: _Read | None = None
_home: tuple[tuple[str | None, str | None], Path] | None = None


def read_models_json(path: Path | None = None) -> ModelsJson:
    """``$BATON_HOME/models.json`` (or ``path``), read again only when the file changed.

    The same object comes back for as long as the file is unchanged (callers key their own
    caches on it), at the cost of one ``stat``; a file changed less than :data:`SETTLE_NS` ago is
    read again and compared."""
    global _cache
    path = _models_json_path() if path is None else path
    read_at = time.time_ns()
    state = file_state(path)
    cached = _cache
    if cached is not None and cached.state == state and state[5] < cached.read_at - SETTLE_NS:
        return cached.models
    text, problems = _read_text(path)
    if cached is not None and cached.state == state and text is not None and text == cached.text:
        _cache = _Read(state, read_at, text, cached.models)
        return cached.models
    configs, errors = ({}, problems) if text is None else _parse(path, text)
    _cache = _Read(state, read_at, text, ModelsJson(configs, errors))
    return _cache.models


def _models_json_path() -> Path:
    """:func:`providers.paths.models_json_path`, built again only when what it depends on
    (``$BATON_HOME``, ``$HOME``) changed: redaction asks on every tool result."""
    global _home
    inputs = (os.environ.get(BATON_HOME_ENV), os.environ.get("HOME"))
    cached = _home
    if cached is None or cached[0] != inputs:
        cached = _home = (inputs, models_json_path())
    return cached[1]


def forget_models_json() -> None:
    """Read the file again on the next :func:`read_models_json`, changed or not."""
    global _cache, _home
    _cache = None
    _home = None


def file_state(path: Path) -> FileState:
    """The :data:`FileState` of ``path`` now."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return (str(path), -1, -1, -1, -1, -1)
    return (str(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


# ---------------------------------------------------------------------------------------------
# The file


class _Problems:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.messages.append(f"{self.path}: {where}: {problem}")


def load_models_json(path: Path) -> tuple[dict[str, ProviderConfig], list[str]]:
    """The valid provider entries of ``path`` and one message per problem found.

    A missing file is not a problem (no entries, no messages)."""
    text, problems = _read_text(path)
    return ({}, problems) if text is None else _parse(path, text)


def _read_text(path: Path) -> tuple[str | None, list[str]]:
    """The file's text, or ``None`` and the problem (none for a missing file)."""
    try:
        return read_regular_text(path, MAX_CONFIG_BYTES), []
    except FileNotFoundError:
        return None, []
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"{path}: cannot read: {exc}"]


def _parse(path: Path, text: str) -> tuple[dict[str, ProviderConfig], list[str]]:
    problems = _Problems(path)
    if not text.strip():
        return {}, []
    try:
        document = load_config_json(text)
    except json.JSONDecodeError as exc:
        return {}, [f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"]
    except ValueError as exc:
        return {}, [f"{path}: {exc}"]
    if not isinstance(document, dict):
        return {}, [f"{path}: the top level must be an object with a \"providers\" object"]
    providers = document.get("providers")
    if not isinstance(providers, dict):
        return {}, [f"{path}: \"providers\" must be an object mapping provider names to their settings"]
    configs: dict[str, ProviderConfig] = {}
    for name, entry in providers.items():
        config = _provider(name, entry, problems)
        if config is not None:
            configs[name] = config
    return configs, problems.messages


def _provider(name: str, entry: JsonValue, problems: _Problems) -> ProviderConfig | None:
    where = f"providers.{name}"
    if not name.strip() or "/" in name:
        problems.add(where, "a provider name must be non-empty and contain no '/'")
        return None
    if not isinstance(entry, dict):
        problems.add(where, "must be an object")
        return None
    config = _provider_settings(name, entry, where, problems)
    if config is not None:
        config.models = _models(entry.get("models"), where, problems)
        config.model_overrides = _overrides(entry.get("modelOverrides"), where, problems)
    return config


def _provider_settings(name: str, entry: JsonObject, where: str, problems: _Problems) -> ProviderConfig | None:
    """The provider-wide fields; ``None`` (with the problem recorded) when one is invalid."""
    strings = {key: entry.get(key) for key in ("baseUrl", "apiKey", "api")}
    invalid = [key for key, value in strings.items() if value is not None and not _non_empty_string(value)]
    for key in invalid:
        problems.add(f"{where}.{key}", "must be a non-empty string")
    base_url, api_key, api = (value if isinstance(value, str) else None for value in strings.values())
    if invalid:
        return None
    if api is not None and api not in SUPPORTED_APIS:
        problems.add(f"{where}.api", _unsupported_api(api))
        return None
    headers = entry.get("headers")
    if headers is not None and not _is_str_map(headers):
        problems.add(f"{where}.headers", "must be an object of string values")
        return None
    auth_header = entry.get("authHeader")
    if auth_header is not None and not isinstance(auth_header, bool):
        problems.add(f"{where}.authHeader", "must be true or false")
        return None
    compat = entry.get("compat")
    if compat is not None and not isinstance(compat, dict):
        problems.add(f"{where}.compat", "must be an object")
        return None
    return ProviderConfig(
        name=name, base_url=base_url, api=api, api_key=api_key,
        headers=_str_map(headers), auth_header=bool(auth_header), compat=compat,
    )


def _models(models: JsonValue, where: str, problems: _Problems) -> list[JsonObject]:
    if models is None:
        return []
    if not isinstance(models, list):
        problems.add(f"{where}.models", "must be a list of model objects")
        return []
    parsed = (_model(model, f"{where}.models[{i}]", problems, require_id=True) for i, model in enumerate(models))
    return [model for model in parsed if model is not None]


def _overrides(overrides: JsonValue, where: str, problems: _Problems) -> dict[str, JsonObject]:
    if overrides is None:
        return {}
    if not isinstance(overrides, dict):
        problems.add(f"{where}.modelOverrides", "must be an object mapping model ids to overrides")
        return {}
    out: dict[str, JsonObject] = {}
    for model_id, override in overrides.items():
        parsed = _model(override, f"{where}.modelOverrides.{model_id}", problems, require_id=False)
        if parsed is not None:
            parsed.pop("api", None)
            out[model_id] = parsed
    return out


def _unsupported_api(api: str) -> str:
    return f"api {api!r} is not supported by baton (supported: {', '.join(SUPPORTED_APIS)})"


def _is_str_map(value: JsonValue) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _str_map(value: JsonValue) -> dict[str, str] | None:
    """``value`` (checked with :func:`_is_str_map`) with its type said."""
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else None


def _is_date(value: JsonValue) -> bool:
    return isinstance(value, str) and DATE.fullmatch(value) is not None


def _positive_int(value: JsonValue) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and value > 0


def _non_empty_string(value: JsonValue) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _input_kinds(value: JsonValue) -> bool:
    return isinstance(value, list) and bool(value) and all(x in ("text", "image") for x in value)


_MODEL_CHECKS: dict[str, tuple[Callable[[JsonValue], bool], str]] = {
    "name": (_non_empty_string, "must be a non-empty string"),
    "api": (lambda v: isinstance(v, str) and v in SUPPORTED_APIS, "must be a string"),
    "reasoning": (lambda v: isinstance(v, bool), "must be true or false"),
    "input": (_input_kinds, 'must be a non-empty list of "text" and/or "image"'),
    "contextWindow": (_positive_int, "must be a positive integer"),
    "maxTokens": (_positive_int, "must be a positive integer"),
    "headers": (_is_str_map, "must be an object of string values"),
    "compat": (lambda v: isinstance(v, dict), "must be an object"),
    "releaseDate": (_is_date, "must be a date: YYYY-MM-DD or YYYY-MM"),
    "knowledge": (_is_date, "must be a date: YYYY-MM-DD or YYYY-MM"),
}
"""Each model field's check and the problem its failure is reported as."""


def _model(entry: JsonValue, where: str, problems: _Problems, *, require_id: bool) -> JsonObject | None:
    """A validated model definition (or override) with only the known fields given."""
    if not isinstance(entry, dict):
        problems.add(where, "must be an object")
        return None
    out: JsonObject = {}
    if require_id:
        model_id = entry.get("id")
        if not isinstance(model_id, str) or not model_id.strip():
            problems.add(f"{where}.id", "required: a non-empty string")
            return None
        out["id"] = model_id
        where = f"{where} ({model_id})"
    for key in _MODEL_FIELDS:
        if key not in entry or key == "cost":
            continue
        value = entry[key]
        check, problem = _MODEL_CHECKS[key]
        if not check(value):
            if key == "api" and isinstance(value, str):
                problem = _unsupported_api(value)
            problems.add(f"{where}.{key}", f"{problem} (got {json.dumps(value)[:80]})")
            return None
        out[key] = int(value) if key in ("contextWindow", "maxTokens") and isinstance(value, int | float) else value
    kinds = out.get("input")
    if isinstance(kinds, list):
        out["input"] = list(dict.fromkeys(kind for kind in kinds if isinstance(kind, str)))
    if "cost" in entry:
        cost = _cost(entry["cost"], where, problems)
        if cost is None:
            return None
        out["cost"] = cost
    return out


def _cost(cost: JsonValue, where: str, problems: _Problems) -> JsonObject | None:
    if not isinstance(cost, dict):
        problems.add(f"{where}.cost", "must be an object with input/output/cacheRead/cacheWrite prices")
        return None
    parsed: JsonObject = {}
    for key in _COST_FIELDS:
        if key not in cost:
            continue
        price = cost[key]
        if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
            problems.add(f"{where}.cost.{key}", f"must be a non-negative number (got {json.dumps(price)[:40]})")
            return None
        parsed[key] = float(price)
    return parsed

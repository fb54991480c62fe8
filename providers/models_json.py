"""Reading ``$BATON_HOME/models.json`` (pi's format) into validated provider entries.

The file is user input: every problem becomes one clear message naming the file and the field
(``.../models.json: providers.ollama.models[0].contextWindow: must be a positive integer``) and
only the faulty entry is skipped; nothing here raises.

Config values (``apiKey`` and header values) follow pi: ``!command`` runs the command and uses
its standard output (once per process; ``!!command`` on every use), otherwise the value names
an environment variable when one is set, otherwise it is the literal value.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular_text
from baton.providers.catalog_overlay import DATE
from baton.providers.dispatch import known_apis
from baton.providers.json_depth import load_config_json
from baton.providers.redact import redact, register_secret

SUPPORTED_APIS: tuple[str, ...] = known_apis()
COMMAND_TIMEOUT = 10.0

_MODEL_FIELDS = ("name", "api", "reasoning", "input", "cost", "contextWindow", "maxTokens", "headers", "compat",
                 "releaseDate", "knowledge")
_COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite")

_command_cache: dict[str, str | None] = {}
command_errors: list[str] = []
"""Failures of ``!command`` config values since the last :func:`clear_command_cache`."""


# ---------------------------------------------------------------------------------------------
# Config values


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


def cached_command_values() -> list[str]:
    """The outputs of ``!command`` values run so far (to keep them out of error messages)."""
    return [value for value in _command_cache.values() if value]


def clear_command_cache() -> None:
    """Forget cached ``!command`` results and their recorded failures."""
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
    register_secret(value)  # ``!!command`` values are not cached: remember them for redaction
    return value


def resolve_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    """Header values resolved like API keys; headers that resolve to nothing are left out."""
    if not headers:
        return None
    resolved = {k: v for k, v in ((k, resolve_config_value(v)) for k, v in headers.items()) if v}
    return resolved or None


# ---------------------------------------------------------------------------------------------
# The file


@dataclass
class ProviderConfig:
    """One validated ``providers.<name>`` entry."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] | None = None
    auth_header: bool = False
    compat: dict[str, Any] | None = None
    models: list[dict[str, Any]] = field(default_factory=list)
    """Model definitions in pi's camelCase shape (only the fields that were given)."""
    model_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)


class _Problems:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.messages: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.messages.append(f"{self.path}: {where}: {problem}")


def load_models_json(path: Path) -> tuple[dict[str, ProviderConfig], list[str]]:
    """The valid provider entries of ``path`` and one message per problem found.

    A missing file is not a problem (no entries, no messages)."""
    problems = _Problems(path)
    try:
        text = read_regular_text(path, MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: cannot read: {exc}"]
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


def _provider(name: str, entry: Any, problems: _Problems) -> ProviderConfig | None:
    where = f"providers.{name}"
    if not name.strip() or "/" in name:
        problems.add(where, "a provider name must be non-empty and contain no '/'")
        return None
    if not isinstance(entry, dict):
        problems.add(where, "must be an object")
        return None
    config = ProviderConfig(name=name)
    ok = True
    for key in ("baseUrl", "apiKey", "api"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            problems.add(f"{where}.{key}", "must be a non-empty string")
            ok = False
    if not ok:
        return None
    config.base_url = entry.get("baseUrl")
    config.api_key = entry.get("apiKey")
    config.api = entry.get("api")
    if config.api is not None and config.api not in SUPPORTED_APIS:
        problems.add(f"{where}.api", _unsupported_api(config.api))
        return None
    headers = entry.get("headers")
    if headers is not None:
        if not _is_str_map(headers):
            problems.add(f"{where}.headers", "must be an object of string values")
            return None
        config.headers = headers
    auth_header = entry.get("authHeader")
    if auth_header is not None and not isinstance(auth_header, bool):
        problems.add(f"{where}.authHeader", "must be true or false")
        return None
    config.auth_header = bool(auth_header)
    compat = entry.get("compat")
    if compat is not None:
        if not isinstance(compat, dict):
            problems.add(f"{where}.compat", "must be an object")
            return None
        config.compat = compat
    models = entry.get("models")
    if models is not None:
        if not isinstance(models, list):
            problems.add(f"{where}.models", "must be a list of model objects")
        else:
            for i, model in enumerate(models):
                parsed = _model(model, f"{where}.models[{i}]", problems, require_id=True)
                if parsed is not None:
                    config.models.append(parsed)
    overrides = entry.get("modelOverrides")
    if overrides is not None:
        if not isinstance(overrides, dict):
            problems.add(f"{where}.modelOverrides", "must be an object mapping model ids to overrides")
        else:
            for model_id, override in overrides.items():
                parsed = _model(override, f"{where}.modelOverrides.{model_id}", problems, require_id=False)
                if parsed is not None:
                    parsed.pop("api", None)
                    config.model_overrides[model_id] = parsed
    return config


def _unsupported_api(api: str) -> str:
    return f"api {api!r} is not supported by baton (supported: {', '.join(SUPPORTED_APIS)})"


def _is_str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _is_date(value: Any) -> bool:
    return isinstance(value, str) and DATE.fullmatch(value) is not None


def _positive_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return isinstance(value, int) and value > 0


def _model(entry: Any, where: str, problems: _Problems, *, require_id: bool) -> dict[str, Any] | None:
    """A validated model definition (or override) with only the known fields given."""
    if not isinstance(entry, dict):
        problems.add(where, "must be an object")
        return None
    out: dict[str, Any] = {}
    if require_id:
        model_id = entry.get("id")
        if not isinstance(model_id, str) or not model_id.strip():
            problems.add(f"{where}.id", "required: a non-empty string")
            return None
        out["id"] = model_id
        where = f"{where} ({model_id})"
    checks = {
        "name": (lambda v: isinstance(v, str) and bool(v.strip()), "must be a non-empty string"),
        "api": (lambda v: isinstance(v, str) and v in SUPPORTED_APIS, None),
        "reasoning": (lambda v: isinstance(v, bool), "must be true or false"),
        "input": (
            lambda v: isinstance(v, list) and bool(v) and all(x in ("text", "image") for x in v),
            'must be a non-empty list of "text" and/or "image"',
        ),
        "contextWindow": (_positive_int, "must be a positive integer"),
        "maxTokens": (_positive_int, "must be a positive integer"),
        "headers": (_is_str_map, "must be an object of string values"),
        "compat": (lambda v: isinstance(v, dict), "must be an object"),
        "releaseDate": (_is_date, "must be a date: YYYY-MM-DD or YYYY-MM"),
        "knowledge": (_is_date, "must be a date: YYYY-MM-DD or YYYY-MM"),
    }
    for key in _MODEL_FIELDS:
        if key not in entry or key == "cost":
            continue
        value = entry[key]
        check, problem = checks[key]
        if not check(value):
            if key == "api":
                problem = _unsupported_api(value) if isinstance(value, str) else "must be a string"
            problems.add(f"{where}.{key}", f"{problem} (got {json.dumps(value)[:80]})")
            return None
        out[key] = int(value) if key in ("contextWindow", "maxTokens") else value
    if "input" in out:
        out["input"] = list(dict.fromkeys(out["input"]))
    if "cost" in entry:
        cost = entry["cost"]
        if not isinstance(cost, dict):
            problems.add(f"{where}.cost", "must be an object with input/output/cacheRead/cacheWrite prices")
            return None
        parsed_cost: dict[str, float] = {}
        for key in _COST_FIELDS:
            if key not in cost:
                continue
            price = cost[key]
            if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
                problems.add(f"{where}.cost.{key}", f"must be a non-negative number (got {json.dumps(price)[:40]})")
                return None
            parsed_cost[key] = float(price)
        out["cost"] = parsed_cost
    return out

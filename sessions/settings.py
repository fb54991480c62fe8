"""User settings: ``$BATON_HOME/settings.json``.

Keys may be written snake_case (``default_model``) or in pi's camelCase (``defaultModel``), so
a pi ``settings.json`` works as is (pi's separate ``defaultProvider`` + ``defaultModel`` pair is
understood too). A file that cannot be read or has invalid values never stops baton: each bad
value is reported in :attr:`Settings.problems` and its default is used instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from providers.models import ThinkingLevel
from providers.paths import baton_home

SETTINGS_FILE = "settings.json"


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class CompactionSettings(_Section):
    """When and how much to compact (pi's defaults)."""

    enabled: bool = True
    reserve_tokens: int = Field(default=16_384, ge=0)
    """Compact once the context exceeds the model's window minus this many tokens."""
    keep_recent_tokens: int = Field(default=20_000, ge=0)
    """Roughly how many of the most recent tokens survive a compaction verbatim."""


class RetrySettings(_Section):
    """Automatic retry of transient provider errors (pi's defaults)."""

    enabled: bool = True
    max_retries: int = Field(default=3, ge=0, le=100)
    base_delay_ms: int = Field(default=2_000, ge=0)
    """The first wait; each further attempt doubles it."""


class Settings(_Section):
    """Everything ``settings.json`` may hold."""

    default_model: str | None = None
    """``provider/id`` of the model new sessions start with."""
    default_thinking_level: ThinkingLevel | None = None
    favorite_models: list[str] = Field(default_factory=list)
    """``provider/id`` list that Ctrl+P cycles through (all available models when empty)."""
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    thinking_handoff: Literal["text", "drop"] = "text"
    """What another model's thinking becomes when the conversation moves: text (pi) or nothing."""
    theme: str | None = None

    _problems: list[str] = PrivateAttr(default_factory=list)
    _path: Path | None = PrivateAttr(default=None)

    @property
    def problems(self) -> list[str]:
        """What was wrong with the file (each bad value was replaced by its default)."""
        return self._problems

    @property
    def path(self) -> Path | None:
        """The file these settings were loaded from, if any."""
        return self._path


def settings_path(home: Path | None = None) -> Path:
    """``$BATON_HOME/settings.json``."""
    return (home or baton_home()) / SETTINGS_FILE


def load_settings(path: Path | None = None) -> Settings:
    """Read settings (default: ``$BATON_HOME/settings.json``); never raises.

    A missing file gives the defaults. An unreadable file or invalid JSON gives the defaults and
    one problem; invalid values are dropped one by one (each reported) and the rest is kept."""
    target = path or settings_path()
    problems: list[str] = []
    data: dict[str, Any] = {}
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        text = ""
        problems.append(f"{target}: cannot be read ({exc.strerror or exc}); using default settings")
    if text.strip():
        try:
            loaded = json.loads(text)
        except ValueError as exc:
            problems.append(f"{target}: not valid JSON ({exc}); using default settings")
            loaded = {}
        if isinstance(loaded, dict):
            data = loaded
        else:
            problems.append(f"{target}: must hold a JSON object; using default settings")
    settings = validate_settings(_from_pi(data), problems, source=str(target))
    settings._path = target
    return settings


def validate_settings(data: dict[str, Any], problems: list[str] | None = None, *, source: str = "settings") -> Settings:
    """Validate a settings dict, dropping (and reporting) each invalid value."""
    found = problems if problems is not None else []
    current = _deep_copy(data)
    for _ in range(64):
        try:
            settings = Settings.model_validate(current)
            break
        except ValidationError as exc:
            for error in exc.errors():
                loc = [str(p) for p in error.get("loc", ())]
                found.append(f"{source}: {'.'.join(loc) or 'value'}: {error.get('msg')}; using the default")
                _drop(current, loc)
    else:  # pragma: no cover - every round drops at least one key
        settings = Settings()
    settings._problems = found
    return settings


def _from_pi(data: dict[str, Any]) -> dict[str, Any]:
    """pi keeps the provider apart (``defaultProvider`` + ``defaultModel``); join them."""
    out = dict(data)
    provider = out.pop("defaultProvider", None)
    model = out.get("defaultModel", out.get("default_model"))
    if isinstance(provider, str) and isinstance(model, str) and "/" not in model:
        key = "defaultModel" if "defaultModel" in out else "default_model"
        out[key] = f"{provider}/{model}"
    return out


def _drop(data: dict[str, Any], loc: list[str]) -> None:
    """Remove the value at ``loc`` (keys may be spelled snake_case or camelCase)."""
    node: Any = data
    for depth, key in enumerate(loc):
        last = depth == len(loc) - 1
        if isinstance(node, dict):
            actual = next((k for k in (key, to_camel(key), to_snake(key)) if k in node), None)
            if actual is None:
                break
            if last:
                del node[actual]
                return
            node = node[actual]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            if last:
                del node[int(key)]
                return
            node = node[int(key)]
        else:
            break
    if loc:  # could not follow the path: drop the whole top-level key
        for k in (loc[0], to_camel(loc[0]), to_snake(loc[0])):
            data.pop(k, None)


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value

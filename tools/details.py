"""Typed views of the tools' ``details``, for the UI.

A tool result's ``details`` is stored as the JSON object pi writes (persisted in session files,
sent in JSON mode), so the tools keep producing those dicts unchanged. The UI reads them through
these views instead of by string keys: each view parses a stored dict (from this version, an
older one or pi, hence the tolerance for missing keys and pi's snake_case spellings) into typed
fields. A tool names its view in ``AgentTool.details_type``; :func:`parse_details` finds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol, Self, TypeVar

from baton.providers.json_types import JsonMapping, JsonValue


def _first(raw: JsonMapping, *names: str) -> JsonValue:
    return next((raw[name] for name in names if raw.get(name) is not None), None)


def _int(raw: JsonMapping, *names: str) -> int | None:
    value = _first(raw, *names)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(raw: JsonMapping, *names: str) -> str | None:
    value = _first(raw, *names)
    return value if isinstance(value, str) else None


class ToolDetails(Protocol):
    """A typed view of one tool's stored ``details``."""

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> Self:
        """The view of a stored details object (missing or mistyped keys read as absent)."""


@dataclass(frozen=True, slots=True)
class ReadDetails:
    """``read``: which lines of a text file were shown, or which image."""

    kind: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    total_lines: int | None = None
    mime_type: str | None = None
    bytes: int | None = None

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> ReadDetails:
        """The view of a stored ``read`` details object."""
        return cls(_str(raw, "kind"), _int(raw, "startLine"), _int(raw, "endLine"), _int(raw, "totalLines"),
                   _str(raw, "mimeType"), _int(raw, "bytes"))


@dataclass(frozen=True, slots=True)
class WriteDetails:
    """``write``: how much was written and whether the file was new."""

    bytes: int | None = None
    lines: int | None = None
    created: bool = False

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> WriteDetails:
        """The view of a stored ``write`` details object."""
        return cls(_int(raw, "bytes"), _int(raw, "lines"), bool(raw.get("created")))


@dataclass(frozen=True, slots=True)
class EditDetails:
    """``edit`` (and ``write`` when it has one): the display diff."""

    diff: str | None = None

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> EditDetails:
        """The view of a stored ``edit`` details object."""
        return cls(_str(raw, "diff"))


@dataclass(frozen=True, slots=True)
class BashDetails:
    """``bash`` (and the user's ``!`` commands): how the command ended."""

    FACT_KEYS: ClassVar[tuple[str, ...]] = ("exitCode", "aborted", "timedOut")

    exit_code: int | None = None
    timed_out: bool = False
    aborted: bool = False
    duration_ms: float | None = None
    full_output_path: str | None = None
    has_facts: bool = False
    """The details say how the command ended (an exit code, an abort or a timeout)."""

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> BashDetails:
        """The view of a stored ``bash`` details object."""
        millis = raw.get("durationMs")
        return cls(
            exit_code=_int(raw, "exitCode", "exit_code"),
            timed_out=bool(raw.get("timedOut")),
            aborted=bool(raw.get("aborted")),
            duration_ms=millis if isinstance(millis, int | float) and not isinstance(millis, bool) else None,
            full_output_path=_str(raw, "fullOutputPath", "full_output_path"),
            has_facts=any(key in raw for key in cls.FACT_KEYS),
        )


def _number(raw: JsonMapping, *names: str) -> float | None:
    value = _first(raw, *names)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ModelCallDetails:
    """A tool that consulted a model (``ask_model``): which model, the tokens it took, its cost.

    ``usage`` is the provider-neutral usage object (``input``, ``output``, ``cacheRead``,
    ``cacheWrite``); ``cost`` is in US dollars, 0 for a model the catalog has no price for."""

    model: str | None = None
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float | None = None

    @property
    def unpriced(self) -> bool:
        """Tokens were used but nothing was priced (the model has no price in the catalog)."""
        return not self.cost and (self.input + self.output + self.cache_read + self.cache_write) > 0

    @classmethod
    def from_dict(cls, raw: JsonMapping) -> ModelCallDetails:
        """The view of a stored details object (missing or odd usage reads as zero)."""
        usage = raw.get("usage")
        counts: JsonMapping = usage if isinstance(usage, Mapping) else {}
        return cls(_str(raw, "model"), _int(counts, "input") or 0, _int(counts, "output") or 0,
                   _int(counts, "cacheRead", "cache_read") or 0, _int(counts, "cacheWrite", "cache_write") or 0,
                   _number(raw, "cost"))


D = TypeVar("D", bound=ToolDetails)


def parse_details(details_type: type[D], details: object) -> D:
    """``details`` (a stored dict, or anything else meaning "none") read as ``details_type``."""
    return details_type.from_dict(details if isinstance(details, Mapping) else {})

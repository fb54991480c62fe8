"""YAML front matter of Markdown files (skills, prompt templates).

PyYAML's safe loader reads it: skill files in the wild use folded scalars (``description: >-``),
nested ``metadata`` maps and lists (``allowed-tools``), which a hand-written subset would misread
without a word. Only called when such a file exists, so the import costs nothing otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class FrontMatterError(ValueError):
    """The front matter is not valid YAML, or not a mapping."""


@dataclass(frozen=True, slots=True)
class Document:
    """A Markdown file split into its front matter and its body."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse_front_matter(text: str) -> Document:
    """Split ``text`` into front matter (between ``---`` lines at the very top) and body.

    Without front matter the whole text is the body. Raises :class:`FrontMatterError` when the
    block is unterminated, not YAML, or not a mapping."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Document({}, text)
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return Document(_load(block), body.lstrip("\n"))
    raise FrontMatterError("front matter is not closed (no second '---' line)")


def _load(block: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"invalid YAML front matter{where}: {problem}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


def read_front_matter_file(path: Path, limit: int, what: str, warnings: list[str]) -> Document | None:
    """Read and parse ``path`` (at most ``limit`` bytes); on any problem add one warning naming
    ``what`` and the path, and return ``None``."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            warnings.append(f"{what} {path} ignored: larger than {limit // 1024} KB")
            return None
        return parse_front_matter(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{what} {path} ignored: cannot be read ({exc})")
    except FrontMatterError as exc:
        warnings.append(f"{what} {path} ignored: {exc}")
    return None

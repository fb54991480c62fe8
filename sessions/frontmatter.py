"""YAML front matter of Markdown files (skills, prompt templates).

PyYAML's safe loader reads it: skill files in the wild use folded scalars (``description: >-``),
nested ``metadata`` maps and lists (``allowed-tools``), which a hand-written subset would misread
without a word. Only called when such a file exists, so the import costs nothing otherwise.

Front matter comes from files a repository brings, so the loader refuses anchors and aliases (a
391-byte "billion laughs" block expands to gigabytes: 20 s and a MemoryError at every start) and
nesting deeper than :data:`MAX_DEPTH` (the composer recurses); the file itself is read bounded and
regular (:mod:`baton.tools.project_files`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from baton.providers.bounded_read import FileRefusedError, FileTooLargeError, format_cap
from baton.tools.project_files import ProjectFiles, read_bounded


class FrontMatterError(ValueError):
    """The front matter is not valid YAML, or not a mapping."""


@dataclass(frozen=True, slots=True)
class Document:
    """A Markdown file split into its front matter and its body."""

    meta: dict[str, object] = field(default_factory=dict)
    """The YAML mapping as loaded (strings, numbers, lists, dates...: narrow before use)."""
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


MAX_DEPTH = 32
"""Deepest nesting of maps and lists front matter may have."""


def _load(block: str) -> dict[str, object]:
    import yaml

    try:
        data = yaml.load(block, Loader=_plain_loader()) if block.strip() else {}
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


@functools.cache
def _plain_loader() -> type:
    """PyYAML's safe loader without anchors, aliases or deep nesting (built on first use)."""
    import yaml
    from yaml.events import AliasEvent, CollectionStartEvent, NodeEvent

    class PlainLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: object, index: object) -> object:
            event = self.peek_event()
            if isinstance(event, AliasEvent) or (isinstance(event, NodeEvent) and event.anchor is not None):
                raise yaml.composer.ComposerError(
                    None, None, "anchors and aliases (&name, *name) are not allowed", event.start_mark
                )
            nested = isinstance(event, CollectionStartEvent)
            if nested:
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    raise yaml.composer.ComposerError(
                        None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark
                    )
            try:
                return super().compose_node(parent, index)
            finally:
                if nested:
                    self.depth -= 1

    return PlainLoader


def read_front_matter_file(
    path: Path, limit: int, what: str, warnings: list[str], files: ProjectFiles | None = None
) -> Document | None:
    """Read and parse ``path`` (a regular file of at most ``limit`` bytes; a project's file only
    as ``files`` allows); on any problem add one warning naming ``what`` and the path, and
    return ``None``."""
    try:
        data = read_bounded(path, limit, files)
        return parse_front_matter(data.decode("utf-8"))
    except FileTooLargeError:
        warnings.append(f"{what} {path} ignored: larger than {format_cap(limit)}")
    except FileRefusedError as exc:
        warnings.append(f"{what} {path} ignored: {exc}")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{what} {path} ignored: cannot be read ({exc})")
    except FrontMatterError as exc:
        warnings.append(f"{what} {path} ignored: {exc}")
    return None

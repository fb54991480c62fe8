"""``.gitignore`` rules.

Supported: comments and blank lines, ``!`` negation, ``dir/`` (directories only), patterns
anchored by a ``/`` at the start or in the middle versus patterns matching at any depth, ``*``,
``?``, ``[...]``, ``**`` (leading, trailing, in the middle), backslash escapes and trailing-space
trimming. The last matching rule wins, and rules from deeper ``.gitignore`` files come after
(override) those from their parents. A directory that is ignored is not descended into, so nothing
inside it can be re-included (as in git).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from baton.providers.bounded_read import MAX_CONFIG_BYTES, read_regular
from baton.tools.globs import glob_regex


@dataclass(slots=True, frozen=True)
class IgnoreRule:
    """One pattern line: ``regex`` matches the path relative to the file's directory (anchored
    rules) or the entry's name (the others)."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    """The rules of one ``.gitignore`` file, in order."""
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = _trim_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/") and not line.endswith("\\/")
        line = line.rstrip("/") if dir_only else line
        if not line:
            continue
        anchored = "/" in line
        if line.startswith("/"):
            line = line[1:]
        rules.append(IgnoreRule(glob_regex(line), negated, dir_only, anchored))
    return rules


def _trim_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


@dataclass(slots=True, frozen=True)
class IgnoreFile:
    """Rules of one ``.gitignore`` and where they apply: ``base`` is its directory relative to
    the walk root (``""`` for the root), or ``prefix`` the walk root relative to its directory
    when the file lies above the root."""

    rules: tuple[IgnoreRule, ...]
    base: str = ""
    prefix: str = ""

    def subject(self, rel_path: str) -> str | None:
        """``rel_path`` (relative to the walk root) as seen from this file, or None if outside."""
        if self.prefix:
            return f"{self.prefix}/{rel_path}"
        if not self.base:
            return rel_path
        if rel_path.startswith(self.base + "/"):
            return rel_path[len(self.base) + 1 :]
        return None


def is_ignored(files: list[IgnoreFile], rel_path: str, is_dir: bool) -> bool:
    """Whether ``rel_path`` is ignored by ``files`` (outermost first; the last match wins)."""
    ignored = False
    name = rel_path.rsplit("/", 1)[-1]
    for ignore_file in files:
        subject = ignore_file.subject(rel_path)
        if subject is None:
            continue
        for rule in ignore_file.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(subject if rule.anchored else name):
                ignored = not rule.negated
    return ignored


def load_ignore_file(
    path: str, base: str = "", prefix: str = "", *, dir_fd: int | None = None
) -> IgnoreFile | None:
    """Read ``path`` (relative to the folder handle ``dir_fd`` when given) as a ``.gitignore``;
    None when absent or unreadable. As git does, a symlinked ``.gitignore`` is not followed, and
    only a regular file of at most 1 MB is read (a repository's ``.gitignore`` pointing at
    ``/dev/zero`` or a FIFO must not hang or exhaust a search)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, dir_fd=dir_fd, follow=False)
    except OSError:
        return None
    rules = parse_gitignore(data.decode("utf-8", "replace"))
    return IgnoreFile(tuple(rules), base, prefix) if rules else None


def parent_ignore_files(root: str) -> list[IgnoreFile]:
    """``.gitignore`` files above ``root`` up to its git repository's top (outermost first);
    none when ``root`` is not inside a repository."""
    root = os.path.abspath(root)
    chain: list[str] = []
    current = os.path.dirname(root)
    top: str | None = None
    if os.path.exists(os.path.join(root, ".git")):
        return []
    while True:
        chain.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            top = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if top is None:
        return []
    files: list[IgnoreFile] = []
    for directory in reversed(chain):
        prefix = os.path.relpath(root, directory).replace(os.sep, "/")
        loaded = load_ignore_file(os.path.join(directory, ".gitignore"), prefix=prefix)
        if loaded is not None:
            files.append(loaded)
    return files

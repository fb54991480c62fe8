"""Project files for ``@`` completion (respecting .gitignore) and a small fuzzy matcher."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

MAX_FILES = 50_000
_OTHER_VCS = frozenset({".hg", ".svn"})  # tools.walk already skips .git


def list_project_files(cwd: Path, *, limit: int = MAX_FILES) -> list[str]:
    """Relative paths of the files under ``cwd`` (and their directories, with a trailing ``/``),
    skipping what .gitignore ignores. Uses ``git ls-files`` inside a git work tree, else a walk
    that reads .gitignore files itself."""
    files = _git_files(cwd, limit)
    if files is None:
        files = _walk_files(cwd, limit)
    dirs: set[str] = set()
    for path in files:
        parent = os.path.dirname(path)
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = os.path.dirname(parent)
    return sorted(files) + sorted(d + "/" for d in dirs)


_NO_PROGRAMS = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")
"""The repository's config is the model's to write (a ``core.fsmonitor`` command would run on
every listing, outside the sandbox): listing files runs no program it names."""


def _git_files(cwd: Path, limit: int) -> list[str] | None:
    try:
        proc = subprocess.run(
            ["git", *_NO_PROGRAMS, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=cwd, capture_output=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    out: list[str] = []
    for raw in proc.stdout.split(b"\0"):
        if raw:
            path = raw.decode("utf-8", "replace")
            if os.path.exists(os.path.join(cwd, path)):
                out.append(path)
                if len(out) >= limit:
                    break
    return out


def _walk_files(cwd: Path, limit: int) -> list[str]:
    """Outside a git work tree: the same .gitignore-aware walk the grep and find tools use."""
    from baton.tools.walk import walk

    out: list[str] = []
    for entry in walk(str(cwd)):
        if entry.is_dir or _OTHER_VCS.intersection(entry.rel_path.split("/")):
            continue
        out.append(entry.rel_path)
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------------------------
# Fuzzy matching


def fuzzy_score(query: str, candidate: str) -> float | None:
    """How well ``query`` matches ``candidate`` as a case-insensitive subsequence (higher is
    better), or None when it does not. Matches in the last path segment, at word starts and in
    runs score more; shorter candidates win ties."""
    if not query:
        return 0.0 - len(candidate) * 0.01
    text = candidate.lower()
    q = query.lower()
    base_start = text.rstrip("/").rfind("/") + 1
    # Prefer a match that starts inside the last segment when there is one.
    score = _match(q, text, base_start)
    if score is None:
        score = _match(q, text, 0)
        if score is None:
            return None
    else:
        score += 5
    if q in text[base_start:]:
        score += 10
        if text[base_start:].startswith(q):
            score += 10
    return score - len(candidate) * 0.01


def _match(query: str, text: str, start: int) -> float | None:
    score = 0.0
    pos = start
    previous = -2
    for char in query:
        found = text.find(char, pos)
        if found == -1:
            return None
        if found == previous + 1:
            score += 3
        if found == 0 or text[found - 1] in "/._- ":
            score += 2
        score += 1
        previous = found
        pos = found + 1
    return score


def fuzzy_filter(query: str, candidates: Iterable[str], limit: int = 50) -> list[str]:
    """The best ``limit`` candidates for ``query``, best first."""
    scored: list[tuple[float, str]] = []
    for candidate in candidates:
        score = fuzzy_score(query, candidate)
        if score is not None:
            scored.append((score, candidate))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [candidate for _, candidate in scored[:limit]]

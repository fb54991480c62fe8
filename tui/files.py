"""Project files for ``@`` completion (respecting .gitignore) and a small fuzzy matcher."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

MAX_FILES = 50_000
_ALWAYS_SKIP = {".git", ".hg", ".svn"}


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


def _git_files(cwd: Path, limit: int) -> list[str] | None:
    try:
        proc = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
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


class _Ignore:
    """The patterns of one .gitignore, relative to its directory."""

    def __init__(self, base: str, lines: Iterable[str]) -> None:
        self.base = base
        self.rules: list[tuple[str, bool, bool, bool]] = []  # pattern, negate, dir_only, anchored
        for line in lines:
            line = line.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = "/" in line
            self.rules.append((line.lstrip("/"), negate, dir_only, anchored))

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True = ignored, False = re-included, None = no rule matched."""
        verdict: bool | None = None
        name = rel.rsplit("/", 1)[-1]
        for pattern, negate, dir_only, anchored in self.rules:
            if dir_only and not is_dir:
                continue
            target = rel if anchored else name
            if fnmatch.fnmatchcase(target, pattern) or (anchored and fnmatch.fnmatchcase(rel, pattern + "/**")):
                verdict = not negate
        return verdict


def _walk_files(cwd: Path, limit: int) -> list[str]:
    out: list[str] = []
    stack: list[tuple[str, list[_Ignore]]] = [("", [])]
    while stack:
        rel_dir, ignores = stack.pop()
        abs_dir = os.path.join(cwd, rel_dir)
        gitignore = os.path.join(abs_dir, ".gitignore")
        if os.path.isfile(gitignore):
            try:
                with open(gitignore, encoding="utf-8", errors="replace") as handle:
                    ignores = [*ignores, _Ignore(rel_dir, handle.readlines())]
            except OSError:
                pass
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in _ALWAYS_SKIP:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if _ignored(rel, is_dir, ignores):
                continue
            if is_dir:
                stack.append((rel, ignores))
            else:
                out.append(rel)
                if len(out) >= limit:
                    return out
    return out


def _ignored(rel: str, is_dir: bool, ignores: Sequence[_Ignore]) -> bool:
    ignored = False
    for ignore in ignores:
        local = rel[len(ignore.base) + 1 :] if ignore.base else rel
        verdict = ignore.decide(local, is_dir)
        if verdict is not None:
            ignored = verdict
    return ignored


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

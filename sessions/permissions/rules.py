"""Permission rules in Claude Code's syntax: ``bash(git status)``, ``bash(npm run test:*)``,
``edit(src/**)``, ``write(docs/*.md)``, ``read(~/.ssh/**)``, ``mcp__server__tool`` and bare tool
names.

Tool names compare case-insensitively (``Bash(...)`` from a Claude Code file works). A bash
pattern is the exact command, a prefix (``npm run test:*`` or a trailing `` *``), or a glob whose
``*`` matches anything. A path pattern is a glob (``**`` crosses directories) over the real path:
relative patterns are taken from the project directory, ``~/`` from the home directory, ``/`` and
``//`` start absolute paths. ``edit(...)`` rules cover ``write`` too, as in Claude Code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, TypeAlias

from baton.sessions.permissions.shell_parts import CommandParts, split_command

RuleKind: TypeAlias = Literal["allow", "deny", "ask"]
PATH_TOOLS = frozenset({"read", "edit", "write", "grep", "find", "ls"})
_RULE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule. ``pattern`` is None for a bare tool name (every call of that tool)."""

    tool: str
    pattern: str | None
    text: str

    def __str__(self) -> str:
        return self.text


def parse_rule(text: str) -> Rule:
    """Parse ``tool`` or ``tool(pattern)``; raises :class:`RuleError` for anything else."""
    match = _RULE.match(text)
    if match is None:
        raise RuleError(f"not a permission rule: {text!r} (expected tool or tool(pattern))")
    tool = match.group(1).lower()
    pattern = match.group(2)
    if pattern is not None:
        pattern = pattern.strip()
        if pattern in ("", "*", "**"):
            pattern = None
    return Rule(tool, pattern, text.strip())


def format_rule(tool: str, pattern: str | None) -> str:
    """The rule text for ``tool`` and ``pattern``."""
    return tool if pattern is None else f"{tool}({pattern})"


# ---------------------------------------------------------------------------------------- bash


def normalize_command(command: str) -> str:
    """``command`` with runs of whitespace collapsed (how commands and patterns are compared)."""
    return " ".join(command.split())


@lru_cache(maxsize=4096)
def bash_regex(pattern: str) -> str:
    """The regex (source) a bash pattern stands for: exact, ``prefix:*``, ``prefix *`` or a glob."""
    pattern = normalize_command(pattern)
    if pattern.endswith(":*"):
        return re.escape(pattern[:-2]) + ".*"
    if pattern.endswith(" *") and "*" not in pattern[:-2]:
        return re.escape(pattern[:-2]) + "(?: .*)?"
    return ".*".join(re.escape(piece) for piece in pattern.split("*"))


@lru_cache(maxsize=4096)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source, re.DOTALL)


def bash_part_matches(pattern: str, part: str) -> bool:
    """Whether one simple command ``part`` matches a bash rule ``pattern``."""
    return _compiled(bash_regex(pattern)).fullmatch(part) is not None


def bash_rule_matches(rule: Rule, command: str, parts: CommandParts | None = None, *, every: bool) -> bool:
    """Whether ``rule`` alone matches ``command``.

    ``every=True`` (allow rules): the whole command equals the pattern, or every simple command
    in it matches (and a redirection to a file only matches a rule that has one itself).
    ``every=False`` (deny and ask rules): any simple command matching is enough."""
    if rule.pattern is None:
        return True
    split = parts or split_command(command)
    if normalize_command(command) == normalize_command(rule.pattern):
        return True
    if not split.parts:
        return False
    if every:
        if split.redirects and ">" not in rule.pattern:
            return False
        return all(bash_part_matches(rule.pattern, part) for part in split.parts)
    return any(bash_part_matches(rule.pattern, part) for part in split.parts)


# ---------------------------------------------------------------------------------------- paths


def pattern_to_abs(pattern: str, project_dir: str, home: str | None = None) -> str:
    """The absolute glob a path pattern stands for (see the module docstring)."""
    home = home or os.path.expanduser("~")
    if pattern == "~" or pattern.startswith("~/"):
        return home + pattern[1:]
    if pattern.startswith("//"):
        return pattern[1:]
    if pattern.startswith("/"):
        return pattern
    if pattern.startswith("./"):
        pattern = pattern[2:]
    return os.path.join(project_dir, pattern)


@lru_cache(maxsize=4096)
def _path_glob(glob: str) -> re.Pattern[str]:
    """``**`` any depth (including none), ``*`` and ``?`` within one name, ``[..]`` classes."""
    out: list[str] = []
    i = 0
    n = len(glob)
    while i < n:
        ch = glob[i]
        if glob.startswith("/**/", i):
            out.append("(?:/.*)?/")
            i += 4
        elif glob.startswith("/**", i) and i + 3 == n:
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = glob.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out), re.DOTALL)


@lru_cache(maxsize=4096)
def _real_glob(pattern: str, project_dir: str, home: str | None) -> re.Pattern[str]:
    """The pattern as a regex over real paths: its fixed leading directories have their
    symlinks resolved, like the paths it is compared with."""
    glob = os.path.normpath(pattern_to_abs(pattern, project_dir, home))
    if pattern.endswith("/"):
        glob += "/**"
    wild = min((i for i in (glob.find(c) for c in "*?[") if i >= 0), default=len(glob))
    head = glob[:wild].rsplit("/", 1)[0] if wild < len(glob) else glob
    if head:
        glob = os.path.realpath(head) + glob[len(head) :]
    return _path_glob(glob)


def path_matches(pattern: str, path: str, project_dir: str, home: str | None = None) -> bool:
    """Whether the absolute real ``path`` matches the path ``pattern``."""
    return _real_glob(pattern, project_dir, home).fullmatch(path) is not None


# ---------------------------------------------------------------------------------------- sets


@dataclass
class Matcher:
    """The rules of one kind for one tool, compiled into one regex (one scan per check)."""

    rules: list[Rule]
    catch_all: Rule | None = None
    exact: dict[str, Rule] = field(default_factory=dict)
    """bash: normalised whole-command patterns."""
    combined: re.Pattern[str] | None = None
    redirecting: re.Pattern[str] | None = None
    """bash: only the patterns that themselves redirect (allowed for commands that do)."""

    @classmethod
    def build(cls, rules: list[Rule], *, bash: bool, project_dir: str, home: str | None) -> Matcher:
        out = cls(rules, next((r for r in rules if r.pattern is None), None))
        patterned = [r for r in rules if r.pattern is not None]
        if bash:
            out.exact = {normalize_command(r.pattern or ""): r for r in reversed(patterned)}
            out.combined = _alternation([bash_regex(r.pattern or "") for r in patterned])
            out.redirecting = _alternation([bash_regex(r.pattern or "") for r in patterned if ">" in (r.pattern or "")])
        else:
            out.combined = _alternation([_real_glob(r.pattern or "", project_dir, home).pattern for r in patterned])
        return out

    def match_command(self, command: str, parts: CommandParts, *, every: bool) -> list[Rule]:
        """The rules that make ``command`` match (empty: no match). ``every``: see
        :func:`bash_rule_matches`; an allow needs each simple command matched by some rule."""
        if self.catch_all is not None:
            return [self.catch_all]
        whole = self.exact.get(normalize_command(command))
        if whole is not None:
            return [whole]
        if not parts.parts:
            return []
        regex = self.redirecting if every and parts.redirects else self.combined
        if regex is None:
            return []
        if every:
            if not all(regex.fullmatch(part) for part in parts.parts):
                return []
            wanted = parts.parts
        else:
            wanted = tuple(part for part in parts.parts if regex.fullmatch(part))
            if not wanted:
                return []
        candidates = [r for r in self.rules if not (every and parts.redirects and ">" not in (r.pattern or ""))]
        found: list[Rule] = []
        for part in wanted:
            rule = next(r for r in candidates if r.pattern is not None and bash_part_matches(r.pattern, part))
            if rule not in found:
                found.append(rule)
        return found

    def match_path(self, path: str | None, project_dir: str, home: str | None) -> Rule | None:
        """The first rule matching the real ``path`` (a bare tool rule matches any call)."""
        if self.catch_all is not None:
            return self.catch_all
        if path is None or self.combined is None or self.combined.fullmatch(path) is None:
            return None
        return next(r for r in self.rules if r.pattern is not None and path_matches(r.pattern, path, project_dir, home))


def _alternation(sources: list[str]) -> re.Pattern[str] | None:
    if not sources:
        return None
    return re.compile("|".join(f"(?:{source})" for source in sources), re.DOTALL)



@dataclass
class RuleSet:
    """The allow, deny and ask rules in effect (global and project joined)."""

    allow: list[Rule] = field(default_factory=list)
    deny: list[Rule] = field(default_factory=list)
    ask: list[Rule] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _by_tool: dict[tuple[str, str], list[Rule]] = field(default_factory=dict, repr=False)
    _matchers: dict[tuple[str, str, str, str | None], Matcher] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(cls, allow: Iterable[str] = (), deny: Iterable[str] = (), ask: Iterable[str] = ()) -> RuleSet:
        """Parse rule texts; unparsable ones are skipped and listed in :attr:`problems`."""
        out = cls()
        for kind, texts in (("allow", allow), ("deny", deny), ("ask", ask)):
            for text in texts:
                try:
                    out.add(kind, parse_rule(text))  # type: ignore[arg-type]
                except RuleError as exc:
                    out.problems.append(f"permissions.{kind}: {exc}")
        return out

    def add(self, kind: RuleKind, rule: Rule) -> None:
        """Add ``rule`` to the ``kind`` list."""
        getattr(self, kind).append(rule)
        self._by_tool.clear()
        self._matchers.clear()

    def for_tool(self, kind: RuleKind, tool: str) -> list[Rule]:
        """The ``kind`` rules that name ``tool`` (``edit`` rules count for ``write``)."""
        key = (kind, tool)
        cached = self._by_tool.get(key)
        if cached is None:
            names = {tool, "edit"} if tool == "write" else {tool}
            cached = [rule for rule in getattr(self, kind) if rule.tool in names]
            self._by_tool[key] = cached
        return cached

    def matcher(self, kind: RuleKind, tool: str, project_dir: str, home: str | None = None) -> Matcher:
        """The compiled ``kind`` rules for ``tool`` (cached until a rule is added)."""
        key = (kind, tool, project_dir, home)
        found = self._matchers.get(key)
        if found is None:
            found = Matcher.build(self.for_tool(kind, tool), bash=tool == "bash", project_dir=project_dir, home=home)
            self._matchers[key] = found
        return found

    def __len__(self) -> int:
        return len(self.allow) + len(self.deny) + len(self.ask)

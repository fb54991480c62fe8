"""Permission rules in Claude Code's syntax: ``bash(git status)``, ``bash(npm run test:*)``,
``edit(src/**)``, ``write(docs/*.md)``, ``read(~/.ssh/**)``, MCP rules and bare tool names.

Tool names compare case-insensitively (``Bash(...)`` from a Claude Code file works), and Claude
Code's names for baton's tools (each tool's ``claude_code_name``: ``Glob`` is ``find``, ``MultiEdit``
is ``edit``) name them too, so ``Read(./.env)`` or ``Glob`` in a ``.claude/settings.json`` applies. A bash
pattern is the exact command, a prefix (``npm run test:*`` or a trailing `` *``), or a glob whose
``*`` matches anything. A path pattern is a glob (``**`` crosses directories) over the real path:
relative patterns are taken from the project directory, ``~/`` from the home directory, ``/`` and
``//`` start absolute paths. ``edit(...)`` rules cover every tool that changes files (``write``
too), as in Claude Code.

Web rules name a host: ``web_fetch(domain:example.com)`` (Claude Code's ``WebFetch(domain:...)``
too) covers that host, ``domain:*.example.com`` its subdomains; hosts compare in lower case,
IDNA-encoded, without a port.

MCP rules name the server as configured, as in Claude Code: ``mcp__memory`` and ``mcp__memory__*``
cover every tool of the ``memory`` server, ``mcp__memory__create_entities`` one tool (a ``*`` in
the tool part is a glob: ``mcp__github__get_*``). They are matched against the call's server and
tool names (:class:`McpIdentity`), with the characters baton replaces in tool names (anything but
letters, digits, ``_`` and ``-``) replaced the same way on both sides. A deny or ask rule may
leave the server open (``mcp__*``: every MCP tool); an allow rule must name its server. MCP rules
take no ``(pattern)``: such a rule is reported, never silently dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, TypeAlias

from baton.sessions.permissions.shell_parts import CommandParts, split_command
from baton.tools import TOOL_MODULES, tool_class, tool_type

RuleKind: TypeAlias = Literal["allow", "deny", "ask"]
_RULE = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


DOMAIN_PREFIX = "domain:"
"""Web rules' patterns: ``domain:example.com``."""
TOOL_ALIASES = {"webfetch": "web_fetch", "websearch": "web_search"}
"""Claude Code's names for tools whose baton name differs by more than case."""
EDIT_RULE = "edit"
"""``edit(...)`` rules cover every tool that changes files."""
BASH_RULE = "bash"
"""``bash(...)`` patterns are commands, not paths."""


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


MCP_PREFIX = "mcp__"
_MCP_RULE = re.compile(r"^\s*(mcp__[A-Za-z0-9_.\-*]*)\s*$", re.IGNORECASE)
_UNSAFE_NAME_CHARS = re.compile(r"[^a-z0-9_*-]")


@dataclass(frozen=True, slots=True)
class McpIdentity:
    """Which server and which of its tools an MCP call goes to (as the configuration names them)."""

    server: str
    tool: str


def mcp_name_part(name: str) -> str:
    """A server or tool name as MCP rules compare it: lower case, with every character baton's
    tool names cannot hold replaced by ``_`` (a rule's ``*`` stays a wildcard)."""
    return _UNSAFE_NAME_CHARS.sub("_", name.lower())


def is_mcp_rule(rule: Rule) -> bool:
    """Whether ``rule`` is an MCP rule (``mcp__...``)."""
    return rule.tool.startswith(MCP_PREFIX)


def _star_glob(pattern: str) -> re.Pattern[str]:
    return _compiled(".*".join(re.escape(piece) for piece in pattern.split("*")))


def mcp_rule_matches(rule: Rule, identity: McpIdentity) -> bool:
    """Whether the MCP rule covers a call of ``identity``'s tool (see the module docstring): the
    whole rule names the server, or a split of it at a ``__`` names the server and the tool (so
    ``mcp__github__*`` covers the server ``github``, never a server ``github__x``)."""
    wanted = rule.tool[len(MCP_PREFIX):]
    server, tool = mcp_name_part(identity.server), mcp_name_part(identity.tool)
    if wanted == server or ("__" not in wanted and _star_glob(wanted).fullmatch(server) is not None):
        return True
    at = wanted.find("__")
    while at > 0:
        if _star_glob(wanted[:at]).fullmatch(server) and _star_glob(wanted[at + 2 :]).fullmatch(tool):
            return True
        at = wanted.find("__", at + 1)
    return False


def _parse_mcp_rule(text: str) -> Rule:
    match = _MCP_RULE.match(text)
    if match is None:
        raise RuleError(f"not a permission rule: {text!r} (MCP rules are mcp__server, mcp__server__* or "
                        "mcp__server__tool, without a pattern)")
    name = match.group(1)
    wanted = mcp_name_part(name[len(MCP_PREFIX):])
    if not wanted.strip("_"):
        raise RuleError(f"not a permission rule: {text!r} (an MCP rule names a server: mcp__server)")
    return Rule(MCP_PREFIX + wanted, None, text.strip())


def parse_rule(text: str) -> Rule:
    """Parse ``tool`` or ``tool(pattern)``; raises :class:`RuleError` for anything else."""
    if text.strip().lower().startswith(MCP_PREFIX):
        return _parse_mcp_rule(text)
    match = _RULE.match(text)
    if match is None:
        raise RuleError(f"not a permission rule: {text!r} (expected tool or tool(pattern))")
    tool = baton_tool_name(match.group(1))
    tool = TOOL_ALIASES.get(tool, tool)
    pattern = match.group(2)
    if pattern is not None:
        pattern = pattern.strip()
        if pattern in ("", "*", "**"):
            pattern = None
    return Rule(tool, pattern, text.strip())


_CLAUDE_ALIASES = {"multiedit": "edit", "notebookedit": "edit"}
"""Claude Code tools baton covers with one of its own (edits of any shape are ``edit``)."""


@lru_cache(maxsize=1)
def _claude_names() -> dict[str, str]:
    names = {name.lower(): name for name in TOOL_MODULES}
    for name in TOOL_MODULES:
        claude = tool_class(name).claude_code_name
        if claude and claude.lower() not in names:
            names[claude.lower()] = name
    return names


def baton_tool_name(name: str) -> str:
    """The baton tool a rule's tool name stands for: baton's own name in any case, or Claude
    Code's name for it (``Glob`` -> ``find``); other names, lower-cased."""
    lowered = name.lower()
    return _claude_names().get(lowered) or _CLAUDE_ALIASES.get(lowered) or lowered


def check_allow_rule(rule: Rule) -> None:
    """Raise :class:`RuleError` for an allow rule too broad to be meant: an MCP rule that does
    not name its server (``mcp__*``; Claude Code skips these too)."""
    if is_mcp_rule(rule) and "*" in rule.tool[len(MCP_PREFIX):].split("__", 1)[0]:
        raise RuleError(f"{rule.text!r} does not name an MCP server (allow rules need mcp__server or "
                        "mcp__server__*)")


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
        wanted = self._matched_parts(parts, every=every)
        if not wanted:
            return []
        candidates = [r for r in self.rules if not (every and parts.redirects and ">" not in (r.pattern or ""))]
        found: list[Rule] = []
        for part in wanted:
            rule = next(r for r in candidates if r.pattern is not None and bash_part_matches(r.pattern, part))
            if rule not in found:
                found.append(rule)
        return found

    def _matched_parts(self, parts: CommandParts, *, every: bool) -> tuple[str, ...]:
        """The simple commands some rule matches: all of them or none when ``every``."""
        regex = self.redirecting if every and parts.redirects else self.combined
        if regex is None or not parts.parts:
            return ()
        if every:
            return tuple(parts.parts) if all(regex.fullmatch(part) for part in parts.parts) else ()
        return tuple(part for part in parts.parts if regex.fullmatch(part))

    def match_path(self, path: str | None, project_dir: str, home: str | None) -> Rule | None:
        """The first rule matching the real ``path`` (a bare tool rule matches any call)."""
        if self.catch_all is not None:
            return self.catch_all
        if path is None or self.combined is None or self.combined.fullmatch(path) is None:
            return None
        return next(r for r in self.rules if r.pattern is not None and path_matches(r.pattern, path, project_dir, home))


def domain_matches(pattern: str, host: str) -> bool:
    """Whether a web rule's ``domain:...`` pattern covers ``host`` (both compared normalised)."""
    from baton.tools.web_address import normalize_host

    if not pattern.lower().startswith(DOMAIN_PREFIX):
        return False
    wanted = pattern[len(DOMAIN_PREFIX):].strip()
    wild = wanted.startswith("*.")
    wanted = normalize_host(wanted[2:] if wild else wanted)
    if not wanted:
        return False
    return host.endswith("." + wanted) if wild else host == wanted


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
        kinds: tuple[tuple[RuleKind, Iterable[str]], ...] = (("allow", allow), ("deny", deny), ("ask", ask))
        for kind, texts in kinds:
            for text in texts:
                try:
                    rule = parse_rule(text)
                    if kind == "allow":
                        check_allow_rule(rule)
                    out.add(kind, rule)
                except RuleError as exc:
                    out.problems.append(f"permissions.{kind}: {exc}")
        return out

    def for_mcp(self, kind: RuleKind, identity: McpIdentity) -> list[Rule]:
        """The ``kind`` MCP rules covering a call of ``identity``'s tool."""
        return [rule for rule in getattr(self, kind) if is_mcp_rule(rule) and mcp_rule_matches(rule, identity)]

    def add(self, kind: RuleKind, rule: Rule) -> None:
        """Add ``rule`` to the ``kind`` list."""
        getattr(self, kind).append(rule)
        self._by_tool.clear()
        self._matchers.clear()

    def for_tool(self, kind: RuleKind, tool: str) -> list[Rule]:
        """The ``kind`` rules that name ``tool`` (``edit`` rules count for every tool that changes
        files, ``write`` included)."""
        key = (kind, tool)
        cached = self._by_tool.get(key)
        if cached is None:
            names = {tool, EDIT_RULE} if tool_type(tool).changes_files() else {tool}
            cached = [rule for rule in getattr(self, kind) if rule.tool in names]
            self._by_tool[key] = cached
        return cached

    def for_host(self, kind: RuleKind, tool: str, host: str) -> Rule | None:
        """The first ``kind`` rule of ``tool`` covering ``host`` (a bare tool rule covers every host)."""
        for rule in self.for_tool(kind, tool):
            if rule.pattern is None or (host and domain_matches(rule.pattern, host)):
                return rule
        return None

    def names_host(self, tool: str, host: str) -> bool:
        """Whether an allow rule of ``tool`` names ``host`` exactly (no wildcard, no bare rule)."""
        return bool(host) and any(
            rule.pattern is not None and "*" not in rule.pattern and domain_matches(rule.pattern, host)
            for rule in self.for_tool("allow", tool)
        )

    def matcher(self, kind: RuleKind, tool: str, project_dir: str, home: str | None = None) -> Matcher:
        """The compiled ``kind`` rules for ``tool`` (cached until a rule is added)."""
        key = (kind, tool, project_dir, home)
        found = self._matchers.get(key)
        if found is None:
            found = Matcher.build(self.for_tool(kind, tool), bash=tool == BASH_RULE, project_dir=project_dir, home=home)
            self._matchers[key] = found
        return found

    def __len__(self) -> int:
        return len(self.allow) + len(self.deny) + len(self.ask)

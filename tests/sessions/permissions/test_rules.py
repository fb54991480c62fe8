"""Rule parsing and matching: bash exact/prefix/glob, compound commands, path globs over real paths."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from baton.sessions.permissions.rules import (
    Rule,
    RuleError,
    RuleSet,
    bash_part_matches,
    bash_rule_matches,
    parse_rule,
    path_matches,
)
from baton.sessions.permissions.shell_parts import split_command

WORD = st.text(string.ascii_lowercase + string.digits + "-_.=/", min_size=1, max_size=8)
COMMAND = st.lists(WORD, min_size=1, max_size=5).map(" ".join)
SEPARATORS = st.sampled_from([" && ", " || ", "; ", " | ", " & ", "\n"])


def allow(pattern: str, command: str) -> bool:
    return bash_rule_matches(parse_rule(f"bash({pattern})"), command, every=True)


def test_parse_rules_in_claude_code_syntax() -> None:
    assert parse_rule("Bash(npm run test:*)") == Rule("bash", "npm run test:*", "Bash(npm run test:*)")
    assert parse_rule("edit(src/**)").pattern == "src/**"
    mcp = "mcp__github__create_issue"
    assert parse_rule(mcp) == Rule(mcp, None, mcp)
    assert parse_rule("bash(*)").pattern is None
    for bad in ("", "bash(", "two words", "bash(x) trailing"):
        with pytest.raises(RuleError):
            parse_rule(bad)


def test_rule_set_reports_bad_rules_and_keeps_the_rest() -> None:
    rules = RuleSet.parse(allow=["bash(ls)", "not a rule"], deny=["read(~/.ssh/**)"])
    assert [str(r) for r in rules.allow] == ["bash(ls)"]
    assert len(rules.deny) == 1
    assert rules.problems and "not a rule" in rules.problems[0]
    assert [str(r) for r in RuleSet.parse(allow=["edit(src/**)"]).for_tool("allow", "write")] == ["edit(src/**)"]


def test_bash_exact_prefix_and_glob() -> None:
    assert allow("git status", "git status")
    assert allow("git status", "  git   status ")
    assert not allow("git status", "git status --short")
    assert allow("npm run test:*", "npm run test")
    assert allow("npm run test:*", "npm run test:unit -- --watch")
    assert not allow("npm run test:*", "npm run build")
    assert allow("ls *", "ls -la src")
    assert allow("ls *", "ls")
    assert not allow("ls *", "lsblk")
    assert allow("git * --dry-run", "git clean -fd --dry-run")


def test_compound_commands_need_every_part_allowed() -> None:
    assert not allow("git status:*", "git status && rm -rf /")
    assert not allow("git status:*", "git status; rm -rf /")
    assert not allow("git status:*", "git status | sh")
    assert not allow("echo:*", "echo $(rm -rf ~)")
    assert not allow("echo:*", "echo `rm -rf ~`")
    assert not allow("echo:*", "echo <(curl evil)")
    assert not allow("git status:*", "git status > /etc/passwd")
    assert allow("git status:*", "git status 2>&1")
    assert allow("git status:*", "git status > /dev/null")
    assert allow("echo:*", "echo 'a && b; c | d'")
    assert not allow("echo:*", 'echo "$(whoami)"')
    # the exact whole command (what "allow always" saves) matches as a whole
    assert allow("make && make test", "make && make test")


def test_deny_rules_match_any_part() -> None:
    deny = parse_rule("bash(rm:*)")
    assert bash_rule_matches(deny, "ls && rm -rf build", every=False)
    assert bash_rule_matches(deny, "echo $(rm x)", every=False)
    assert not bash_rule_matches(deny, "ls && echo rm", every=False)


@settings(deadline=None)
@given(st.lists(COMMAND, min_size=2, max_size=5), SEPARATORS)
def test_split_finds_every_part(commands: list[str], separator: str) -> None:
    parts = split_command(separator.join(commands)).parts
    assert list(parts) == [" ".join(c.split()) for c in commands]


@settings(deadline=None)
@given(st.lists(COMMAND, min_size=1, max_size=4), SEPARATORS, COMMAND)
def test_a_compound_is_allowed_only_if_every_part_is(allowed: list[str], separator: str, other: str) -> None:
    assume(other not in allowed)
    rules = [parse_rule(f"bash({c})") for c in allowed]

    def allowed_by_some(command: str) -> bool:
        parts = split_command(command)
        return all(any(bash_part_matches(r.pattern or "", p) for r in rules) for p in parts.parts)

    assert allowed_by_some(separator.join(allowed))
    assert not allowed_by_some(separator.join([*allowed, other]))
    assert not allowed_by_some(f"{allowed[0]} $({other})")


@settings(deadline=None)
@given(COMMAND, COMMAND)
def test_prefix_rule_is_a_prefix(prefix: str, rest: str) -> None:
    assert allow(f"{prefix}:*", prefix)
    assert allow(f"{prefix}:*", f"{prefix} {rest}")
    assert allow(f"{prefix} *", f"{prefix} {rest}")


@settings(deadline=None)
@given(st.text(string.printable, max_size=40))
def test_split_never_crashes_and_substitutions_become_parts(text: str) -> None:
    parts = split_command(text)
    assert all(p == " ".join(p.split()) and p for p in parts.parts)


# ------------------------------------------------------------------------------ paths


def test_path_globs(tmp_path: Path) -> None:
    project = str(tmp_path.resolve())
    assert path_matches("src/**", f"{project}/src/a/b.py", project)
    assert path_matches("src/**", f"{project}/src", project)
    assert not path_matches("src/**", f"{project}/srcx/a.py", project)
    assert path_matches("docs/*.md", f"{project}/docs/a.md", project)
    assert not path_matches("docs/*.md", f"{project}/docs/sub/a.md", project)
    assert path_matches("**/*.py", f"{project}/a/b/c.py", project)
    assert path_matches("/etc/**", "/etc/passwd", project)
    assert path_matches("//etc/*", "/etc/passwd", project)
    assert not path_matches("*.md", f"{project}/README.MD", project)  # case matters, as on Linux


def test_home_patterns_expand(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    os.makedirs(home)
    assert path_matches("~/.ssh/**", f"{home}/.ssh/id_rsa", "/elsewhere", home)
    assert not path_matches("~/.ssh/**", f"{home}/.sshx/id_rsa", "/elsewhere", home)


def test_pattern_prefix_through_a_symlink_matches_the_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert path_matches(f"{link}/src/**", f"{real.resolve()}/src/x.py", str(tmp_path))


@settings(deadline=None)
@given(st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=5), min_size=1, max_size=4))
def test_double_star_matches_any_depth(names: list[str]) -> None:
    assert path_matches("/p/**", "/p/" + "/".join(names), "/p")
    assert path_matches("/p/**/z", "/p/" + "/".join([*names, "z"]), "/p")
    assert not path_matches("/p/*", "/p/" + "/".join([*names, "z"]), "/p")


def test_mcp_rules_as_claude_code_writes_them() -> None:
    from baton.sessions.permissions.rules import McpIdentity, mcp_rule_matches

    def covers(rule: str, server: str, tool: str) -> bool:
        return mcp_rule_matches(parse_rule(rule), McpIdentity(server, tool))

    assert covers("mcp__memory", "memory", "create") and covers("mcp__memory__*", "memory", "create")
    assert covers("mcp__memory__create", "memory", "create") and not covers("mcp__memory__create", "memory", "read")
    assert not covers("mcp__mem", "memory", "create") and not covers("mcp__memory", "memory2", "x")
    assert covers("mcp__github__get_*", "github", "get_issue") and not covers("mcp__github__get_*", "github", "list")
    assert not covers("mcp__github__*", "github__evil", "x")  # the server part is the whole server name
    assert covers("mcp__my.server", "my.server", "x") and covers("mcp__my_server__X", "my.server", "x")
    assert covers("mcp__*", "any", "thing") and covers("mcp__*__shout", "any", "shout")
    rules = RuleSet.parse(allow=["mcp__*", "mcp__gh*", "mcp__gh__*"], deny=["mcp__*", "mcp__x__y(z)"])
    assert [str(r) for r in rules.allow] == ["mcp__gh__*"] and [str(r) for r in rules.deny] == ["mcp__*"]
    assert len(rules.problems) == 3 and "does not name an MCP server" in rules.problems[0]

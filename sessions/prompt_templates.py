"""Prompt templates (custom slash commands): ``/name args`` expands a Markdown file.

Found in the project's ``.baton/prompts/`` and ``.claude/commands/``, then ``$BATON_HOME/prompts/``
and ``~/.claude/commands/`` (first of a name wins). The file's body is the prompt, with ``$1``..
``$9`` (shell-like split arguments), ``$@`` (all of them, space separated), ``${@:N}`` /
``${@:N:L}`` (a slice, from 1) and ``$ARGUMENTS`` (the argument text as typed). Front matter
``description`` and ``argument-hint`` show in ``/`` completion. Built-in command names win.
A project's template is read only as :mod:`baton.tools.project_files` allows (a symlink out of the
project is refused, as is a FIFO or device: one warning each).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from baton.providers.paths import baton_home
from baton.sessions.frontmatter import read_front_matter_file
from baton.sessions.template_dirs import project_template_dirs
from baton.tools.project_files import ProjectFiles

MAX_TEMPLATE_BYTES = 256 * 1024
MAX_NAMESPACE_DEPTH = 4
"""How deep subfolders of a commands folder name namespaces (``a:b:c:d:name``)."""

BUILTIN_COMMANDS = frozenset(
    {
        "model", "thinking", "compact", "new", "resume", "fork", "clone", "tree", "session", "export", "copy",
        "name", "hotkeys", "quit", "exit", "help", "clear", "mcp", "skill", "settings", "login",
        "logout", "permissions", "hooks", "reload", "changelog", "share", "undo", "rewind", "context", "theme",
        "approval", "agents", "plan", "tools", "init", "ps",
    }
)
"""Names a template may not take: the interactive app's own commands (checked by a test)."""

_NAME = re.compile(r"^[A-Za-z][\w-]*$")
_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS\b|@|[1-9]|\{@:(\d+)(?::(\d+))?\})")


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One template file."""

    name: str
    description: str
    argument_hint: str
    body: str
    path: Path
    root: Path | None = None
    """The folder it was discovered in."""
    allowed_tools: tuple[str, ...] = ()
    """Its ``allowed-tools`` front matter: the rules its ``!`cmd` `` lines must match."""


_BANG = re.compile(r"!`([^`\n]+)`")


def bang_commands(body: str) -> list[str]:
    """The commands a command file runs before its prompt is sent (Claude Code's ``!`cmd` ``)."""
    return [match.group(1).strip() for match in _BANG.finditer(body) if match.group(1).strip()]


def template_dirs(cwd: Path, home: Path | None = None) -> list[Path]:
    """Where templates are looked for, in precedence order."""
    user_home = home or Path.home()
    return [
        *project_template_dirs(cwd),
        baton_home() / "prompts",
        user_home / ".claude" / "commands",
    ]


def load_templates(
    dirs: Iterable[Path], warnings: list[str], files: ProjectFiles | None = None
) -> list[PromptTemplate]:
    """Every ``*.md`` template in ``dirs``, a subfolder naming a namespace as in Claude Code
    (``frontend/component.md`` is ``/frontend:component``); problems appended to ``warnings``.
    ``files``: the read policy for project files. A symlinked subfolder is not entered."""
    found: dict[str, PromptTemplate] = {}
    for root in dirs:
        for path, name in _template_files(root):
            template = _read(path, name, root, warnings, files)
            if template is None:
                continue
            if template.name in BUILTIN_COMMANDS or template.name.split(":", 1)[0] == "skill":
                warnings.append(f"prompt template {path} ignored: /{template.name} is a built-in command")
            elif template.name in found:
                warnings.append(
                    f"prompt template {path} ignored: /{template.name} already defined in {found[template.name].path}"
                )
            else:
                found[template.name] = template
    return list(found.values())


def _template_files(root: Path, prefix: str = "", depth: int = 0) -> list[tuple[Path, str]]:
    """``(path, command name)`` of every ``.md`` file under ``root`` (subfolders as namespaces)."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    out: list[tuple[Path, str]] = []
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if depth < MAX_NAMESPACE_DEPTH and not entry.name.startswith("."):
                out += _template_files(path, f"{prefix}{entry.name}:", depth + 1)
        elif path.suffix == ".md":
            out.append((path, prefix + path.stem))
    return out


def _read(path: Path, name: str, root: Path, warnings: list[str], files: ProjectFiles | None) -> PromptTemplate | None:
    if not all(_NAME.match(part) for part in name.split(":")):
        warnings.append(f"prompt template {path} ignored: '{name}' is not a valid command name")
        return None
    doc = read_front_matter_file(path, MAX_TEMPLATE_BYTES, "prompt template", warnings, files)
    if doc is None:
        return None
    description = doc.meta.get("description")
    if not isinstance(description, str) or not description.strip():
        first = next((line.strip() for line in doc.body.splitlines() if line.strip()), "")
        description = first[:80]
    hint = doc.meta.get("argument-hint", doc.meta.get("argument_hint", ""))
    hint_text = " ".join(str(h) for h in hint) if isinstance(hint, list) else str(hint or "")
    allowed = doc.meta.get("allowed-tools", doc.meta.get("allowed_tools", ""))
    allowed_list = [str(a) for a in allowed] if isinstance(allowed, list) else _split_tools(str(allowed or ""))
    return PromptTemplate(name.lower(), " ".join(description.split()), hint_text, doc.body, path, root,
                          tuple(allowed_list))


def _split_tools(text: str) -> list[str]:
    """``Bash(git add:*), Bash(git status:*)`` as its rules (commas inside parentheses kept)."""
    out: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    out.append(current.strip())
    return [rule for rule in out if rule]


def split_arguments(args: str) -> list[str]:
    """Shell-like split (quotes group words); unbalanced quotes fall back to whitespace."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand_template(template: PromptTemplate, args: str) -> str:
    """``template``'s body with its placeholders replaced by ``args``."""
    words = split_arguments(args)

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$ARGUMENTS":
            return args
        if token == "$@":
            return " ".join(words)
        if token.startswith("${"):
            start = max(int(match.group(1)), 1) - 1
            length = match.group(2)
            chosen = words[start:] if length is None else words[start : start + int(length)]
            return " ".join(chosen)
        index = int(token[1:]) - 1
        return words[index] if index < len(words) else ""

    body = template.body
    if args.strip() and _PLACEHOLDER.search(body) is None:  # Claude Code: arguments are never dropped
        return f"{body.strip()}\n\nARGUMENTS: {args.strip()}"
    return _PLACEHOLDER.sub(replace, body).strip()

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

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from baton.providers.paths import baton_home
from baton.sessions.frontmatter import read_front_matter_file
from baton.tools.project_files import ProjectFiles

MAX_TEMPLATE_BYTES = 256 * 1024

BUILTIN_COMMANDS = frozenset(
    {
        "model", "thinking", "compact", "new", "resume", "fork", "tree", "session", "export", "copy",
        "name", "hotkeys", "quit", "exit", "help", "clear", "mcp", "skill", "settings", "login",
        "logout", "permissions", "hooks", "reload", "changelog", "share", "undo", "rewind", "context", "theme",
        "approval", "ps",
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


def template_dirs(cwd: Path, home: Path | None = None) -> list[Path]:
    """Where templates are looked for, in precedence order."""
    user_home = home or Path.home()
    return [
        cwd / ".baton" / "prompts",
        cwd / ".claude" / "commands",
        baton_home() / "prompts",
        user_home / ".claude" / "commands",
    ]


def load_templates(
    dirs: Iterable[Path], warnings: list[str], files: ProjectFiles | None = None
) -> list[PromptTemplate]:
    """Every ``*.md`` template directly in ``dirs``; problems appended to ``warnings``.
    ``files``: the read policy for project files."""
    found: dict[str, PromptTemplate] = {}
    for root in dirs:
        try:
            paths = sorted(p for p in root.iterdir() if p.suffix == ".md" and not p.is_dir())
        except OSError:
            continue
        for path in paths:
            template = _read(path, warnings, files)
            if template is None:
                continue
            if template.name in BUILTIN_COMMANDS:
                warnings.append(f"prompt template {path} ignored: /{template.name} is a built-in command")
            elif template.name in found:
                warnings.append(
                    f"prompt template {path} ignored: /{template.name} already defined in {found[template.name].path}"
                )
            else:
                found[template.name] = template
    return list(found.values())


def _read(path: Path, warnings: list[str], files: ProjectFiles | None) -> PromptTemplate | None:
    name = path.stem
    if not _NAME.match(name):
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
    return PromptTemplate(name.lower(), " ".join(description.split()), hint_text, doc.body, path)


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

    return _PLACEHOLDER.sub(replace, template.body).strip()

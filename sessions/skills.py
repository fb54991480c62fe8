"""Agent Skills (agentskills.io): folders holding a ``SKILL.md`` with ``name`` and ``description``.

Skills are found in the project's ``.baton/skills/``, ``.agents/skills/`` and ``.claude/skills/``,
then in ``$BATON_HOME/skills/``, ``~/.agents/skills/`` and ``~/.claude/skills/`` (the first skill
of a name wins; a later one is a warning). The system prompt lists each skill's name, description
and path, and the model reads the file when a task matches (progressive disclosure);
``/skill:<name> [args]`` puts a skill into the prompt explicitly. Bad files are one warning each.
A project's skill file is read only as :mod:`baton.tools.project_files` allows (a ``SKILL.md`` or
skill folder symlinked out of the project is refused, as is a FIFO or device).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from baton.providers.errors import BatonError
from baton.providers.paths import baton_home
from baton.sessions.frontmatter import FrontMatterError, parse_front_matter, read_front_matter_file
from baton.tools.project_files import ProjectFiles, read_bounded

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024
MAX_DESCRIPTION_CHARS = 1024


@dataclass(frozen=True, slots=True)
class Skill:
    """One discovered skill."""

    name: str
    description: str
    path: Path
    """The ``SKILL.md`` file."""
    meta: dict[str, object] = field(default_factory=dict)
    """Every front matter field (optional ones such as ``license``, ``allowed-tools`` kept)."""

    @property
    def base_dir(self) -> Path:
        """The skill's folder (its scripts and references are relative to it)."""
        return self.path.parent


def skill_dirs(cwd: Path, home: Path | None = None) -> list[Path]:
    """Where skills are looked for, in precedence order."""
    user_home = home or Path.home()
    return [
        cwd / ".baton" / "skills",
        cwd / ".agents" / "skills",
        cwd / ".claude" / "skills",
        baton_home() / "skills",
        user_home / ".agents" / "skills",
        user_home / ".claude" / "skills",
    ]


def load_skills(dirs: Iterable[Path], warnings: list[str], files: ProjectFiles | None = None) -> list[Skill]:
    """Every valid skill under ``dirs`` (each a folder of skill folders); problems are appended
    to ``warnings``, one line each. ``files``: the read policy for project files."""
    found: dict[str, Skill] = {}
    seen_files: set[Path] = set()
    for root in dirs:
        for folder in _children(root):
            path = folder / SKILL_FILE
            try:
                real = path.resolve()
            except OSError:
                continue
            if real in seen_files or not os.path.lexists(path) or path.is_dir():
                continue
            seen_files.add(real)
            skill = _read_skill(path, warnings, files)
            if skill is None:
                continue
            if skill.name in found:
                warnings.append(f"skill '{skill.name}' in {path} ignored: already defined in {found[skill.name].path}")
                continue
            found[skill.name] = skill
    return list(found.values())


def _children(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _read_skill(path: Path, warnings: list[str], files: ProjectFiles | None) -> Skill | None:
    doc = read_front_matter_file(path, MAX_SKILL_BYTES, "skill", warnings, files)
    if doc is None:
        return None
    name = doc.meta.get("name")
    description = doc.meta.get("description")
    if name is None:
        name = path.parent.name
    if not isinstance(name, str | int) or not str(name).strip():
        warnings.append(f"skill {path} ignored: 'name' must be a non-empty string")
        return None
    if not isinstance(description, str) or not description.strip():
        warnings.append(f"skill {path} ignored: front matter needs a 'description'")
        return None
    name = str(name).strip()
    if any(c.isspace() for c in name):
        warnings.append(f"skill {path} ignored: name '{name}' contains spaces")
        return None
    return Skill(name, " ".join(description.split())[:MAX_DESCRIPTION_CHARS], path, dict(doc.meta))


def skills_prompt_section(skills: Iterable[Skill]) -> str:
    """The system prompt's list of skills (empty without skills)."""
    items = list(skills)
    if not items:
        return ""
    lines = [
        "The following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill's directory.",
        "",
        "<available_skills>",
    ]
    for skill in items:
        lines += [
            "  <skill>",
            f"    <name>{escape(skill.name)}</name>",
            f"    <description>{escape(skill.description)}</description>",
            f"    <location>{escape(str(skill.path))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill(skill: Skill, args: str, files: ProjectFiles | None = None) -> str:
    """The prompt for ``/skill:<name> args``: the skill's instructions, then the arguments (the
    file read again, under the same policy as when it was found)."""
    try:
        text = read_bounded(skill.path, MAX_SKILL_BYTES, files).decode("utf-8")
        body = parse_front_matter(text).body.strip()
    except (OSError, UnicodeDecodeError, FrontMatterError) as exc:
        raise SkillError(f"cannot read skill '{skill.name}' ({skill.path}): {exc}") from exc
    block = (
        f'<skill name="{escape(skill.name)}" location="{escape(str(skill.path))}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args.strip() else block


class SkillError(BatonError):
    """A skill named in ``/skill:<name>`` is unknown or unreadable."""

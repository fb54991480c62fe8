"""The prompt's own slash commands: prompt templates and ``/skill:<name>``.

They expand inside :meth:`CodingSession.prompt`, so every mode (the app, ``-p``, JSON, RPC, ACP)
gets the same behaviour; :meth:`PromptCommands.commands` lists them for completion.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from baton.sessions.errors import PromptRefusedError
from baton.sessions.prompt_templates import PromptTemplate, expand_template, load_templates, template_dirs
from baton.sessions.skills import Skill, SkillError, expand_skill, load_skills, skill_dirs
from baton.tools.project_files import ProjectFiles

logger = logging.getLogger(__name__)

INIT_COMMAND = "init"
_INIT_PROMPT = """Survey this project and write an AGENTS.md file at its root for coding agents that \
will work on it later (if an AGENTS.md exists, improve it instead; keep what is still true).

Look before you write: list the top-level files and folders, read the README, the build and \
package files (pyproject.toml, package.json, Makefile, Cargo.toml, go.mod, ...), the CI \
configuration, any CLAUDE.md or .cursor/.github instructions, and a few representative source \
and test files.

AGENTS.md should be short (well under 200 lines) and specific to this project:
- what the project is, in two or three sentences;
- how to set it up, build, lint, type-check and run the tests (the exact commands, including how \
to run a single test);
- the layout: the main folders and what lives where;
- the conventions a newcomer would get wrong (style, naming, error handling, commit messages);
- anything that must not be done (generated files, secrets, slow or destructive commands).

Do not invent commands you have not seen in the project's files; say "unknown" instead."""


def init_prompt(focus: str) -> str:
    """The prompt ``/init`` sends (``focus``: what the user asked it to pay attention to)."""
    return _INIT_PROMPT + (f"\n\nPay particular attention to: {focus.strip()}" if focus.strip() else "")

_INVOCATION = re.compile(r"^/((?:skill:)?[A-Za-z][\w.-]*(?::[A-Za-z][\w.-]*)*)(?:[ \t]+(.*))?$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class PromptCommand:
    """A command for ``/`` completion: ``name`` (without the slash), description, argument hint,
    and where it comes from (pi's ``sourceInfo``)."""

    name: str
    description: str
    argument_hint: str = ""
    path: Path | None = None
    """The file it was read from."""
    base_dir: Path | None = None
    """The folder it was discovered in (``.claude/commands``, a skill's folder)."""
    scope: str = "project"
    """``project`` or ``user`` (found in the user's own folders)."""


class PromptCommands:
    """The skills and templates of one working directory."""

    def __init__(
        self,
        skills: list[Skill],
        templates: list[PromptTemplate],
        warnings: list[str],
        files: ProjectFiles | None = None,
    ) -> None:
        self.skills = skills
        self.templates = {t.name: t for t in templates}
        self.warnings = warnings
        """One line per bad, refused or shadowed file."""
        self.files = files
        """The read policy the files were found under (a skill is read again under it)."""

    @classmethod
    def load(cls, cwd: Path, *, home: Path | None = None) -> PromptCommands:
        """Discover the skills and templates for ``cwd`` (never raises)."""
        warnings: list[str] = []
        files = ProjectFiles.for_dir(cwd, home=home)
        skills = load_skills(skill_dirs(cwd, home), warnings, files)
        templates = load_templates(template_dirs(cwd, home), warnings, files)
        return cls(skills, templates, warnings, files)

    def commands(self) -> list[PromptCommand]:
        """Every template and skill as a ``/`` command (and ``/init``)."""
        out = [PromptCommand(INIT_COMMAND, "Survey the project and write an AGENTS.md for it", "[focus]", scope="user")]
        out += [PromptCommand(t.name, t.description, t.argument_hint, t.path, t.root, self._scope(t.path))
                for t in self.templates.values()]
        out += [PromptCommand(f"skill:{s.name}", s.description, "[args]", s.path, s.base_dir, self._scope(s.path))
                for s in self.skills]
        return out

    def _scope(self, path: Path) -> str:
        return "user" if self.files is not None and self.files.is_users(path) else "project"

    def expand(self, text: str) -> str:
        """``text`` with a leading template or ``/skill:`` invocation expanded (else unchanged).

        Raises :class:`PromptRefusedError` for ``/skill:<name>`` naming no (readable) skill."""
        match = _INVOCATION.match(text.strip())
        if match is None:
            return text
        name, args = match.group(1), match.group(2) or ""
        if name == INIT_COMMAND:
            return init_prompt(args)
        if name.startswith("skill:"):
            wanted = name.removeprefix("skill:")
            skill = next((s for s in self.skills if s.name == wanted), None)
            if skill is None:
                known = ", ".join(s.name for s in self.skills) or "none"
                raise PromptRefusedError(f"Unknown skill '{wanted}' (skills: {known})")
            try:
                return expand_skill(skill, args, self.files)
            except SkillError as exc:
                raise PromptRefusedError(str(exc)) from exc
        template = self.templates.get(name.lower())
        return expand_template(template, args) if template is not None else text

    def template_for(self, text: str) -> PromptTemplate | None:
        """The template ``text`` invokes (``None``: none, or a skill)."""
        match = _INVOCATION.match(text.strip())
        if match is None or match.group(1).startswith("skill:"):
            return None
        return self.templates.get(match.group(1).lower())

    def expand_or_keep(self, text: str) -> str:
        """:meth:`expand` for a queued message: one naming an unknown skill is sent as typed (a
        warning in the log) rather than refused, as the run it joins is already going."""
        try:
            return self.expand(text)
        except PromptRefusedError as exc:
            logger.warning("%s; sending the text as typed", exc)
            return text

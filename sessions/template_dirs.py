"""Where a project keeps its prompt templates (command files), apart from the template reader so
that the trust check can see a project has none without importing it."""

from __future__ import annotations

from pathlib import Path


def project_template_dirs(cwd: Path) -> list[Path]:
    """The project's own template folders (the rest of ``prompt_templates.template_dirs`` is the
    user's)."""
    return [cwd / ".baton" / "prompts", cwd / ".claude" / "commands"]

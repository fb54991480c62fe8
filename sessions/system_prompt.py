"""The system prompt: baton's default coding-assistant prompt (after pi's), or a replacement.

Default prompt = role, the enabled tools with one-line descriptions, guidelines that depend on
which tools are enabled, any appended text, the project context files, then the date and time
and the working directory. A custom prompt (``--system-prompt`` or ``SYSTEM.md``) replaces
everything but the appended text, the context files and the date/cwd lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from baton.sessions.context_files import ContextFile
from baton.tools import DEFAULT_TOOL_NAMES, TOOL_MODULES, tool_summary, tool_type

DEFAULT_TOOLS = DEFAULT_TOOL_NAMES


def _guidelines(tools: Sequence[str]) -> list[str]:
    names = set(tools)
    enabled = [tool_type(name) for name in dict.fromkeys(tools)]
    out: list[str] = []
    # grep, find, ls: read-only tools that look at folders
    explorers = any(t.read_only and t.path_parameter is not None and t.path_parameter.target == "folder"
                    for t in enabled)
    if "bash" in names and not explorers:
        out.append("Use bash for file operations like ls, rg, find")
    elif "bash" in names:
        out.append("Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)")
    if {"read", "edit"} <= names:
        out.append("Use read to examine files before editing. You must use this tool instead of cat or sed.")
    for name in TOOL_MODULES:  # each enabled tool's own line, in the registry's order
        guideline = tool_type(name).prompt_guideline if name in names else ""
        if guideline:
            out.append(guideline)
    if any(t.changes_files() for t in enabled):
        out.append(
            "When summarizing your actions, output plain text directly - do NOT use cat or bash to display what you did"
        )
    out.append("Be concise in your responses")
    out.append("Show file paths clearly when working with files")
    return out


def format_context_files(files: Sequence[ContextFile]) -> str:
    """The ``# Project Context`` section (empty when there are no files)."""
    if not files:
        return ""
    parts = ["# Project Context\n\nProject-specific instructions and guidelines:\n\n"]
    parts.extend(f"## {item.path}\n\n{item.content}\n\n" for item in files)
    return "".join(parts)


def format_now(now: datetime | None = None) -> str:
    """e.g. ``Monday, January 5, 2026, 09:30:00 AM CET``."""
    moment = (now or datetime.now()).astimezone()
    return moment.strftime(f"%A, %B {moment.day}, %Y, %I:%M:%S %p %Z").strip()


def build_system_prompt(
    *,
    cwd: Path,
    tools: Sequence[str] = DEFAULT_TOOLS,
    tool_descriptions: dict[str, str] | None = None,
    custom_prompt: str | None = None,
    append: str | None = None,
    context_files: Sequence[ContextFile] = (),
    skills_section: str = "",
    now: datetime | None = None,
) -> str:
    """The system prompt for a session.

    ``tool_descriptions`` gives a description for tools baton has no summary for (their first
    line is used). ``skills_section`` (the available skills) follows the context files, and only
    when the ``read`` tool is there to load them."""
    extra = tool_descriptions or {}
    append_section = f"\n\n{append}" if append else ""
    context = format_context_files(context_files)
    if skills_section and "read" in tools:
        context = (context.rstrip("\n") + "\n\n" + skills_section).lstrip("\n")
    tail = f"\nCurrent date and time: {format_now(now)}\nCurrent working directory: {cwd}"
    if custom_prompt:
        prompt = custom_prompt + append_section
        if context:
            prompt += "\n\n" + context.rstrip("\n")
        return prompt + tail

    lines = []
    for name in tools:
        summary = tool_summary(name) or (extra.get(name) or "").strip().splitlines()[:1]
        text = summary if isinstance(summary, str) else (summary[0] if summary else "Custom tool")
        lines.append(f"- {name}: {text}")
    tools_list = "\n".join(lines) if lines else "(none)"
    guidelines = "\n".join(f"- {g}" for g in _guidelines(tools))
    prompt = (
        "You are an expert coding assistant operating inside baton, a coding agent harness. "
        "You help users by reading files, executing commands, editing code, and writing new files.\n\n"
        f"Available tools:\n{tools_list}\n\n"
        "In addition to the tools above, you may have access to other custom tools depending on the project.\n\n"
        f"Guidelines:\n{guidelines}"
    )
    prompt += append_section
    if context:
        prompt += "\n\n" + context.rstrip("\n")
    return prompt + tail

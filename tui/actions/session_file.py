"""The session file's name and its exports: ``/name`` and ``/export``. RPC: ``set_session_name``,
``export_html``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from baton.providers.json_types import JsonMapping, JsonValue
from baton.tui.actions.action import NO_DATA, AcpCommand, Action, ActionError, NoData, Report, RpcCommand
from baton.tui.actions.fields import optional_text, text_field
from baton.tui.actions.text import home_relative, shorten

if TYPE_CHECKING:
    from baton.sessions import CodingSession


# ---------------------------------------------------------------------------------------------
# /name


@dataclass(frozen=True, slots=True)
class SessionName:
    """The session's name after the action; ``changed``: it was set (else only asked for)."""

    name: str | None
    changed: bool


def _name_from_rpc(session: CodingSession, command: JsonMapping) -> str:
    name = text_field(command, "name").strip()
    if not name:
        raise ActionError("Session name cannot be empty")
    return name


async def name_session(session: CodingSession, name: str) -> SessionName:
    """Give the session a display name (shown by ``/resume``); without one, tell the current name."""
    if not name:
        return SessionName(session.session_name, changed=False)
    session.set_name(name)
    return SessionName(name, changed=True)


def name_report(result: SessionName) -> Report:
    """The new name, or the current one."""
    if result.changed:
        return Report(f"Session named {shorten(result.name or '', 80)!r}.", "success")
    if result.name:
        return Report(f"Session name: {result.name}")
    return Report("This session has no name; /name <name> sets one.")


def _no_data(session: CodingSession, result: SessionName) -> NoData:
    return NO_DATA


NAME: Action[str, SessionName] = Action(
    "name", "/name [name]", "Name this session (shown in /resume)",
    parse=lambda session, text: text.strip(), run=name_session, report=name_report,
    rpc=RpcCommand("set_session_name", parse=_name_from_rpc, reply=_no_data),
    acp=AcpCommand(hint="a name for the session (ACP editors also get it as the session_info_update title)"),
)


# ---------------------------------------------------------------------------------------------
# /export


@dataclass(frozen=True, slots=True)
class ExportTarget:
    """Where to write (``None``: the default file name in the current directory) and whether as
    Markdown (else a self-contained HTML page)."""

    path: Path | None
    markdown: bool = False


def _target_from_text(session: CodingSession, text: str) -> ExportTarget:
    if not text.strip():
        return ExportTarget(None)
    target = Path(text.strip()).expanduser()
    if not target.is_absolute():
        target = Path(session.cwd) / target
    return ExportTarget(target, markdown=target.suffix.lower() in (".md", ".markdown"))


def _target_from_rpc(session: CodingSession, command: JsonMapping) -> ExportTarget:
    out = optional_text(command, "outputPath")
    return ExportTarget(Path(out).expanduser() if out else None)


async def export(session: CodingSession, target: ExportTarget) -> Path:
    """Write the current branch to ``target``; the path written."""
    write = session.export_markdown if target.markdown else session.export_html
    return await asyncio.to_thread(write, target.path)


def _path_reply(session: CodingSession, path: Path) -> JsonValue:
    return {"path": str(path)}


EXPORT: Action[ExportTarget, Path] = Action(
    "export", "/export [file]", "Export the session to HTML (or Markdown for a .md file)",
    parse=_target_from_text, run=export, report=lambda path: Report(f"Exported to {home_relative(path)}", "success"),
    rpc=RpcCommand("export_html", parse=_target_from_rpc, reply=_path_reply),
)

ACTIONS = (NAME, EXPORT)

"""The session's background commands: recorded in the session file, reported to subscribers.

The registry itself (:class:`tools.background.BackgroundProcesses`) belongs to the session and is
shared by its ``bash``, ``bash_output`` and ``kill_shell`` tools. This part:

- records each start and end as a ``background_process`` custom entry (never sent to a model;
  ``state`` ``running``, then ``exited``/``killed``/``failed``, or ``lost`` when the session's
  close ended it), so a session resumed later knows which commands were still running when the
  baton that ran them ended, however it ended: they are lost (a warning says so, and
  ``bash_output`` names them lost);
- tells subscribers of every change (a :class:`BackgroundProcessesEvent`: the footer's count,
  ``/ps``);
- runs the user's own background commands (``!& cmd``: outside the sandbox, like ``!cmd``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.providers.json_types import JsonObject
from baton.sessions.entries import CustomEntry, SessionEntry
from baton.sessions.events import BackgroundProcessesEvent
from baton.tools.background import BackgroundProcess, BackgroundProcesses
from baton.tools.shell import StartedCommand, shell_command, start_command

if TYPE_CHECKING:
    from baton.sessions.coding_session import CodingSession

ENTRY_TYPE = "background_process"


def lost_processes(entries: list[SessionEntry]) -> dict[str, str]:
    """Background commands the entries say started and never ended: id -> command."""
    running: dict[str, str] = {}
    for entry in entries:
        if not isinstance(entry, CustomEntry) or entry.custom_type != ENTRY_TYPE:
            continue
        data = entry.data if isinstance(entry.data, dict) else {}
        shell_id, command = data.get("id"), data.get("command")
        if not isinstance(shell_id, str):
            continue
        if data.get("state") in ("running", "lost"):
            running[shell_id] = command if isinstance(command, str) else ""
        else:
            running.pop(shell_id, None)
    return running


class SessionBackground:
    """See the module docstring."""

    def __init__(self, session: CodingSession, registry: BackgroundProcesses) -> None:
        self._session = session
        self.registry = registry
        registry.on_change = self._changed
        self._read_lost()

    @property
    def lost_notice(self) -> str | None:
        """The warning about commands a previous baton left running (None: there were none)."""
        lost = self.registry.lost
        if not lost:
            return None
        listed = ", ".join(f"{shell_id} ({_short(command)})" for shell_id, command in lost.items())
        return f"Background processes lost when the baton that ran them ended: {listed}"

    def session_file_changed(self) -> None:
        """The session moved to another file or branch (resume, new, fork): read which commands
        that file lost, and say so."""
        self._read_lost()
        notice = self.lost_notice
        if notice:
            self._session.events.notice("background", "warning", notice)

    def _read_lost(self) -> None:
        """The file's lost commands, less those this baton still runs (a fork, or a file left
        with ``/new`` and resumed again: same id, same command)."""
        ours = {p.id: p.command for p in self.registry.all()}
        lost = lost_processes(self._session.store.entries)
        self.registry.lost = {i: c for i, c in lost.items() if ours.get(i) != c}

    async def run_user(self, command: str) -> BackgroundProcess:
        """Start the user's ``!& command`` in the background (outside the sandbox, in the
        session's environment)."""
        session = self._session
        env = session.tool_env.build()
        cwd = str(session.cwd)

        async def launch(argv: list[str], output_fd: int) -> StartedCommand:
            return await start_command(argv, cwd, env, output_fd)

        return await self.registry.start(command, launch, shell_command(command), started_by="user")

    def _changed(self, process: BackgroundProcess) -> None:
        session = self._session
        # Ended by the session's close: lost, as when baton is killed (a resumed session says so).
        state = "lost" if self.registry.closing and not process.running else process.state
        data: JsonObject = {"id": process.id, "command": process.command, "state": state,
                            "startedBy": process.started_by}
        if not process.running:
            data |= {"exitCode": process.exit_code, "signal": process.signal}
        try:
            session.store.append_custom(ENTRY_TYPE, data)
        except Exception:  # a closed or failing store must not stop the process bookkeeping
            pass
        session.events.emit_soon(BackgroundProcessesEvent(
            running=len(self.registry.running()), shell_id=process.id, state=process.state))


def _short(command: str, limit: int = 60) -> str:
    from baton.sessions.setting_trust import one_line

    return one_line(command, limit)  # a command read back from a file: no control sequences

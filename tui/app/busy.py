"""What the app is waiting for, as one value.

The app is busy while a prompt it sent has not come back, while the agent runs (between the
session's ``agent_start`` and ``agent_end`` events), while a ``!command`` runs and while
``/compact`` runs. :class:`Busy` holds all four; the app changes it in one place
(``BatonApp.update_busy``), which keeps the editor's "agent works" mode and the activity line in
step with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Busy:
    """What runs now (see the module docstring)."""

    prompting: bool = False
    """A prompt was sent and ``session.prompt`` has not returned: from the Enter on, so a second
    Enter right after the first queues instead of starting a second prompt."""
    agent_running: bool = False
    """The agent runs (reported by the session's events)."""
    shell_commands: int = 0
    """``!commands`` running (they start at once, even while the agent works)."""
    compacting: bool = False
    """``/compact`` runs."""

    @property
    def idle(self) -> bool:
        """Nothing runs: a prompt starts at once and every command may run."""
        return not (self.prompting or self.agent_running or self.shell_commands or self.compacting)

    @property
    def agent_working(self) -> bool:
        """The agent works on a prompt: the editor says so, and Tab queues a follow-up."""
        return self.prompting or self.agent_running

    @property
    def queues_messages(self) -> bool:
        """A message sent now waits in the session's queue (steering, or a follow-up): while the
        agent works, and while ``/compact`` runs (the session is busy then too; the message goes
        with the next prompt)."""
        return self.agent_working or self.compacting
